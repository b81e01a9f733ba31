package media_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/gen2brain/webp"

	"github.com/edgecms/edgecms/media"
)

// encoded encodes a w x h image in the format named.
func encoded(t testing.TB, format string, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	var b bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&b, img)
	case "jpeg":
		err = jpeg.Encode(&b, img, nil)
	case "gif":
		err = gif.Encode(&b, img, nil)
	case "webp":
		err = webp.Encode(&b, img, webp.Options{Quality: 80})
	default:
		t.Fatalf("no encoder for %s", format)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// isoBox is an ISOBMFF box of type typ around payload.
func isoBox(typ string, payload ...[]byte) []byte {
	body := bytes.Join(payload, nil)
	out := binary.BigEndian.AppendUint32(nil, uint32(8+len(body)))
	return append(append(out, typ...), body...)
}

func u16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }
func u32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// avifFile builds the boxes of an AVIF file as libavif writes them: item 1
// is the primary image, associated with av1C (essential), ispe and, when
// rotation is not 0, irot; item 2, a thumbnail of another size, comes
// first in ipma so that a reader must follow pitm.
func avifFile(w, h uint32, rotation byte) []byte {
	fullBox := []byte{0, 0, 0, 0}
	ftyp := isoBox("ftyp", []byte("avif"), u32(0), []byte("avifmif1miafMA1B"))
	props := [][]byte{
		isoBox("av1C", []byte{0x81, 0x20, 0, 0}),
		isoBox("ispe", fullBox, u32(w), u32(h)),
		isoBox("ispe", fullBox, u32(16), u32(8)),
	}
	primaryAssoc := []byte{0x81, 0x02}
	if rotation != 0 {
		props = append(props, isoBox("irot", []byte{rotation}))
		primaryAssoc = append(primaryAssoc, 0x04)
	}
	ipma := isoBox("ipma", fullBox, u32(2),
		u16(2), []byte{2, 0x81, 0x03},
		u16(1), []byte{byte(len(primaryAssoc))}, primaryAssoc)
	meta := isoBox("meta", fullBox,
		isoBox("hdlr", fullBox, u32(0), []byte("pict"), make([]byte, 13)),
		isoBox("pitm", fullBox, u16(1)),
		isoBox("iprp", isoBox("ipco", props...), ipma))
	return bytes.Join([][]byte{ftyp, meta, isoBox("mdat", make([]byte, 64))}, nil)
}

func TestInspect(t *testing.T) {
	t.Parallel()
	svg := func(root string) []byte {
		return []byte(`<?xml version="1.0"?>` + "\n" + root + `<circle r="4"/></svg>`)
	}
	tests := []struct {
		name string
		body []byte
		want media.Info
		err  string // part of the error; empty when accepted
	}{
		{"png", encoded(t, "png", 40, 30), media.Info{Type: media.PNG, Width: 40, Height: 30}, ""},
		{"jpeg", encoded(t, "jpeg", 7, 5), media.Info{Type: media.JPEG, Width: 7, Height: 5}, ""},
		{"gif", encoded(t, "gif", 3, 9), media.Info{Type: media.GIF, Width: 3, Height: 9}, ""},
		{"webp", encoded(t, "webp", 33, 21), media.Info{Type: media.WebP, Width: 33, Height: 21}, ""},
		{"avif", avifFile(1920, 1080, 0), media.Info{Type: media.AVIF, Width: 1920, Height: 1080}, ""},
		{"avif turned a quarter", avifFile(1920, 1080, 1), media.Info{Type: media.AVIF, Width: 1080, Height: 1920}, ""},
		{"avif turned a half", avifFile(1920, 1080, 2), media.Info{Type: media.AVIF, Width: 1920, Height: 1080}, ""},
		{"svg sized", svg(`<svg xmlns="http://www.w3.org/2000/svg" width="120px" height="80">`), media.Info{Type: media.SVG, Width: 120, Height: 80}, ""},
		{"svg by viewBox", svg(`<svg xmlns="http://www.w3.org/2000/svg" width="100%" viewBox="0 0 24.4 12">`), media.Info{Type: media.SVG, Width: 24, Height: 12}, ""},
		{"svg prefixed", []byte(`<s:svg xmlns:s="http://www.w3.org/2000/svg"><s:g/></s:svg>`), media.Info{Type: media.SVG}, ""},
		{"svg unsized, bom", append([]byte("\xef\xbb\xbf  "), svg(`<svg xmlns="http://www.w3.org/2000/svg">`)...), media.Info{Type: media.SVG}, ""},
		{"pdf", []byte("%PDF-1.7\n%âãÏÓ\n1 0 obj\n<<>>\nendobj\n%%EOF\n"), media.Info{Type: media.PDF}, ""},

		{"text", []byte("hello, I am not a picture"), media.Info{}, "not an accepted type"},
		{"html", []byte("<html><script>alert(1)</script></html>"), media.Info{}, "not an accepted type"},
		{"truncated png", encoded(t, "png", 40, 30)[:20], media.Info{}, "does not decode"},
		{"truncated webp", encoded(t, "webp", 40, 30)[:14], media.Info{}, "does not decode"},
		{"avif without meta", isoBox("ftyp", []byte("avif"), u32(0), []byte("avifmif1")), media.Info{}, "does not decode"},
		{"avif with a box past its end", append(avifFile(10, 10, 0)[:40], 0xff, 0xff), media.Info{}, "does not decode"},
		{"svg without namespace", svg(`<svg width="10" height="10">`), media.Info{}, "root element"},
		{"xml that is no svg", []byte(`<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><body/></html>`), media.Info{}, "root element"},
		{"svg not well-formed", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><g></svg>`), media.Info{}, "XML"},
		{"svg with an external entity", []byte(`<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg xmlns="http://www.w3.org/2000/svg">&x;</svg>`), media.Info{}, "XML"},
		{"png too wide", pngHeader(20001, 10), media.Info{}, "each side must be 1 to 20000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := media.Inspect(bytes.NewReader(tc.body), int64(len(tc.body)))
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("Inspect = %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("Inspect = %+v, %v; want an error with %q", got, err, tc.err)
			case tc.err == "" && got != tc.want:
				t.Errorf("Inspect = %+v, want %+v", got, tc.want)
			}
		})
	}
	if _, err := media.Inspect(bytes.NewReader([]byte("plain")), 5); !errors.Is(err, media.ErrUnknownType) {
		t.Errorf("Inspect(plain) = %v, want ErrUnknownType", err)
	}
}

// pngHeader is the signature and IHDR chunk of a w x h PNG, which is all
// DecodeConfig reads.
func pngHeader(w, h uint32) []byte {
	ihdr := append(append(u32(w), u32(h)...), 8, 2, 0, 0, 0)
	typed := append([]byte("IHDR"), ihdr...)
	chunk := append(append(u32(13), typed...), u32(crc32.ChecksumIEEE(typed))...)
	return append([]byte("\x89PNG\r\n\x1a\n"), chunk...)
}

func TestNamesAndKeys(t *testing.T) {
	t.Parallel()
	hash := strings.Repeat("ab", 32)
	if got := media.AssetKey("Acme", media.Name(hash, media.WebP)); got != "acme/assets/"+hash+".webp" {
		t.Errorf("AssetKey = %s", got)
	}
	for _, c := range []struct {
		key string
		ok  bool
	}{
		{"acme/assets/" + hash + ".png", true},
		{"acme/assets/" + hash + ".pdf", true},
		{"acme/assets/" + hash + ".exe", false},
		{"acme/assets/" + strings.ToUpper(hash) + ".png", false},
		{"acme/assets/" + hash[:62] + ".png", false},
		{"acme/assets/v/" + hash + ".png", false},
		{"Acme/assets/" + hash + ".png", false},
		{"-acme/assets/" + hash + ".png", false},
		{"acme/fetch/" + hash + ".png", false},
	} {
		if _, _, _, ok := media.ParseKey(c.key); ok != c.ok {
			t.Errorf("ParseKey(%s) ok = %v, want %v", c.key, ok, c.ok)
		}
	}
	u, err := media.ParsePublicURL("https://cdn.example.com/cms/")
	if err != nil || u.URL("acme/assets/"+hash+".png") != "https://cdn.example.com/cms/acme/assets/"+hash+".png" {
		t.Errorf("ParsePublicURL = %q, %v", u, err)
	}
	if key, ok := u.Key("https://cdn.example.com/cms/acme/assets/" + hash + ".png"); !ok || key != "acme/assets/"+hash+".png" {
		t.Errorf("Key = %q, %v", key, ok)
	}
	for _, bad := range []string{"", "cdn.example.com", "ftp://x", "https://", "https://u:p@x", "https://x/?a=1", "https://x/#f"} {
		if _, err := media.ParsePublicURL(bad); err == nil {
			t.Errorf("ParsePublicURL(%q) accepted", bad)
		}
	}
}

func TestHeaders(t *testing.T) {
	t.Parallel()
	has := func(h [][2]string, name, value string) bool {
		for _, kv := range h {
			if kv[0] == name && kv[1] == value {
				return true
			}
		}
		return false
	}
	svg := media.Headers(media.SVG)
	if !has(svg, "Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'") || !has(svg, "X-Content-Type-Options", "nosniff") {
		t.Errorf("SVG headers = %v", svg)
	}
	if pdf := media.Headers(media.PDF); !has(pdf, "Content-Disposition", "attachment") {
		t.Errorf("PDF headers = %v", pdf)
	}
	if png := media.Headers(media.PNG); len(png) != 1 || !has(png, "X-Content-Type-Options", "nosniff") {
		t.Errorf("PNG headers = %v", png)
	}
}

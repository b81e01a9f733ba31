package media

import (
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"strconv"
	"strings"

	"golang.org/x/image/webp"
)

// MaxSide bounds the width and the height of an image asset, in pixels.
const MaxSide = 20000

// SniffLen is how many leading bytes Sniff needs (fewer for a shorter
// file).
const SniffLen = 512

// Sniff tells the type of a file from its first bytes (at least SniffLen,
// or the whole file), so that an upload of another type is refused before
// it is read further. The type is taken from the content, never from a
// name or a header. Inspect confirms it.
func Sniff(head []byte) (Type, bool) {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return PNG, true
	case bytes.HasPrefix(head, []byte("\xff\xd8\xff")):
		return JPEG, true
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return GIF, true
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return WebP, true
	case isAVIF(head):
		return AVIF, true
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return PDF, true
	case looksLikeXML(head):
		return SVG, true
	}
	return Type{}, false
}

// isAVIF reports whether head starts with an ISOBMFF ftyp box naming the
// AVIF brands (avif for a still image, avis for a sequence).
func isAVIF(head []byte) bool {
	if len(head) < 16 || string(head[4:8]) != "ftyp" {
		return false
	}
	size := int(binary.BigEndian.Uint32(head))
	if size < 16 || size > len(head) {
		size = len(head)
	}
	for i := 8; i+4 <= size; i += 4 {
		if i == 12 {
			continue // minor version
		}
		if b := string(head[i : i+4]); b == "avif" || b == "avis" {
			return true
		}
	}
	return false
}

// looksLikeXML reports whether head starts, after a byte order mark and
// white space, as an SVG file does: an XML declaration, a comment, a
// doctype or an <svg element.
func looksLikeXML(head []byte) bool {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	head = bytes.TrimLeft(head, " \t\r\n")
	for _, p := range []string{"<?xml", "<!--", "<!DOCTYPE svg", "<svg"} {
		if bytes.HasPrefix(head, []byte(p)) {
			return true
		}
	}
	// A prefixed root: <s:svg xmlns:s="...">.
	if i := bytes.IndexByte(head, ':'); i > 1 && head[0] == '<' {
		return len(bytes.Trim(head[1:i], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")) == 0 &&
			bytes.HasPrefix(head[i+1:], []byte("svg"))
	}
	return false
}

// Info is what Inspect reads from a file.
type Info struct {
	Type Type
	// Width and Height are the pixel size: of the image, or an SVG's
	// declared size (width and height in px, else its viewBox); 0 when
	// unknown (PDF, an SVG without a size).
	Width, Height int
}

// ErrUnknownType reports a file of a type that is not accepted.
var ErrUnknownType = errors.New("not an accepted type")

// Inspect reads the type and pixel size of a file of size bytes. The type
// comes from the content (Sniff); the header of an image must decode (for
// AVIF, the ISOBMFF boxes must give the primary image's size); an SVG must
// be a well-formed XML document whose root is an svg element of the SVG
// namespace. Anything else is an error saying why, in words fit for the
// uploader (ErrUnknownType for another type).
func Inspect(r io.ReaderAt, size int64) (Info, error) {
	head := make([]byte, min(size, SniffLen))
	if _, err := r.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return Info{}, err
	}
	t, ok := Sniff(head)
	if !ok {
		return Info{}, ErrUnknownType
	}
	sr := io.NewSectionReader(r, 0, size)
	var cfg image.Config
	var err error
	switch t {
	case PNG:
		cfg, err = png.DecodeConfig(sr)
	case JPEG:
		if cfg, err = jpeg.DecodeConfig(sr); err == nil && Turned(JPEGOrientation(jpegHead(r, size))) {
			cfg.Width, cfg.Height = cfg.Height, cfg.Width // as shown
		}
	case GIF:
		cfg, err = gif.DecodeConfig(sr)
	case WebP:
		cfg, err = webp.DecodeConfig(sr)
	case AVIF:
		cfg.Width, cfg.Height, err = avifSize(r, size)
	case SVG:
		w, h, err := svgSize(sr)
		if err != nil {
			return Info{}, fmt.Errorf("looks like an SVG drawing but is not one: %w", err)
		}
		return Info{Type: t, Width: w, Height: h}, nil
	case PDF:
		return Info{Type: t}, nil
	}
	if err != nil {
		return Info{}, fmt.Errorf("looks like %s but its header does not decode", t.ContentType)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > MaxSide || cfg.Height > MaxSide {
		return Info{}, fmt.Errorf("is %dx%d pixels; each side must be 1 to %d", cfg.Width, cfg.Height, MaxSide)
	}
	return Info{Type: t, Width: cfg.Width, Height: cfg.Height}, nil
}

// maxJPEGHead is how much of a JPEG is searched for its EXIF segment.
const maxJPEGHead = 128 << 10

// jpegHead reads the first bytes of a JPEG, where its EXIF segment is.
func jpegHead(r io.ReaderAt, size int64) []byte {
	b := make([]byte, min(size, maxJPEGHead))
	n, _ := r.ReadAt(b, 0)
	return b[:n]
}

// svgNamespace is the namespace of an SVG document's root.
const svgNamespace = "http://www.w3.org/2000/svg"

// svgSize checks that r is a well-formed XML document whose root element
// is svg in the SVG namespace, and returns its declared pixel size: width
// and height when both are plain numbers or px, else the viewBox's, else
// 0, 0. Go's XML decoder expands no external entity, so nothing is
// fetched.
func svgSize(r io.Reader) (int, int, error) {
	d := xml.NewDecoder(r)
	d.Strict = true
	w, h, root := 0, 0, false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, 0, fmt.Errorf("XML: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || root {
			continue
		}
		root = true
		if se.Name.Local != "svg" || se.Name.Space != svgNamespace {
			return 0, 0, fmt.Errorf("its root element must be <svg xmlns=%q>", svgNamespace)
		}
		w, h = svgDeclaredSize(se)
	}
	if !root {
		return 0, 0, errors.New("it has no root element")
	}
	return w, h, nil
}

// svgDeclaredSize reads the pixel size an svg root declares.
func svgDeclaredSize(se xml.StartElement) (int, int) {
	attr := map[string]string{}
	for _, a := range se.Attr {
		if a.Name.Space == "" {
			attr[a.Name.Local] = a.Value
		}
	}
	w, wok := svgLength(attr["width"])
	h, hok := svgLength(attr["height"])
	if wok && hok {
		return w, h
	}
	f := strings.FieldsFunc(attr["viewBox"], func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' })
	if len(f) == 4 {
		vw, werr := strconv.ParseFloat(f[2], 64)
		vh, herr := strconv.ParseFloat(f[3], 64)
		if werr == nil && herr == nil {
			if w, ok := pixels(vw); ok {
				if h, ok := pixels(vh); ok {
					return w, h
				}
			}
		}
	}
	return 0, 0
}

// svgLength reads a length in pixels: a number, optionally followed by px.
func svgLength(v string) (int, bool) {
	v = strings.TrimSuffix(strings.TrimSpace(v), "px")
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, false
	}
	return pixels(f)
}

// pixels rounds a declared size to whole pixels, refusing what no image
// field could hold.
func pixels(f float64) (int, bool) {
	if math.IsNaN(f) || f < 0.5 || f > MaxSide {
		return 0, false
	}
	return int(math.Round(f)), true
}

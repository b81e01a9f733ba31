package imaging_test

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"

	xwebp "golang.org/x/image/webp"

	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/media/imaging"
)

// photo encodes a w x h JPEG with some detail.
func photo(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{R: uint8(x), G: uint8(y), B: uint8(x ^ y), A: 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRender(t *testing.T) {
	t.Parallel()
	src := photo(t, 1200, 800)
	tests := []struct {
		name string
		t    media.Transform
		w, h int
	}{
		{"width", media.Transform{Width: 640, Format: media.WebP, Quality: 80}, 640, 427},
		{"height", media.Transform{Height: 200, Format: media.JPEG, Quality: 80}, 300, 200},
		{"contain", media.Transform{Width: 400, Height: 400, Fit: media.Contain, Format: media.PNG}, 400, 267},
		{"cover", media.Transform{Width: 400, Height: 400, Fit: media.Cover, Format: media.JPEG, Quality: 70}, 400, 400},
		{"never larger", media.Transform{Width: 3840, Format: media.JPEG, Quality: 80}, 1200, 800},
		{"cover of a smaller image", media.Transform{Width: 2048, Height: 384, Fit: media.Cover, Format: media.PNG}, 1200, 384},
		{"re-encoded only", media.Transform{Format: media.WebP, Quality: 50}, 1200, 800},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := imaging.Render(&out, bytes.NewReader(src), media.JPEG, tc.t); err != nil {
				t.Fatal(err)
			}
			var cfg image.Config
			var err error
			switch tc.t.Format {
			case media.WebP:
				cfg, err = xwebp.DecodeConfig(bytes.NewReader(out.Bytes()))
			case media.JPEG:
				cfg, err = jpeg.DecodeConfig(bytes.NewReader(out.Bytes()))
			case media.PNG:
				cfg, err = png.DecodeConfig(bytes.NewReader(out.Bytes()))
			}
			if err != nil || cfg.Width != tc.w || cfg.Height != tc.h {
				t.Errorf("variant = %dx%d, %v; want %dx%d", cfg.Width, cfg.Height, err, tc.w, tc.h)
			}
		})
	}
}

// BenchmarkRender measures the first render of a variant: decoding a
// 2000 x 1333 JPEG (the original), scaling and encoding 640 pixels wide.
func BenchmarkRender(b *testing.B) {
	src := photo(b, 2000, 1333)
	for _, f := range []media.Type{media.WebP, media.JPEG, media.PNG} {
		b.Run(f.Ext, func(b *testing.B) {
			tr := media.Transform{Width: 640, Format: f, Quality: 80}
			if f == media.PNG {
				tr.Quality = 0
			}
			var out bytes.Buffer
			// The WebP encoder compiles its WebAssembly once per process.
			imaging.Render(&out, bytes.NewReader(src), media.JPEG, tr)
			for b.Loop() {
				out.Reset()
				if err := imaging.Render(&out, bytes.NewReader(src), media.JPEG, tr); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(out.Len()), "bytes/variant")
		})
	}
}

// withOrientation inserts an EXIF segment saying orientation o after the
// start of a JPEG, as cameras write it.
func withOrientation(jpg []byte, o byte) []byte {
	tiff := []byte("MM\x00\x2a\x00\x00\x00\x08" + // big-endian TIFF header, IFD at 8
		"\x00\x01" + // one entry
		"\x01\x12\x00\x03\x00\x00\x00\x01\x00") // orientation, SHORT, 1 value
	tiff = append(tiff, o, 0, 0, 0, 0, 0, 0)
	seg := append([]byte("Exif\x00\x00"), tiff...)
	app1 := append([]byte{0xff, 0xe1, byte((len(seg) + 2) >> 8), byte(len(seg) + 2)}, seg...)
	return append(append([]byte{0xff, 0xd8}, app1...), jpg[2:]...)
}

// TestOrientation checks that a photo stored sideways with an EXIF
// orientation is measured and transformed as browsers show it.
func TestOrientation(t *testing.T) {
	t.Parallel()
	img := image.NewRGBA(image.Rect(0, 0, 40, 20))
	for y := range 20 {
		for x := range 40 {
			c := color.RGBA{R: 255, A: 255} // left half red, right half blue
			if x >= 20 {
				c = color.RGBA{B: 255, A: 255}
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	jpeg.Encode(&b, img, &jpeg.Options{Quality: 95})
	turned := withOrientation(b.Bytes(), 6) // turn a quarter clockwise to show
	if o := media.JPEGOrientation(turned); o != 6 {
		t.Fatalf("JPEGOrientation = %d, want 6", o)
	}
	info, err := media.Inspect(bytes.NewReader(turned), int64(len(turned)))
	if err != nil || info.Width != 20 || info.Height != 40 {
		t.Errorf("Inspect = %+v, %v; want 20x40 as shown", info, err)
	}
	var out bytes.Buffer
	if err := imaging.Render(&out, bytes.NewReader(turned), media.JPEG, media.Transform{Format: media.PNG}); err != nil {
		t.Fatal(err)
	}
	v, err := png.Decode(&out)
	if err != nil || v.Bounds().Dx() != 20 || v.Bounds().Dy() != 40 {
		t.Fatalf("variant = %v, %v; want 20x40", v.Bounds(), err)
	}
	top, bottom := color.RGBAModel.Convert(v.At(10, 5)).(color.RGBA), color.RGBAModel.Convert(v.At(10, 35)).(color.RGBA)
	if top.R < 200 || top.B > 60 || bottom.B < 200 || bottom.R > 60 {
		t.Errorf("turned variant: top %v, bottom %v; want red above blue", top, bottom)
	}
	if o := media.JPEGOrientation(b.Bytes()); o != 1 {
		t.Errorf("JPEGOrientation without EXIF = %d, want 1", o)
	}
}

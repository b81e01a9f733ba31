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

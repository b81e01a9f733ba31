// Package imaging renders the variants of raster assets that image
// transforms ask for (media.Transform): it decodes the original, scales it
// with golang.org/x/image/draw and encodes PNG, JPEG or WebP.
//
// WebP is encoded by github.com/gen2brain/webp: libwebp itself, compiled
// to WebAssembly and run by wazero, so it needs no cgo (the binary stays
// CGO_ENABLED=0) and has libwebp's lossy encoder, whose quality setting is
// the q of the URL. The pure-Go WebP encoders available
// (github.com/HugoSmits86/nativewebp and others) write lossless WebP only,
// which for photographs is larger than the JPEG it would replace.
package imaging

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"math"

	"github.com/gen2brain/webp"
	"golang.org/x/image/draw"
	xwebp "golang.org/x/image/webp"

	"github.com/edgecms/edgecms/media"
)

// MaxPixels bounds the images that are transformed (width x height of the
// original): decoding one holds its pixels in memory, 4 bytes each.
const MaxPixels = 50_000_000

// ErrTooLarge reports an original over MaxPixels.
var ErrTooLarge = errors.New("the image is too large to transform")

// Render decodes the image of type src read from r, transforms it as t
// asks and writes the variant to w. The variant is never larger than the
// original: a width or height beyond it leaves the original's.
func Render(w io.Writer, r io.Reader, src media.Type, t media.Transform) error {
	img, err := decode(r, src)
	if err != nil {
		return err
	}
	out := transform(img, t)
	switch t.Format {
	case media.JPEG:
		return jpeg.Encode(w, out, &jpeg.Options{Quality: t.Quality})
	case media.PNG:
		return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(w, out)
	case media.WebP:
		return webp.Encode(w, out, webp.Options{Quality: t.Quality, Method: 4})
	}
	return fmt.Errorf("imaging: no encoder for %s", t.Format.ContentType)
}

// decode decodes an image of type src, checking its size from its header
// first.
func decode(r io.Reader, src media.Type) (image.Image, error) {
	var decodeImage func(io.Reader) (image.Image, error)
	var decodeConfig func(io.Reader) (image.Config, error)
	switch src {
	case media.PNG:
		decodeImage, decodeConfig = png.Decode, png.DecodeConfig
	case media.JPEG:
		decodeImage, decodeConfig = jpeg.Decode, jpeg.DecodeConfig
	case media.GIF:
		decodeImage, decodeConfig = gif.Decode, gif.DecodeConfig
	case media.WebP:
		decodeImage, decodeConfig = xwebp.Decode, xwebp.DecodeConfig
	default:
		return nil, fmt.Errorf("imaging: %s is not transformed", src.ContentType)
	}
	// The header is read twice: once to check the size, then by the
	// decoder, from the bytes kept while the first read them.
	var head headBuffer
	cfg, err := decodeConfig(io.TeeReader(r, &head))
	if err != nil {
		return nil, fmt.Errorf("imaging: %w", err)
	}
	if int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
		return nil, ErrTooLarge
	}
	orientation := 1
	if src == media.JPEG {
		orientation = media.JPEGOrientation(head.b)
	}
	img, err := decodeImage(io.MultiReader(&head, r))
	if err != nil {
		return nil, fmt.Errorf("imaging: %w", err)
	}
	return orient(img, orientation), nil
}

// orient turns an image as its EXIF orientation says it is shown (1 to 8,
// TIFF's: 2 mirrored, 3 half a turn, 4 upside down mirrored, 5 to 8 a
// quarter turn, mirrored or not).
func orient(img image.Image, o int) image.Image {
	if o < 2 || o > 8 {
		return img
	}
	b := img.Bounds()
	src := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(src, src.Bounds(), img, b.Min, draw.Src)
	w, h := b.Dx(), b.Dy()
	dw, dh := w, h
	if media.Turned(o) {
		dw, dh = h, w
	}
	dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for y := range h {
		for x := range w {
			var dx, dy int
			switch o {
			case 2:
				dx, dy = w-1-x, y
			case 3:
				dx, dy = w-1-x, h-1-y
			case 4:
				dx, dy = x, h-1-y
			case 5:
				dx, dy = y, x
			case 6:
				dx, dy = h-1-y, x
			case 7:
				dx, dy = h-1-y, w-1-x
			case 8:
				dx, dy = y, w-1-x
			}
			copy(dst.Pix[dy*dst.Stride+4*dx:dy*dst.Stride+4*dx+4], src.Pix[y*src.Stride+4*x:y*src.Stride+4*x+4])
		}
	}
	return dst
}

// headBuffer keeps what a header read took from a stream, to give it to
// the next reader.
type headBuffer struct{ b []byte }

func (h *headBuffer) Write(p []byte) (int, error) {
	h.b = append(h.b, p...)
	return len(p), nil
}

func (h *headBuffer) Read(p []byte) (int, error) {
	if len(h.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, h.b)
	h.b = h.b[n:]
	return n, nil
}

// transform scales img as t asks: within Width x Height (contain), filling
// them and cropping the middle (cover), or to one side, keeping the aspect
// ratio, and never beyond the original's size. A JPEG variant is drawn
// over white, as it has no transparency.
func transform(img image.Image, t media.Transform) image.Image {
	b := img.Bounds()
	ow, oh := float64(b.Dx()), float64(b.Dy())
	scale := 1.0
	W, H := float64(t.Width), float64(t.Height)
	switch {
	case t.Width > 0 && t.Height > 0 && t.Fit == media.Cover:
		scale = math.Max(W/ow, H/oh)
	case t.Width > 0 && t.Height > 0:
		scale = math.Min(W/ow, H/oh)
	case t.Width > 0:
		scale = W / ow
	case t.Height > 0:
		scale = H / oh
	}
	scale = math.Min(scale, 1)
	dw, dh := side(ow*scale), side(oh*scale)
	src := b
	if t.Fit == media.Cover {
		// The output is at most Width x Height; the source rectangle that
		// fills it is centred.
		dw, dh = min(dw, t.Width), min(dh, t.Height)
		cw, ch := int(math.Round(float64(dw)/scale)), int(math.Round(float64(dh)/scale))
		x0, y0 := b.Min.X+(b.Dx()-cw)/2, b.Min.Y+(b.Dy()-ch)/2
		src = image.Rect(x0, y0, x0+cw, y0+ch).Intersect(b)
	}
	var dst draw.Image
	op := draw.Src
	if t.Format == media.JPEG {
		rgba := image.NewRGBA(image.Rect(0, 0, dw, dh))
		draw.Draw(rgba, rgba.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
		dst, op = rgba, draw.Over
	} else {
		dst = image.NewNRGBA(image.Rect(0, 0, dw, dh))
	}
	if dw == b.Dx() && dh == b.Dy() && src == b {
		draw.Draw(dst, dst.Bounds(), img, b.Min, op)
		return dst
	}
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, src, op, nil)
	return dst
}

// side rounds a scaled side to whole pixels, at least one.
func side(f float64) int { return max(1, int(math.Round(f))) }

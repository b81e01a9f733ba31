package media

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/edgecms/edgecms/problem"
)

// Image transforms: an asset URL of a raster image (PNG, JPEG, GIF, WebP)
// may ask for a resized, re-encoded variant with
//
//	?w=&h=&fit=cover|contain&format=auto|webp|jpeg|png&q=
//
// as AgilityPic and the Gatsby image plugin send. Each variant is rendered
// once and kept in the store under a key made from the asset's hash and the
// normalised parameters (Transform.Key), so the parameters are bounded:
// widths and heights come from a list (Sizes, EDGECMS_IMAGE_WIDTHS; other
// values are answered with the next size up, the largest for larger ones),
// qualities are rounded up to a multiple of 10, and so an asset has a known
// largest number of variants whatever URLs are made up. AVIF, SVG and PDF
// assets are served as they are, whatever the query.

// MaxTransformSide bounds a size of the list, in pixels.
const MaxTransformSide = 4000

// DefaultSizes are the sizes of EDGECMS_IMAGE_WIDTHS by default: the
// widths Next.js's image component asks for by default (its imageSizes and
// deviceSizes).
var DefaultSizes = []int{16, 32, 48, 64, 96, 128, 256, 384, 640, 750, 828, 1080, 1200, 1920, 2048, 3840}

// DefaultQuality is the quality of a JPEG or WebP variant without q.
const DefaultQuality = 80

// Fit says how an image is made to fit a width and a height given
// together: contain keeps all of it (the variant may be smaller on one
// side), cover fills both and crops the middle.
type Fit string

// The fits.
const (
	Contain Fit = "contain"
	Cover   Fit = "cover"
)

// Transform is a normalised transform of a raster image.
type Transform struct {
	// Width and Height bound the variant, from the list of sizes; 0 leaves
	// that side to follow the other one (or the original).
	Width, Height int
	// Fit applies when both Width and Height are given ("" otherwise).
	Fit Fit
	// Format is the type of the variant: PNG, JPEG or WebP.
	Format Type
	// Quality is the encoder quality of JPEG and WebP variants (10..100 by
	// tens), 0 for PNG.
	Quality int
	// ByAccept is true when the format was chosen from the request's
	// Accept header (format=auto): the answer varies with it.
	ByAccept bool
}

// ParseSizes reads a list of sizes (EDGECMS_IMAGE_WIDTHS): comma-separated
// whole numbers of pixels from 1 to MaxTransformSide. The result is sorted
// and without duplicates.
func ParseSizes(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > MaxTransformSide {
			return nil, fmt.Errorf("want widths in pixels from 1 to %d separated by commas, got %q", MaxTransformSide, f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("want at least one width")
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// transformParams are the query parameters of a transform; others are
// ignored (cache busters, say).
var transformParams = []string{"w", "h", "fit", "format", "q"}

// ParseTransform reads the transform a query (as sent, without the "?")
// asks of an asset of type src, with sizes as ParseSizes returns them and
// accept the request's Accept header. It reports false when there is
// nothing to do: no transform parameter, or a type that is served as it
// is. A bad value is a problem.Invalid naming the parameter.
func ParseTransform(rawQuery string, src Type, sizes []int, accept string) (Transform, bool, error) {
	if rawQuery == "" || !src.Raster {
		return Transform{}, false, nil
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return Transform{}, false, problem.Invalidf("the query cannot be read: %v", err)
	}
	asked := false
	for _, p := range transformParams {
		switch len(q[p]) {
		case 0:
		case 1:
			asked = true
		default:
			return Transform{}, false, problem.Field(p, "is given %d times", len(q[p]))
		}
	}
	if !asked {
		return Transform{}, false, nil
	}
	var t Transform
	if t.Width, err = size(q.Get("w"), "w", sizes); err != nil {
		return Transform{}, false, err
	}
	if t.Height, err = size(q.Get("h"), "h", sizes); err != nil {
		return Transform{}, false, err
	}
	switch fit := q.Get("fit"); fit {
	case "", string(Contain), string(Cover):
		if t.Width > 0 && t.Height > 0 {
			t.Fit = Contain
			if fit != "" {
				t.Fit = Fit(fit)
			}
		}
	default:
		return Transform{}, false, problem.Field("fit", "must be cover or contain, not %q", fit)
	}
	switch f := strings.ToLower(q.Get("format")); f {
	case "":
		t.Format = sameFormat(src)
	case "auto":
		t.ByAccept = true
		if acceptsWebP(accept) {
			t.Format = WebP
		} else {
			t.Format = fallbackFormat(src)
		}
	case "webp":
		t.Format = WebP
	case "jpeg", "jpg":
		t.Format = JPEG
	case "png":
		t.Format = PNG
	default:
		return Transform{}, false, problem.Field("format", "must be auto, webp, jpeg or png, not %q", f)
	}
	if t.Format != PNG {
		t.Quality = DefaultQuality
		if v := q.Get("q"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 100 {
				return Transform{}, false, problem.Field("q", "must be a whole number from 1 to 100, not %q", v)
			}
			t.Quality = (n + 9) / 10 * 10
		}
	}
	return t, true, nil
}

// size reads a width or height: the next size of the list up, or the
// largest for one larger than all.
func size(v, name string, sizes []int) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, problem.Field(name, "must be a whole number of pixels from 1, not %q", v)
	}
	i, _ := slices.BinarySearch(sizes, n)
	if i == len(sizes) {
		i--
	}
	return sizes[i], nil
}

// sameFormat is the variant type of src without format: its own, but a
// GIF's (a still, its first frame) is PNG.
func sameFormat(src Type) Type {
	if src == GIF {
		return PNG
	}
	return src
}

// fallbackFormat is the variant type of format=auto for a client that
// does not take WebP: JPEG for a JPEG, PNG for the others (lossless, and
// they may be transparent).
func fallbackFormat(src Type) Type {
	if src == JPEG {
		return JPEG
	}
	return PNG
}

// acceptsWebP reports whether an Accept header lists image/webp.
func acceptsWebP(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(mt), "image/webp") {
			continue
		}
		for _, p := range strings.Split(params, ";") {
			if k, v, _ := strings.Cut(strings.TrimSpace(p), "="); k == "q" {
				f, err := strconv.ParseFloat(v, 64)
				return err != nil || f > 0
			}
		}
		return true
	}
	return false
}

// Name is the file name of the variant: {w}x{h}-{fit}-q{quality}.{ext}
// (fit "any" when it does not apply).
func (t Transform) Name() string {
	fit := string(t.Fit)
	if fit == "" {
		fit = "any"
	}
	return fmt.Sprintf("%dx%d-%s-q%d.%s", t.Width, t.Height, fit, t.Quality, t.Format.Ext)
}

// Key is the object key of the variant of the asset bytes at assetKey:
// {guid}/assets/v/{sha256}/{Name}. Variants of the same bytes share a
// prefix (VariantPrefix), so that they are removed with them.
func (t Transform) Key(assetKey string) (string, bool) {
	prefix, ok := VariantPrefix(assetKey)
	if !ok {
		return "", false
	}
	return prefix + t.Name(), true
}

// VariantPrefix is the key prefix of the variants of the asset bytes at
// assetKey.
func VariantPrefix(assetKey string) (string, bool) {
	guid, hash, _, ok := ParseKey(assetKey)
	if !ok {
		return "", false
	}
	return guid + "/assets/v/" + hash + "/", true
}

package nextjs_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	xwebp "golang.org/x/image/webp"

	"github.com/edgecms/edgecms/media"
)

// The demo's images are photos on an outside CDN (the demo has no object
// store to upload into), so the test gives the home page's hero an
// uploaded photo: what an editor does in the Studio, and what makes
// AgilityPic ask edgecms's image transforms for resized copies.

// heroPhoto is the photo the test uploads: wider than the largest width
// the hero asks for, so that every source of its <picture> is a resize.
const heroPhotoWidth, heroPhotoHeight = 2400, 1350

// chromeAccept is the Accept header Chromium sends for an <img>.
const chromeAccept = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"

// photo is an uploaded asset as the management API answers it.
type photo struct {
	AssetID int64
	URL     string
	Key     string
}

// addHeroPhoto uploads a JPEG photo, puts it in the Hero component of the
// home page in every locale and publishes the page; it returns once the
// published page the site reads shows the photo.
func (c *cms) addHeroPhoto(t *testing.T) photo {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("label", "Beans on the cooling tray")
	fw, _ := mw.CreateFormFile("file", "cooling-tray.jpg")
	if err := jpeg.Encode(fw, testPhoto(heroPhotoWidth, heroPhotoHeight), &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	mw.Close()
	req, _ := http.NewRequest("POST", c.base+"/api/v1/instance/"+c.guid+"/assets", &body)
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	res, err := c.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var p photo
	if res.StatusCode != 201 || json.Unmarshal(b, &p) != nil || p.URL == "" {
		t.Fatalf("upload of the hero photo = %d %s", res.StatusCode, b)
	}

	var sitemap map[string]sitemapNode
	c.fetchJSON(t, "/fetch/"+locales[0]+"/sitemap/flat/website", &sitemap)
	home := sitemap[paths0(sitemap)].PageID
	for _, locale := range locales {
		var page struct {
			Zones map[string][]struct {
				Module    string
				ContentID int64
			}
		}
		c.manage(t, "GET", fmt.Sprintf("/%s/pages/%d", locale, home), nil, &page)
		hero := int64(0)
		for _, m := range page.Zones["MainContentZone"] {
			if m.Module == "Hero" {
				hero = m.ContentID
			}
		}
		if hero == 0 {
			t.Fatalf("the %s home page (%d) has no Hero component", locale, home)
		}
		c.manage(t, "PUT", fmt.Sprintf("/%s/items/%d", locale, hero), map[string]any{"fields": map[string]any{"Image": map[string]any{"assetID": p.AssetID}}}, nil)
		c.manage(t, "POST", fmt.Sprintf("/%s/pages/%d/publish", locale, home), nil, nil)
		waitFor(t, "the published "+locale+" home page to show the photo", time.Minute, func() bool {
			status, b := c.fetch(t, c.fetchKey, fmt.Sprintf("/fetch/%s/page/%d?contentLinkDepth=2&expandAllContentLinks=true", locale, home))
			return status == 200 && bytes.Contains(b, []byte(p.URL))
		})
	}
	return p
}

// testPhoto is a photo-like picture: smooth gradients with detail, so
// that a resize and a re-encode have something to do.
func testPhoto(w, h int) image.Image {
	img := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			r, g, b := uint8(x*255/w), uint8(y*255/h), uint8((x^y)&0xff)
			yy, cb, cr := color.RGBToYCbCr(r, g, b)
			img.Y[img.YOffset(x, y)] = yy
			ci := img.COffset(x, y)
			img.Cb[ci], img.Cr[ci] = cb, cr
		}
	}
	return img
}

// checkPicture: the built home page shows the uploaded photo with
// AgilityPic, and every URL of its <picture> (each source's srcSet and the
// img's fallback src) gets a resized WebP from the edge for a browser that
// takes WebP, kept in the store and served from there the next time, and
// a resized JPEG for one that does not.
func (s *site) checkPicture(t *testing.T, p photo) {
	for _, locale := range locales {
		_, page := s.get(t, nil, sitePath(locale, "/"))
		pic := regexp.MustCompile(`(?s)<picture>.*?</picture>`).FindAllString(page, -1)
		var hero string
		for _, h := range pic {
			if strings.Contains(h, p.URL) {
				hero = h
			}
		}
		if hero == "" {
			t.Fatalf("the %s home page has no <picture> of %s:\n%s", locale, p.URL, pic)
		}
		// The hero's sources (1920, 1280 and 640 wide by media query) and
		// its fallback, 1200 wide; a width edgecms does not render (1280,
		// not in EDGECMS_IMAGE_WIDTHS) gets the next one up.
		want := map[string]int{"w=1920": 1920, "w=1280": 1920, "w=640": 640, "w=1200": 1200}
		urls := regexp.MustCompile(`(?:srcSet|src)="(`+regexp.QuoteMeta(p.URL)+`[^"]*)"`).FindAllStringSubmatch(hero, -1)
		if len(urls) != len(want) || !strings.Contains(hero, `<img loading="eager" src="`+p.URL+"?format=auto&amp;w=1200") {
			t.Errorf("the %s hero's <picture> has %d URLs of the photo, want %d sources and the fallback:\n%s", locale, len(urls), len(want), hero)
		}
		for _, m := range urls {
			u := html.UnescapeString(m[1])
			width := 0
			for q, w := range want {
				if strings.HasSuffix(u, "&"+q) {
					width = w
				}
			}
			if !strings.Contains(u, "format=auto") || width == 0 {
				t.Errorf("unexpected URL in the hero: %s", u)
				continue
			}
			height := width * heroPhotoHeight / heroPhotoWidth
			first := s.cms.checkImage(t, u, chromeAccept, "image/webp", width, height)
			vkey, _ := media.Transform{Width: width, Format: media.WebP, Quality: media.DefaultQuality}.Key(p.Key)
			if _, err := os.Stat(filepath.Join(s.cms.objects, filepath.FromSlash(vkey))); err != nil {
				t.Errorf("%s: the variant is not in the store: %v", u, err)
			}
			if again := s.cms.checkImage(t, u, chromeAccept, "image/webp", width, height); again != first {
				t.Errorf("%s: the stored variant's ETag %s differs from the first answer's %s", u, again, first)
			}
			s.cms.checkImage(t, u, "image/jpeg,image/*;q=0.8", "image/jpeg", width, height)
			t.Logf("%s %s: WebP %dx%d", locale, strings.TrimPrefix(u, p.URL), width, height)
		}
	}
}

// checkImage fetches an image URL with an Accept header and checks that a
// resized image of type want, width x height, comes back, cached for good
// and varying with Accept; it returns its ETag.
func (c *cms) checkImage(t *testing.T, u, accept, want string, width, height int) string {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("Accept", accept)
	res, err := c.client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	h := res.Header
	if res.StatusCode != 200 || h.Get("Content-Type") != want || h.Get("Vary") != "Accept" || !strings.Contains(h.Get("Cache-Control"), "immutable") {
		t.Errorf("GET %s (Accept: %s) = %d %s, Vary %q, Cache-Control %q; want 200 %s, Vary Accept, immutable",
			u, accept, res.StatusCode, h.Get("Content-Type"), h.Get("Vary"), h.Get("Cache-Control"), want)
		return ""
	}
	var cfg image.Config
	if want == "image/webp" {
		cfg, err = xwebp.DecodeConfig(bytes.NewReader(b))
	} else {
		cfg, err = jpeg.DecodeConfig(bytes.NewReader(b))
	}
	if err != nil || cfg.Width != width || cfg.Height != height {
		t.Errorf("GET %s (Accept: %s): a %dx%d %s (%v), want %dx%d", u, accept, cfg.Width, cfg.Height, want, err, width, height)
	}
	return h.Get("ETag")
}

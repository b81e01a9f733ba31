package edge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"mime/multipart"
	"net"
	"testing"

	xwebp "golang.org/x/image/webp"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/edge"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/store"
)

// TestAssetsThroughEdge runs a real origin and a real edge on one folder
// store: an image uploaded through the edge is served by the edge from the
// store, a resized WebP (what AgilityPic asks for) is rendered by the
// origin once and then served by the edge from the store, with the origin
// gone; SVG and PDF carry their safety headers.
func TestAssetsThroughEdge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := pgtest.New(t)
	cs := content.NewStore(db)
	inst, err := cs.CreateInstance(ctx, "pics", []content.Locale{{Code: "en-us", Name: "English"}})
	if err != nil {
		t.Fatal(err)
	}
	_, token, err := cs.CreateToken(ctx, inst, "test", content.RoleFull)
	if err != nil {
		t.Fatal(err)
	}
	objects, err := store.Open(ctx, t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := startEdge(t, objects, edge.Config{OriginURL: "http://" + ln.Addr().String()})
	cs.PublicURL = media.PublicURL(e.url)
	srv := origin.New(origin.Config{Assets: objects}, cs, testLog(t))
	go srv.App().Listener(ln)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })

	upload := func(name string, body []byte) content.Asset {
		t.Helper()
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		w, _ := mw.CreateFormFile("file", name)
		w.Write(body)
		mw.Close()
		res := do(t, "POST", e.url+"/api/v1/instance/pics/assets", &b, "Authorization", "Bearer "+token, "Content-Type", mw.FormDataContentType())
		var a content.Asset
		if res.status != 201 || json.Unmarshal(res.body, &a) != nil {
			t.Fatalf("upload %s through the edge = %d %s", name, res.status, res.body)
		}
		return a
	}
	img := image.NewRGBA(image.Rect(0, 0, 1600, 900))
	for i := range img.Pix {
		img.Pix[i] = byte(i / 7)
	}
	img.Set(0, 0, color.White)
	var photo bytes.Buffer
	jpeg.Encode(&photo, img, nil)
	a := upload("photo.jpg", photo.Bytes())
	if a.URL != e.url+"/pics/assets/"+a.SHA256+".jpg" {
		t.Fatalf("asset URL = %s, want the edge's", a.URL)
	}

	res := do(t, "GET", a.URL, nil)
	if res.status != 200 || !bytes.Equal(res.body, photo.Bytes()) || res.header.Get("Content-Type") != "image/jpeg" ||
		res.header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
		t.Fatalf("GET the original from the edge = %d %v", res.status, res.header)
	}

	res = do(t, "HEAD", a.URL, nil)
	if res.status != 200 || len(res.body) != 0 || res.header.Get("Content-Length") != fmt.Sprint(photo.Len()) {
		t.Errorf("HEAD the original from the edge = %d, %d bytes, Content-Length %q", res.status, len(res.body), res.header.Get("Content-Length"))
	}
	upper := e.url + "/PICS/assets/" + a.SHA256 + ".jpg"
	if res := do(t, "GET", upper, nil); res.status != 200 || !bytes.Equal(res.body, photo.Bytes()) {
		t.Errorf("GET %s (through the origin) = %d", upper, res.status)
	}

	// What AgilityPic asks for: ?format=auto&w=, from a browser taking WebP.
	variant := a.URL + "?format=auto&w=640"
	accept := "image/avif,image/webp,image/apng,image/*,*/*;q=0.8"
	first := do(t, "GET", variant, nil, "Accept", accept)
	cfg, err := xwebp.DecodeConfig(bytes.NewReader(first.body))
	if first.status != 200 || first.header.Get("Content-Type") != "image/webp" || first.header.Get("Vary") != "Accept" ||
		err != nil || cfg.Width != 640 || cfg.Height != 360 {
		t.Fatalf("GET %s = %d %v, %dx%d %v; want a 640x360 WebP", variant, first.status, first.header, cfg.Width, cfg.Height, err)
	}
	n := 0
	objects.List(ctx, "pics/assets/v/"+a.SHA256+"/", func(store.Info) error { n++; return nil })
	if n != 1 {
		t.Errorf("%d variants stored, want 1", n)
	}
	// A browser without WebP gets a JPEG of the same size.
	res = do(t, "GET", variant, nil, "Accept", "image/*")
	if c, err := jpeg.DecodeConfig(bytes.NewReader(res.body)); res.status != 200 || err != nil || c.Width != 640 ||
		res.header.Get("Content-Type") != "image/jpeg" || res.header.Get("Vary") != "Accept" {
		t.Errorf("GET %s without WebP = %d %v", variant, res.status, res.header)
	}
	// Widths not in the list are answered with the next one up; bad
	// values are a 400.
	res = do(t, "GET", a.URL+"?format=webp&w=600", nil)
	if c, err := xwebp.DecodeConfig(bytes.NewReader(res.body)); err != nil || c.Width != 640 || res.header.Get("Vary") != "" {
		t.Errorf("GET ?w=600 = %d %v, width %d", res.status, res.header, c.Width)
	}
	for _, q := range []string{"?w=abc", "?w=0", "?fit=stretch&w=64&h=64", "?format=tiff", "?q=101&w=64", "?w=64&w=128"} {
		if res := do(t, "GET", a.URL+q, nil); res.status != 400 {
			t.Errorf("GET %s = %d, want 400", q, res.status)
		}
	}

	// SVG runs no script opened on its own; PDF is downloaded; both are
	// served as they are whatever the query.
	svg := upload("logo.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>`))
	res = do(t, "GET", svg.URL+"?w=64&format=auto", nil, "Accept", accept)
	if res.status != 200 || res.header.Get("Content-Type") != "image/svg+xml" || res.header.Get("X-Content-Type-Options") != "nosniff" ||
		res.header.Get("Content-Security-Policy") != "default-src 'none'; style-src 'unsafe-inline'" {
		t.Errorf("GET the SVG = %d %v", res.status, res.header)
	}
	pdf := upload("terms.pdf", []byte("%PDF-1.4\n%%EOF\n"))
	res = do(t, "GET", pdf.URL, nil)
	if res.status != 200 || res.header.Get("Content-Type") != "application/pdf" || res.header.Get("Content-Disposition") != "attachment" {
		t.Errorf("GET the PDF = %d %v", res.status, res.header)
	}

	// With the origin gone, the edge serves the original and the variant
	// from the store.
	srv.Shutdown(context.Background())
	again := do(t, "GET", variant, nil, "Accept", accept)
	if again.status != 200 || !bytes.Equal(again.body, first.body) || again.header.Get("ETag") != first.header.Get("ETag") ||
		again.header.Get("Vary") != "Accept" {
		t.Errorf("GET %s with the origin down = %d %v", variant, again.status, again.header)
	}
	if res := do(t, "GET", a.URL, nil); res.status != 200 {
		t.Errorf("GET the original with the origin down = %d", res.status)
	}
	if res := do(t, "GET", variant, nil, "Accept", accept, "If-None-Match", first.header.Get("ETag")); res.status != 304 {
		t.Errorf("GET %s with its ETag = %d, want 304", variant, res.status)
	}
}

package origin_test

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"log/slog"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/store"
)

// BenchmarkVariant measures the origin's handler (Postgres and a folder
// store included, the network not) answering an image variant of a
// 2000 x 1333 JPEG asking for 640 pixels: the first render (decode, scale,
// encode, store; the variant is deleted before each request) and a stored
// variant (read from the store).
//
//	go test ./origin -run X -bench Variant -benchmem
func BenchmarkVariant(b *testing.B) {
	ctx := context.Background()
	db, _ := pgtest.New(b)
	cs := content.NewStore(db)
	inst, err := cs.CreateInstance(ctx, "bench", []content.Locale{{Code: "en-us", Name: "English"}})
	if err != nil {
		b.Fatal(err)
	}
	objects, err := store.Open(ctx, b.TempDir(), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	img := image.NewRGBA(image.Rect(0, 0, 2000, 1333))
	for i := range img.Pix {
		img.Pix[i] = byte(i%251 + i/9973)
	}
	var photo bytes.Buffer
	jpeg.Encode(&photo, img, &jpeg.Options{Quality: 90})
	file, err := content.InspectAsset(photo.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := objects.Put(ctx, store.Object{Key: file.Key(inst.Guid), Body: photo.Bytes(), ContentType: file.ContentType,
		CacheControl: media.CacheControl}); err != nil {
		b.Fatal(err)
	}
	a, err := cs.CreateAsset(ctx, inst, content.NewAsset{File: file, FileName: "photo.jpg"}, func(context.Context) error { return nil })
	if err != nil {
		b.Fatal(err)
	}
	srv := origin.New(origin.Config{Assets: objects}, cs, slog.New(slog.DiscardHandler))
	h := srv.App().Handler()
	var c fasthttp.RequestCtx
	get := func(query, accept string) []byte {
		c.Request.Reset()
		c.Response.Reset()
		c.Request.Header.SetMethod("GET")
		c.Request.SetRequestURI("/" + a.Key + query)
		c.Request.Header.Set("Accept", accept)
		h(&c)
		if c.Response.StatusCode() != 200 {
			b.Fatalf("GET %s = %d %s", query, c.Response.StatusCode(), c.Response.Body())
		}
		return c.Response.Body()
	}
	for _, f := range []struct{ name, query string }{
		{"webp", "?format=webp&w=640"},
		{"jpeg", "?format=jpeg&w=640"},
	} {
		tr, _, _ := media.ParseTransform(f.query[1:], media.JPEG, media.DefaultSizes, "")
		vkey, _ := tr.Key(a.Key)
		get(f.query, "") // the WebP encoder compiles its WebAssembly once per process
		b.Run("first render "+f.name, func(b *testing.B) {
			var size int
			for b.Loop() {
				b.StopTimer()
				objects.Delete(ctx, vkey)
				b.StartTimer()
				size = len(get(f.query, ""))
			}
			b.ReportMetric(float64(size), "bytes/variant")
		})
		b.Run("stored "+f.name, func(b *testing.B) {
			get(f.query, "")
			b.ReportAllocs()
			for b.Loop() {
				get(f.query, "")
			}
		})
	}
}

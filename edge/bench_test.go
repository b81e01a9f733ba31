package edge_test

import (
	"context"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/edgecms/edgecms/edge"
	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/store"
)

// BenchmarkHit measures the edge's handler (Fiber included, the network
// not) answering a cache hit: parse, key check, lookup, headers.
//
//	go test ./edge -run X -bench Hit -benchmem
func BenchmarkHit(b *testing.B) {
	st := store.NewMemory(nil)
	putManifest(b, st, guid, key{secret: fetchKey, typ: "fetch"})
	put(b, st, itemKey, string(make([]byte, 1000)), "acme.en-us.i:42", "acme.en-us.c:posts")
	srv, err := edge.New(edge.Config{Store: st, OriginURL: "http://127.0.0.1:9"}, testLog(b))
	if err != nil {
		b.Fatal(err)
	}
	h := srv.App().Server().Handler // the fast path in front of the app
	var ctx fasthttp.RequestCtx
	req := func() {
		ctx.Request.Reset()
		ctx.Response.Reset()
		ctx.Request.Header.SetMethod("GET")
		ctx.Request.SetRequestURI("/acme/fetch/en-us/item/42")
		ctx.Request.Header.SetHost("edge.test")
		ctx.Request.Header.Set("APIKey", fetchKey)
		h(&ctx)
	}
	req()
	if ctx.Response.StatusCode() != 200 {
		b.Fatalf("status %d, want 200", ctx.Response.StatusCode())
	}
	b.ReportAllocs()
	for b.Loop() {
		req()
	}
}

// BenchmarkStoredVariant measures the edge's handler (the network not)
// answering an image variant the store holds (a 30 KB WebP in a folder
// store): parse the transform, open the object, stream it.
//
//	go test ./edge -run X -bench StoredVariant -benchmem
func BenchmarkStoredVariant(b *testing.B) {
	st, err := store.Open(context.Background(), b.TempDir(), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	hash := strings.Repeat("ab", 32)
	asset := "acme/assets/" + hash + ".jpg"
	tr, _, _ := media.ParseTransform("format=auto&w=640", media.JPEG, media.DefaultSizes, "image/webp")
	vkey, _ := tr.Key(asset)
	if _, err := st.Put(context.Background(), store.Object{Key: vkey, Body: make([]byte, 30<<10), ContentType: "image/webp",
		CacheControl: media.CacheControl}); err != nil {
		b.Fatal(err)
	}
	srv, err := edge.New(edge.Config{Store: st, OriginURL: "http://127.0.0.1:9"}, testLog(b))
	if err != nil {
		b.Fatal(err)
	}
	h := srv.App().Server().Handler
	var ctx fasthttp.RequestCtx
	req := func() {
		ctx.Request.Reset()
		ctx.Response.Reset()
		ctx.Request.Header.SetMethod("GET")
		ctx.Request.SetRequestURI("/" + asset + "?format=auto&w=640")
		ctx.Request.Header.SetHost("edge.test")
		ctx.Request.Header.Set("Accept", "image/avif,image/webp,*/*")
		h(&ctx)
		if ctx.Response.StatusCode() != 200 || len(ctx.Response.Body()) != 30<<10 {
			b.Fatalf("status %d, %d bytes", ctx.Response.StatusCode(), len(ctx.Response.Body()))
		}
	}
	req()
	b.ReportAllocs()
	for b.Loop() {
		req()
	}
}

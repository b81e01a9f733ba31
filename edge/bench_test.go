package edge_test

import (
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/edgecms/edgecms/edge"
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

//go:build linux && !386

package edge

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/edgecms/edgecms/store"
)

// BenchmarkHitLoopAnswer measures what an event loop does in user space
// for a cache hit, the network aside: read the head, check the key, look
// up the object, write the answer (head and a 1 KiB body).
//
//	go test ./edge -run X -bench HitLoopAnswer -benchmem
func BenchmarkHitLoopAnswer(b *testing.B) {
	s := hitServer(b)
	if _, err := s.load(context.Background(), "acme/fetch/en-us/item/42/d1.json", time.Now()); err != nil {
		b.Fatal(err)
	}
	l := &hitLoop{hl: &hitLoops{s: s}}
	l.tick()
	c := &hitConn{}
	req := []byte("GET /acme/fetch/en-us/item/42 HTTP/1.1\r\nHost: edge.test\r\nUser-Agent: wrk\r\nAPIKey: k\r\n\r\n")
	b.ReportAllocs()
	for b.Loop() {
		l.take(c, req)
		if len(c.in) != 0 || c.handOver || c.out.size < 1000 {
			b.Fatalf("not answered as a hit: %q", c.out.buf)
		}
		c.out.reset()
	}
}

// hitServer is an edge on a memory store holding item 42 of instance acme
// (1000 bytes) and a manifest that accepts the fetch key "k", which it
// holds already.
func hitServer(tb testing.TB) *Server {
	ctx := context.Background()
	st := store.NewMemory(nil)
	sum := sha256.Sum256([]byte("k"))
	manifest, _ := json.Marshal(Manifest{Guid: "acme", Keys: []ManifestKey{{Hash: hex.EncodeToString(sum[:]), Type: "fetch", Enabled: true}}})
	for _, o := range []store.Object{
		{Key: ManifestKeyOf("acme"), Body: manifest, ContentType: "application/json", CacheControl: "no-store"},
		{Key: "acme/fetch/en-us/item/42/d1.json", Body: make([]byte, 1000), ContentType: "application/json; charset=utf-8", CacheControl: "public, max-age=0, s-maxage=30", Tags: []string{"acme.en-us.i:42"}},
	} {
		if _, err := st.Put(ctx, o); err != nil {
			tb.Fatal(err)
		}
	}
	s, err := New(Config{Store: st, OriginURL: "http://127.0.0.1:9"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := s.keys.instance(ctx, "acme"); err != nil {
		tb.Fatal(err)
	}
	return s
}

// TestHitLoopsSpreadConnections opens 64 connections at once to 4 loops:
// each loop holds 16 (give or take one a loop accepted at the same time
// as another), and every connection is answered from the loop that holds
// it. Before, the loop awake when they came kept them all.
func TestHitLoopsSpreadConnections(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	s := hitServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, err := newHitLoops(s, ln)
	if err != nil {
		t.Fatal(err)
	}
	hl := l.(*hitLoops)
	go s.app.Listener(newCoarseListener(hl, sweepEvery, s.log))
	defer s.Shutdown(context.Background())
	const n = 64
	req := "GET /acme/fetch/en-us/item/42 HTTP/1.1\r\nHost: edge.test\r\nAPIKey: k\r\n\r\n"
	get := func(c net.Conn) string {
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		return fmt.Sprint(res.StatusCode, " ", res.Header.Get("X-Cache"))
	}
	first, err := net.Dial("tcp", ln.Addr().String()) // a miss: to fasthttp
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if got := get(first); got != "200 MISS" {
		t.Fatalf("first read: %s, want 200 MISS", got)
	}
	conns := make([]net.Conn, n)
	for i := range conns {
		if conns[i], err = net.Dial("tcp", ln.Addr().String()); err != nil {
			t.Fatal(err)
		}
		defer conns[i].Close()
	}
	for i, c := range conns {
		if got := get(c); got != "200 HIT" {
			t.Fatalf("connection %d: %s, want 200 HIT", i, got)
		}
	}
	if got := s.loopConns.Load(); got != n {
		t.Fatalf("the loops hold %d connections, want %d", got, n)
	}
	var held []int64
	for _, l := range hl.loops {
		held = append(held, l.held.Load())
	}
	if len(held) != 4 || slices.Max(held)-slices.Min(held) > 2 {
		t.Errorf("connections held per loop: %v, want 4 loops with %d each, give or take one", held, n/4)
	}
}

//go:build linux && !386

package edge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
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
	ctx := context.Background()
	st := store.NewMemory(nil)
	sum := sha256.Sum256([]byte("k"))
	manifest, _ := json.Marshal(Manifest{Guid: "acme", Keys: []ManifestKey{{Hash: hex.EncodeToString(sum[:]), Type: "fetch", Enabled: true}}})
	for _, o := range []store.Object{
		{Key: ManifestKeyOf("acme"), Body: manifest, ContentType: "application/json", CacheControl: "no-store"},
		{Key: "acme/fetch/en-us/item/42/d1.json", Body: make([]byte, 1000), ContentType: "application/json; charset=utf-8", CacheControl: "public, max-age=0, s-maxage=30", Tags: []string{"acme.en-us.i:42"}},
	} {
		if _, err := st.Put(ctx, o); err != nil {
			b.Fatal(err)
		}
	}
	s, err := New(Config{Store: st, OriginURL: "http://127.0.0.1:9"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	if _, err := s.keys.instance(ctx, "acme"); err != nil {
		b.Fatal(err)
	}
	if _, err := s.load(ctx, "acme/fetch/en-us/item/42/d1.json", now); err != nil {
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

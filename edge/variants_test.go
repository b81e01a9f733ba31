package edge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/demo"
	"github.com/edgecms/edgecms/edge"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/publisher"
	"github.com/edgecms/edgecms/render"
	"github.com/edgecms/edgecms/store"
)

// feedWatch is a store that tells when an edge has applied a feed: the
// edge reads the feed object, applies it, and only then looks at the feed
// again (Stat), all in one goroutine.
type feedWatch struct {
	store.Store
	seq   atomic.Int64 // highest seq of a feed read
	stats atomic.Int64 // Stats of the feed
}

func (w *feedWatch) Stat(ctx context.Context, key string) (store.Info, error) {
	if key == delivery.FeedKey {
		w.stats.Add(1)
	}
	return w.Store.Stat(ctx, key)
}

func (w *feedWatch) Get(ctx context.Context, key string) (store.Object, error) {
	o, err := w.Store.Get(ctx, key)
	if err == nil && key == delivery.FeedKey {
		var f delivery.Feed
		if json.Unmarshal(o.Body, &f) == nil && f.Seq > w.seq.Load() {
			w.seq.Store(f.Seq)
		}
	}
	return o, err
}

// applied waits until the edge has applied a feed of seq or above.
func (w *feedWatch) applied(t *testing.T, seq int64) {
	t.Helper()
	waitFor(t, 20*time.Second, fmt.Sprintf("the edge read feed %d", seq), func() bool { return w.seq.Load() >= seq })
	n := w.stats.Load()
	waitFor(t, 20*time.Second, "the edge looked at the feed again", func() bool { return w.stats.Load() > n })
}

// TestVariantsNeverStaleOnEdges runs the whole chain over sockets: an
// edge on a folder store, a real origin behind it that hands what it
// serves twice to a running publisher's write-back. Variants (a sort, a
// filter, a depth, a field selection) read twice through the edge are
// written back and then served from the store; a publish of an item they
// show drops them from the store (nothing renders them again), and once
// the edge has read the feed of that publish, it serves every variant
// fresh, never the old bytes. Five rounds of it.
func TestVariantsNeverStaleOnEdges(t *testing.T) {
	ctx := context.Background()
	db, dsn := pgtest.New(t)
	cs := content.NewStore(db)
	inst, err := cs.CreateInstance(ctx, "variants", []content.Locale{{Code: "en-us", Name: "English"}})
	if err != nil {
		t.Fatal(err)
	}
	name := "site"
	_, key, err := cs.CreateAPIKey(ctx, inst, content.APIKeyInput{Name: &name, Type: "fetch"})
	if err != nil {
		t.Fatal(err)
	}
	if err := demo.Fill(ctx, cs, inst); err != nil {
		t.Fatal(err)
	}
	folder, err := store.Open(ctx, t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pub := publisher.New(publisher.Config{Store: folder, DatabaseURL: dsn}, cs, testLog(t))
	if err := pub.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pub.PublishKeys(ctx, inst.Guid); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	t.Cleanup(func() { stop(); wg.Wait(); pub.Close() })
	wg.Add(1)
	go func() { defer wg.Done(); pub.Run(runCtx) }()

	r := render.New(cs)
	t.Cleanup(func() { r.Close() })
	srv := origin.New(origin.Config{Renderer: r, WriteBack: pub.WriteBack, ChangePoll: 5 * time.Millisecond}, cs, testLog(t))
	wg.Add(1)
	go func() { defer wg.Done(); srv.Run(runCtx) }()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.App().Listener(ln)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	watch := &feedWatch{Store: folder}
	e := startEdge(t, watch, edge.Config{OriginURL: "http://" + ln.Addr().String()})

	fresh := render.New(cs)
	t.Cleanup(func() { fresh.Close() })
	variants := []string{
		"/list/categories?sort=fields.title&direction=desc",
		"/list/categories?filter=fields.title[like]\"origin\" OR contentID[eq]1",
		"/list/categories?take=3&contentLinkDepth=2",
		"/list/categories?fields=title",
		"/item/1?contentLinkDepth=3",
	}
	reqs := make([]fetch.Request, len(variants))
	for i, v := range variants {
		path, query, _ := strings.Cut(v, "?")
		reqs[i], err = fetch.Parse(fetch.Input{Path: "/variants/fetch/en-us" + path, RawQuery: query})
		if err != nil {
			t.Fatal(err)
		}
	}
	url := func(i int) string {
		path, query, _ := strings.Cut(variants[i], "?")
		return e.url + "/variants/fetch/en-us" + path + "?" + strings.ReplaceAll(strings.ReplaceAll(query, " ", "%20"), `"`, "%22")
	}
	stored := func(i int) bool {
		_, err := folder.Get(ctx, reqs[i].Key())
		if err != nil && !problem.Is(err, problem.NotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	want := func(i int) string {
		site, err := render.LoadSite(ctx, cs, "variants")
		if err != nil {
			t.Fatal(err)
		}
		res, err := fresh.Render(ctx, site, reqs[i])
		if err != nil {
			t.Fatal(err)
		}
		return string(res.Body)
	}

	for round := 1; round <= 5; round++ {
		for i := range variants {
			for range 2 {
				if res := get(t, url(i), key); res.status != 200 {
					t.Fatalf("GET %s = %d %s", variants[i], res.status, res.body)
				}
			}
			waitFor(t, 20*time.Second, variants[i]+" written back", func() bool { return stored(i) })
			// Read from the store once, so that the edge holds it in
			// memory too.
			if res := get(t, url(i), key); res.header.Get("X-Cache") == "" || string(res.body) != want(i) {
				t.Fatalf("round %d: %s from the store: X-Cache %q, body %s", round, variants[i], res.header.Get("X-Cache"), res.body)
			}
		}
		title, _ := json.Marshal(fmt.Sprintf("Single Origin, round %d", round))
		if _, err := cs.SaveItem(ctx, inst, "en-us", 1, map[string]json.RawMessage{"Title": title}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.ItemAction(ctx, inst, "en-us", 1, content.ActionPublish); err != nil {
			t.Fatal(err)
		}
		if err := pub.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		for i := range variants {
			if stored(i) {
				t.Errorf("round %d: %s still in the store after a publish of an item it shows", round, variants[i])
			}
		}
		watch.applied(t, feedSeq(t, folder))
		for i := range variants {
			res := get(t, url(i), key)
			if string(res.body) != want(i) {
				t.Errorf("round %d: after the feed of the publish, the edge serves %s as\n%s\nwant\n%s", round, variants[i], res.body, want(i))
			}
			if !strings.Contains(string(res.body), string(title[1:len(title)-1])) {
				t.Errorf("round %d: %s does not show the new title: %s", round, variants[i], res.body)
			}
		}
	}
}

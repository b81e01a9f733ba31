package edge_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/edgecms/edgecms/edge"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/publisher"
)

// TestFeedSignal checks that an edge reads a new change feed as soon as
// the origin says the publisher wrote one (the edge's own polls are an hour
// apart here), and that an edge whose origin is gone still serves changes,
// from its polls of the store.
func TestFeedSignal(t *testing.T) {
	ctx := context.Background()
	in := newInstance(t, "acme")
	st, _ := site(t)
	pub := publisher.New(publisher.Config{Store: st, DatabaseURL: in.dsn}, in.cs, testLog(t))
	// changed records a change of key as the publisher's writes do, and
	// flushes the feed: the store gets the feed, and the origins a NOTIFY.
	changed := func(key, body string) {
		t.Helper()
		put(t, st, key, body)
		if _, err := in.db.ExecContext(ctx, `INSERT INTO object_changes (key) VALUES ($1)`, key); err != nil {
			t.Fatal(err)
		}
		if err := pub.FlushFeed(ctx); err != nil {
			t.Fatal(err)
		}
	}
	changed("acme/other.json", "{}") // a feed before the edges start

	srv := origin.New(origin.Config{FeedListenURL: in.dsn}, in.cs, testLog(t))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.App().Listener(ln)
	running, stopRunning := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); srv.Run(running) }()
	stopOrigin := sync.OnceFunc(func() {
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("origin shutdown: %v", err)
		}
		stopRunning()
		wg.Wait()
	})
	t.Cleanup(stopOrigin)
	originURL := "http://" + ln.Addr().String()

	signalled := startEdge(t, st, edge.Config{OriginURL: originURL, FeedPoll: time.Hour})
	polling := startEdge(t, st, edge.Config{OriginURL: originURL, FeedPoll: 50 * time.Millisecond})
	item := "/acme/fetch/en-us/item/42"
	for _, e := range []*runningEdge{signalled, polling} {
		get(t, e.url+item, fetchKey)
		if got := get(t, e.url+item, fetchKey).header.Get("X-Cache"); got != "HIT" {
			t.Fatalf("X-Cache = %q, want HIT", got)
		}
	}
	// Give the edges' waits time to reach the origin, so that the change
	// below is announced to a waiting edge rather than answered to a new
	// wait; either way it must be served long before an hour's poll.
	time.Sleep(200 * time.Millisecond)

	changed(itemKey, `{"contentID":42,"v":2}`)
	took := waitFor(t, 10*time.Second, "the signalled edge serves the change", func() bool {
		return string(get(t, signalled.url+item, fetchKey).body) == `{"contentID":42,"v":2}`
	})
	t.Logf("served %v after the feed was written, with polls an hour apart", took)

	stopOrigin()
	changed(itemKey, `{"contentID":42,"v":3}`)
	waitFor(t, 10*time.Second, "the polling edge serves the change with its origin down", func() bool {
		return string(get(t, polling.url+item, fetchKey).body) == `{"contentID":42,"v":3}`
	})
}

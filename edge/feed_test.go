package edge_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/edge"
	"github.com/edgecms/edgecms/store"
)

// TestFeedChanges checks that an edge drops what the change feed lists and
// nothing else.
func TestFeedChanges(t *testing.T) {
	st, _ := site(t)
	feed := newFeedWriter(t, st)
	feed.changed()
	e := startEdge(t, st, edge.Config{OriginURL: deadURL(t)})
	item := e.url + "/acme/fetch/en-us/item/42"
	list := e.url + "/acme/fetch/en-us/list/posts"
	for _, u := range []string{item, list, item, list} {
		get(t, u, fetchKey)
	}
	if got := get(t, list, fetchKey).header.Get("X-Cache"); got != "HIT" {
		t.Fatalf("list X-Cache = %q, want HIT", got)
	}

	put(t, st, itemKey, `{"contentID":42,"v":2}`)
	// Until the feed lists the key the edge serves its copy...
	if got := get(t, item, fetchKey); string(got.body) != itemBody {
		t.Errorf("before the feed lists it: body %s, want the cached %s", got.body, itemBody)
	}
	feed.changed(itemKey)
	took := waitFor(t, 10*time.Second, "new version served", func() bool {
		return string(get(t, item, fetchKey).body) == `{"contentID":42,"v":2}`
	})
	t.Logf("new version served %v after the feed was written", took)
	if got := get(t, item, fetchKey).header.Get("X-Cache"); got != "HIT" {
		t.Errorf("new version X-Cache = %q, want HIT", got)
	}
	if got := get(t, list, fetchKey).header.Get("X-Cache"); got != "HIT" {
		t.Errorf("unchanged list X-Cache = %q, want HIT (only listed keys are dropped)", got)
	}
}

// TestFeedReadBeforeServing checks that an edge reads the change feed
// before it serves, so that its first read, which drops the whole cache,
// drops nothing it served: with a store slow to answer the first read,
// objects served at once stay cached once the read is done.
func TestFeedReadBeforeServing(t *testing.T) {
	mem, _ := site(t)
	st := &gatedStore{Store: mem, key: delivery.FeedKey, open: make(chan struct{})}
	newFeedWriter(t, st).changed()
	time.AfterFunc(100*time.Millisecond, func() { close(st.open) })
	e := startEdge(t, st, edge.Config{OriginURL: deadURL(t)})
	list := e.url + "/acme/fetch/en-us/list/posts"
	get(t, list, fetchKey)
	if got := get(t, list, fetchKey).header.Get("X-Cache"); got != "HIT" {
		t.Fatalf("list X-Cache = %q, want HIT", got)
	}
	// The next poll starts once the first has read and applied the feed.
	waitFor(t, 10*time.Second, "second poll", func() bool { return st.reads.Load() >= 2 })
	if got := get(t, list, fetchKey).header.Get("X-Cache"); got != "HIT" {
		t.Errorf("after the first read of the feed: list X-Cache = %q, want HIT", got)
	}
}

// TestFeedUnreadableAtStart checks that an edge whose store does not
// answer for the feed still starts serving, and that its first read of the
// feed, when the store answers, drops what it cached meanwhile (an object
// cached before may be older than a change the feed lists).
func TestFeedUnreadableAtStart(t *testing.T) {
	mem, _ := site(t)
	st := &gatedStore{Store: mem, key: delivery.FeedKey, open: make(chan struct{})}
	newFeedWriter(t, st).changed()
	e := startEdge(t, st, edge.Config{OriginURL: deadURL(t)}) // returns once Ready gives up waiting
	item := e.url + "/acme/fetch/en-us/item/42"
	if r := get(t, item, fetchKey); r.status != 200 || string(r.body) != itemBody {
		t.Fatalf("before the feed is read: GET = %d %s, want 200 %s", r.status, r.body, itemBody)
	}
	if got := get(t, item, fetchKey).header.Get("X-Cache"); got != "HIT" {
		t.Fatalf("before the feed is read: X-Cache = %q, want HIT", got)
	}
	// The item changes while the edge cannot read the feed; the feed does
	// not list it, and only the first read's drop can show it.
	put(t, mem, itemKey, `{"contentID":42,"v":2}`)
	close(st.open)
	waitFor(t, 10*time.Second, "second poll", func() bool { return st.reads.Load() >= 2 })
	if r := get(t, item, fetchKey); r.header.Get("X-Cache") != "MISS" || string(r.body) != `{"contentID":42,"v":2}` {
		t.Errorf("after the first read of the feed: X-Cache %q, body %s; want MISS and the new version",
			r.header.Get("X-Cache"), r.body)
	}
}

// TestFeedGap checks that an edge that missed changes (they fell out of
// the feed, or the feed started again) drops its whole cache.
func TestFeedGap(t *testing.T) {
	st, _ := site(t)
	feed := newFeedWriter(t, st)
	feed.max = 3
	feed.changed("x/1.json")
	e := startEdge(t, st, edge.Config{OriginURL: deadURL(t)})
	list := e.url + "/acme/fetch/en-us/list/posts"
	get(t, list, fetchKey)
	waitFor(t, 10*time.Second, "list cached", func() bool { return get(t, list, fetchKey).header.Get("X-Cache") == "HIT" })
	// A new list version, and five changes in one feed write that lists only
	// the last three: the change to the list is not among them.
	put(t, st, "acme/fetch/en-us/list/posts/d1,take10,skip0.json", `{"items":[1],"totalCount":1}`)
	feed.mu.Lock()
	for i := 0; i < 5; i++ {
		feed.feed.Seq++
		feed.feed.Changes = append(feed.feed.Changes, delivery.Change{Seq: feed.feed.Seq, Key: fmt.Sprintf("x/%d.json", i)})
	}
	feed.feed.Changes = feed.feed.Changes[len(feed.feed.Changes)-3:]
	feed.feed.Oldest = feed.feed.Changes[0].Seq
	putJSON(t, st, delivery.FeedKey, feed.feed)
	feed.mu.Unlock()
	waitFor(t, 10*time.Second, "whole cache dropped", func() bool {
		return string(get(t, list, fetchKey).body) == `{"items":[1],"totalCount":1}`
	})

	// A feed that goes back (a new database behind the publisher) drops
	// everything too.
	put(t, st, "acme/fetch/en-us/list/posts/d1,take10,skip0.json", `{"items":[2],"totalCount":1}`)
	putJSON(t, st, delivery.FeedKey, delivery.Feed{Seq: 1, Oldest: 1, Changes: []delivery.Change{{Seq: 1, Key: "y/1.json"}}})
	waitFor(t, 10*time.Second, "whole cache dropped", func() bool {
		return string(get(t, list, fetchKey).body) == `{"items":[2],"totalCount":1}`
	})
}

// TestKeyRevoked checks that a key disabled in the manifest is refused as
// soon as the feed lists the manifest (the issue asks within a second; the
// time is logged, not asserted).
func TestKeyRevoked(t *testing.T) {
	st, _ := site(t)
	feed := newFeedWriter(t, st)
	feed.changed()
	e := startEdge(t, st, edge.Config{OriginURL: deadURL(t), FeedPoll: 50 * time.Millisecond})
	item := e.url + "/acme/fetch/en-us/item/42"
	if r := get(t, item, fetchKey); r.status != 200 {
		t.Fatalf("GET = %d %s", r.status, r.body)
	}
	start := time.Now()
	putManifest(t, st, guid, key{secret: fetchKey, typ: "fetch", disabled: true})
	feed.changed(delivery.ManifestKey(guid))
	waitFor(t, 10*time.Second, "revoked key refused", func() bool { return get(t, item, fetchKey).status == 401 })
	t.Logf("revoked key refused %v after the manifest was written (feed poll 50 ms)", time.Since(start))

	// A new key appears the same way; and an instance first seen without a
	// manifest (requests went to the origin) gets its keys checked once the
	// publisher writes one.
	putManifest(t, st, guid, key{secret: "new", typ: "fetch"})
	feed.changed(delivery.ManifestKey(guid))
	waitFor(t, 10*time.Second, "new key accepted", func() bool { return get(t, item, "new").status == 200 })

	// Once the edge has read the feed and the manifests, it refuses a
	// guid without a manifest itself, without the origin.
	if r := get(t, e.url+"/later/fetch/en-us/item/1", "k"); r.status != 401 {
		t.Fatalf("instance without manifest, origin down: %d %s, want 401 from the edge", r.status, r.body)
	}
	put(t, st, "later/fetch/en-us/item/1/d1.json", `{"later":1}`)
	putManifest(t, st, "later", key{secret: "k", typ: "fetch"})
	feed.changed("later/fetch/en-us/item/1/d1.json", delivery.ManifestKey("later"))
	waitFor(t, 10*time.Second, "new instance served", func() bool { return get(t, e.url+"/later/fetch/en-us/item/1", "k").status == 200 })
	if r := get(t, e.url+"/later/fetch/en-us/item/1", "bad"); r.status != 401 {
		t.Errorf("bad key of the new instance: %d, want 401", r.status)
	}
}

// TestFreshness publishes new versions of an item to a folder store shared
// by three edges and measures how long it takes until every edge serves the
// new version. It logs the figures; speed is not asserted (see the
// publish-to-visible benchmark for that).
func TestFreshness(t *testing.T) {
	st, err := store.Open(t.Context(), t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	putManifest(t, st, guid, key{secret: fetchKey, typ: "fetch"})
	put(t, st, itemKey, `{"v":0}`)
	feed := newFeedWriter(t, st)
	feed.changed()
	var edges []*runningEdge
	for i := 0; i < 3; i++ {
		edges = append(edges, startEdge(t, st, edge.Config{OriginURL: deadURL(t), FeedPoll: edge.DefaultFeedPoll}))
	}
	const publishes = 30
	var lat []time.Duration
	for v := 1; v <= publishes; v++ {
		for _, e := range edges { // every edge holds the old version
			get(t, e.url+"/acme/fetch/en-us/item/42", fetchKey)
		}
		want := fmt.Sprintf(`{"v":%d}`, v)
		put(t, st, itemKey, want)
		feed.changed(itemKey)
		start := time.Now()
		var wg sync.WaitGroup
		worst := make([]time.Duration, len(edges))
		for i, e := range edges {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for string(get(t, e.url+"/acme/fetch/en-us/item/42", fetchKey).body) != want {
					if time.Since(start) > 10*time.Second {
						t.Errorf("edge %d: version %d not served after 10 s", i, v)
						return
					}
					time.Sleep(time.Millisecond)
				}
				worst[i] = time.Since(start)
			}()
		}
		wg.Wait()
		lat = append(lat, slices.Max(worst))
		time.Sleep(time.Duration(v%7) * 7 * time.Millisecond) // spread publishes over the poll phase
	}
	slices.Sort(lat)
	t.Logf("publish (object + feed written) to all 3 edges serving it, %d publishes, feed poll %v: p50 %v, p99 %v, max %v",
		publishes, edge.DefaultFeedPoll, lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1])
}

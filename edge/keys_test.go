package edge_test

import (
	"sync"
	"testing"
	"time"

	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/edge"
	"github.com/edgecms/edgecms/store"
)

// TestKeyRemembered checks that a key the edge has already accepted (and
// remembers, so as not to hash it again) is still checked on every request:
// it expires on time, and a changed manifest replaces what was remembered.
func TestKeyRemembered(t *testing.T) {
	st := store.NewMemory(nil)
	put(t, st, itemKey, itemBody)
	expires := time.Date(2026, 5, 1, 11, 0, 0, 0, time.UTC)
	putManifest(t, st, guid, key{secret: fetchKey, typ: "fetch", expires: &expires}, key{secret: previewKey, typ: "preview"})
	feed := newFeedWriter(t, st)
	feed.changed()

	var mu sync.Mutex
	now := expires.Add(-time.Minute)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e := startEdge(t, st, edge.Config{OriginURL: deadURL(t), Now: clock})
	item := e.url + "/acme/fetch/en-us/item/42"

	for i := range 3 {
		if r := get(t, item, fetchKey); r.status != 200 {
			t.Fatalf("request %d: GET = %d %s, want 200", i, r.status, r.body)
		}
		if r := get(t, item, previewKey); r.status != 403 {
			t.Fatalf("request %d with the preview key: GET = %d %s, want 403", i, r.status, r.body)
		}
		if r := get(t, item, fetchKey+"x"); r.status != 401 {
			t.Fatalf("request %d with another key: GET = %d %s, want 401", i, r.status, r.body)
		}
	}

	mu.Lock()
	now = expires
	mu.Unlock()
	if r := get(t, item, fetchKey); r.status != 401 {
		t.Fatalf("expired key: GET = %d %s, want 401", r.status, r.body)
	}

	mu.Lock()
	now = expires.Add(-time.Minute)
	mu.Unlock()
	putManifest(t, st, guid, key{secret: fetchKey, typ: "fetch", disabled: true}, key{secret: previewKey, typ: "fetch"})
	feed.changed(delivery.ManifestKey(guid))
	waitFor(t, 10*time.Second, "disabled key refused", func() bool { return get(t, item, fetchKey).status == 401 })
	if r := get(t, item, previewKey); r.status != 200 {
		t.Fatalf("key whose type changed to fetch: GET = %d %s, want 200", r.status, r.body)
	}
}

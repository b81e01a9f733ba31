package edge_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/edge"
	"github.com/edgecms/edgecms/store"
)

// The tests of this file count the goroutines of the whole process that
// wait for a shared store read or origin request (waiting), so they do not
// run in parallel with other tests.

// TestBurstOfMissesReadsTheStoreOnce checks that concurrent misses of one
// object on a folder store make one store read, whose object every request
// gets.
func TestBurstOfMissesReadsTheStoreOnce(t *testing.T) {
	folder, err := store.Open(t.Context(), t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	putManifest(t, folder, guid, key{secret: fetchKey, typ: "fetch"})
	put(t, folder, itemKey, itemBody)
	st := &gatedStore{Store: folder, key: itemKey, open: make(chan struct{})}
	e := startEdge(t, st, edge.Config{OriginURL: deadURL(t)})
	release := sync.OnceFunc(func() { close(st.open) })
	t.Cleanup(release) // before the edge stops, should the test end early

	const n = 8
	answers := burst(t, e.url+"/acme/fetch/en-us/item/42", slices.Repeat([]burstRequest{{method: "GET", apiKey: fetchKey}}, n))
	// The store read waits until every other request waits for it.
	waitFor(t, 10*time.Second, fmt.Sprintf("%d requests waiting for the store read of one", n-1), func() bool {
		return waiting("edge.(*Server).load") == n-1
	})
	release()
	for i, r := range answers() {
		if r.status != 200 || string(r.body) != itemBody || r.header.Get("X-Cache") != "MISS" {
			t.Errorf("request %d: %d X-Cache %q %s, want 200 MISS %s", i, r.status, r.header.Get("X-Cache"), r.body, itemBody)
		}
	}
	if got := st.reads.Load(); got != 1 {
		t.Errorf("%d concurrent misses read the store %d times, want once", n, got)
	}
}

// TestBurstOfMissesForwardsOnce checks that concurrent misses of one object
// that the store does not hold make one origin request per API key (the
// origin checks and rate-limits by key), a GET without If-None-Match, and
// that each request gets the origin's answer as its own: HEAD without the
// body, a matching If-None-Match as a 304.
func TestBurstOfMissesForwardsOnce(t *testing.T) {
	st := store.NewMemory(nil)
	const otherKey = "other-fetch-secret"
	putManifest(t, st, guid, key{secret: fetchKey, typ: "fetch"}, key{secret: otherKey, typ: "fetch"})
	const body, etag = `{"contentID":7}`, `"v7"`

	type seen struct{ method, apiKey, ifNoneMatch string }
	var (
		mu    sync.Mutex
		asked []seen
		open  = make(chan struct{})
	)
	// The requests of the burst, by API key: each key's first request is
	// sent to the origin and the others wait for it.
	reqs := []burstRequest{
		{"GET", "", fetchKey}, {"GET", "", fetchKey}, {"HEAD", "", fetchKey},
		{"GET", etag, fetchKey}, {"GET", `"other"`, fetchKey}, {"HEAD", "W/" + etag, fetchKey},
		{"GET", "", otherKey}, {"GET", "", otherKey}, {"HEAD", "", otherKey},
	}
	const flights = 2
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if withoutFeedSignal(w, r) {
			return
		}
		mu.Lock()
		asked = append(asked, seen{r.Method, r.Header.Get("APIKey"), r.Header.Get("If-None-Match")})
		mu.Unlock()
		select { // until every other request of the burst waits for an answer
		case <-open:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", jsonType)
		w.Header().Set("Cache-Control", cacheFetch)
		w.Header().Set("ETag", etag)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(origin.Close)
	e := startEdge(t, st, edge.Config{OriginURL: origin.URL})
	release := sync.OnceFunc(func() { close(open) })
	t.Cleanup(release) // before the edge stops, should the test end early

	answers := burst(t, e.url+"/acme/fetch/en-us/item/7", reqs)
	// Every read waits, the first of each flight too: the origin request
	// runs on its own (singleflight's DoChan).
	waitFor(t, 10*time.Second, fmt.Sprintf("%d requests waiting for the %d origin requests", len(reqs), flights), func() bool {
		return waiting("edge.(*Server).awaitForward") == len(reqs)
	})
	release()
	for i, r := range answers() {
		q := reqs[i]
		want, wantBody := 200, body
		switch {
		case q.ifNoneMatch == etag || q.ifNoneMatch == "W/"+etag:
			want, wantBody = 304, ""
		case q.method == "HEAD":
			wantBody = ""
		}
		if r.status != want || string(r.body) != wantBody || r.header.Get("ETag") != etag || r.header.Get("X-Cache") != "MISS" {
			t.Errorf("%s with If-None-Match %q: %d ETag %q X-Cache %q %q, want %d ETag %s MISS %q",
				q.method, q.ifNoneMatch, r.status, r.header.Get("ETag"), r.header.Get("X-Cache"), r.body, want, etag, wantBody)
		}
		if want == 200 && (r.header.Get("Content-Type") != jsonType || r.header.Get("Cache-Control") != cacheFetch) {
			t.Errorf("%s with If-None-Match %q: Content-Type %q, Cache-Control %q: not the origin's", q.method, q.ifNoneMatch, r.header.Get("Content-Type"), r.header.Get("Cache-Control"))
		}
		if want == 304 && r.header.Get("Content-Type") != "" {
			t.Errorf("%s with If-None-Match %q: a 304 with Content-Type %q", q.method, q.ifNoneMatch, r.header.Get("Content-Type"))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != flights {
		t.Fatalf("the origin was asked %d times (%v), want %d: once per API key", len(asked), asked, flights)
	}
	keys := map[string]bool{}
	for _, a := range asked {
		keys[a.apiKey] = true
		if a.method != "GET" || a.ifNoneMatch != "" {
			t.Errorf("the origin was asked %s with If-None-Match %q, want a GET without it", a.method, a.ifNoneMatch)
		}
	}
	if !keys[fetchKey] || !keys[otherKey] {
		t.Errorf("the origin was asked with the keys %v, want each key once", keys)
	}
}

// burstRequest is one request of a burst.
type burstRequest struct{ method, ifNoneMatch, apiKey string }

// burst sends reqs to url at once and returns what waits for their
// answers, in the order of reqs.
func burst(t *testing.T, url string, reqs []burstRequest) func() []response {
	t.Helper()
	out := make([]response, len(reqs))
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Go(func() {
			hs := []string{"APIKey", r.apiKey}
			if r.ifNoneMatch != "" {
				hs = append(hs, "If-None-Match", r.ifNoneMatch)
			}
			out[i] = do(t, r.method, url, nil, hs...)
		})
	}
	return func() []response { wg.Wait(); return out }
}

// waiting counts the goroutines of the process that wait for a shared
// call: in a singleflight.Group's Do called by fn (the store reads), or
// blocked in a select of fn itself (awaitForward, which waits for the
// origin's answer or the change feed).
func waiting(fn string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		header, frames, _ := strings.Cut(g, "\n")
		inDo := strings.Contains(g, "sync.(*WaitGroup).Wait") && strings.Contains(g, "singleflight.(*Group).Do(") && strings.Contains(g, fn+"(")
		inFn := strings.Contains(header, "[select") && strings.HasPrefix(frames, "github.com/edgecms/edgecms/"+fn+"(")
		if inDo || inFn {
			count++
		}
	}
	return count
}

// TestMissAnsweredFromTheStoreOnceListed checks that the reads waiting for
// the origin's answer to a miss take the object from the store as soon as
// the change feed lists its key, without waiting for the origin (which
// renders a new post's page by path from the channel's whole sitemap:
// seconds at real size, while the publisher writes it within its batch),
// and that a listing while the store still lacks the object (a delete)
// leaves them waiting for the origin.
func TestMissAnsweredFromTheStoreOnceListed(t *testing.T) {
	st := store.NewMemory(nil)
	putManifest(t, st, guid, key{secret: fetchKey, typ: "fetch"})
	feed := newFeedWriter(t, st)
	feed.changed(delivery.ManifestKey(guid))
	var asked atomic.Int32
	open := make(chan struct{})
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if withoutFeedSignal(w, r) {
			return
		}
		asked.Add(1)
		select { // until the test ends: the store answers first
		case <-open:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", jsonType)
		fmt.Fprint(w, `{"from":"origin"}`)
	}))
	t.Cleanup(origin.Close)
	// Another object, cached: a new version of it listed after the
	// listing of the missed key and served tells that the edge has applied
	// that listing.
	const otherKey, otherURL = "acme/fetch/en-us/item/43/d1.json", "/acme/fetch/en-us/item/43"
	put(t, st, otherKey, `{"contentID":43,"v":1}`)
	e := startEdge(t, st, edge.Config{OriginURL: origin.URL})
	t.Cleanup(sync.OnceFunc(func() { close(open) })) // before the edge stops
	if r := get(t, e.url+otherURL, fetchKey); r.status != 200 {
		t.Fatalf("item 43: %d %s", r.status, r.body)
	}

	const n = 3
	answers := burst(t, e.url+"/acme/fetch/en-us/item/42", slices.Repeat([]burstRequest{{method: "GET", apiKey: fetchKey}}, n))
	waitFor(t, 10*time.Second, fmt.Sprintf("%d reads waiting for the origin", n), func() bool {
		return waiting("edge.(*Server).awaitForward") == n
	})

	// Listed while the store lacks it.
	feed.changed(itemKey)
	put(t, st, otherKey, `{"contentID":43,"v":2}`)
	feed.changed(otherKey)
	waitFor(t, 10*time.Second, "the edge serving the change listed after", func() bool {
		return string(get(t, e.url+otherURL, fetchKey).body) == `{"contentID":43,"v":2}`
	})
	if got := waiting("edge.(*Server).awaitForward"); got != n {
		t.Fatalf("%d reads still waiting after their key was listed without an object, want %d", got, n)
	}

	put(t, st, itemKey, itemBody)
	feed.changed(itemKey)
	for i, r := range answers() {
		if r.status != 200 || string(r.body) != itemBody || r.header.Get("X-Cache") != "MISS" {
			t.Errorf("read %d: %d X-Cache %q %s, want 200 MISS %s from the store", i, r.status, r.header.Get("X-Cache"), r.body, itemBody)
		}
	}
	if got := asked.Load(); got != 1 {
		t.Errorf("the origin was asked %d times, want once", got)
	}
}

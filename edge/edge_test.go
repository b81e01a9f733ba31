package edge_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgecms/edgecms/edge"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/store"
)

// TestNoDatabase checks that the edge cannot reach a database: no Postgres
// driver or SQL library is linked into it.
func TestNoDatabase(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/edgecms/edgecms/edge").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		// database/sql/driver is only interfaces (google/uuid, via minio-go,
		// implements them); database/sql itself would be a connection pool.
		for _, banned := range []string{"github.com/lib/pq", "github.com/jmoiron/sqlx", "database/sql", "github.com/edgecms/edgecms/content"} {
			if pkg == banned || (banned != "database/sql" && strings.HasPrefix(pkg, banned+"/")) {
				t.Errorf("edge depends on %s", pkg)
			}
		}
	}
}

// stubOrigin is a stand-in origin: a real HTTP server that records what it is
// asked and answers like the origin does (a JSON body naming the request).
type stubOrigin struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []originRequest
}

type originRequest struct {
	method, uri, host string
	header            http.Header
	body              string
}

func newOrigin(t *testing.T) *stubOrigin {
	o := &stubOrigin{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if withoutFeedSignal(w, r) {
			return
		}
		b, _ := io.ReadAll(r.Body)
		o.mu.Lock()
		o.reqs = append(o.reqs, originRequest{r.Method, r.RequestURI, r.Host, r.Header.Clone(), string(b)})
		o.mu.Unlock()
		switch {
		case r.Header.Get("APIKey") == "nope": // as the origin refuses a key in no manifest nor database
			w.Header().Set("Content-Type", problem.ContentType)
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"status":401}`)
			return
		case strings.Contains(r.URL.Path, "/missing/"):
			w.Header().Set("Content-Type", problem.ContentType)
			w.Header().Set("Cache-Control", "public, max-age=5, s-maxage=5")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"status":404}`)
			return
		case strings.Contains(r.URL.Path, "/broken/"):
			w.Header().Set("Content-Type", problem.ContentType)
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"status":500}`)
			return
		}
		w.Header().Set("Content-Type", jsonType)
		w.Header().Set("X-Origin", "yes")
		w.Header().Set("ETag", `"origin"`)
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, `{"origin":%q}`, r.Method+" "+r.RequestURI)
	}))
	t.Cleanup(o.Close)
	return o
}

// last returns the last request the origin received.
func (o *stubOrigin) last(t *testing.T) originRequest {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.reqs) == 0 {
		t.Fatal("the origin received no request")
	}
	return o.reqs[len(o.reqs)-1]
}

func (o *stubOrigin) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.reqs)
}

const (
	guid       = "acme"
	fetchKey   = "fetch-secret"
	previewKey = "preview-secret"
	itemKey    = "acme/fetch/en-us/item/42/d1.json"
	itemBody   = `{"contentID":42,"fields":{"title":"Hello"}}`
)

// site is a store with one instance: keys of every state, an item, a list
// page, a sitemap and a preview object that must never be served.
func site(t *testing.T) (*store.Memory, store.Object) {
	st := store.NewMemory(nil)
	past := time.Now().Add(-time.Hour)
	future := time.Now().Add(time.Hour)
	putManifest(t, st, guid,
		key{secret: fetchKey, typ: "fetch"},
		key{secret: previewKey, typ: "preview", expires: &future},
		key{secret: "disabled", typ: "fetch", disabled: true},
		key{secret: "expired", typ: "fetch", expires: &past},
	)
	item := put(t, st, itemKey, itemBody, "acme.en-us.i:42", "acme.en-us.c:posts")
	put(t, st, "acme/fetch/en-us/list/posts/d1,take10,skip0.json", `{"items":[],"totalCount":0}`, "acme.en-us.c:posts")
	put(t, st, "acme/fetch/en-us/sitemap/flat/website.json", `{}`)
	put(t, st, "acme/preview/en-us/item/42/d1.json", `{"never":"served"}`)
	return st, item
}

func TestFetch(t *testing.T) {
	st, item := site(t)
	org := newOrigin(t)
	e := startEdge(t, st, edge.Config{OriginURL: org.URL})

	type want struct {
		status   int
		xcache   string
		body     string // exact, when not empty
		origin   string // the request URI the origin must have received last
		problem  bool
		noBody   bool
		cacheCtl string
	}
	tests := []struct {
		name    string
		method  string
		path    string
		headers []string
		want    want
	}{
		{"first read from the store", "GET", "/acme/fetch/en-us/item/42", []string{"APIKey", fetchKey},
			want{status: 200, xcache: "MISS", body: itemBody, cacheCtl: cacheFetch}},
		{"second read from memory", "GET", "/acme/fetch/en-us/item/42", []string{"APIKey", fetchKey},
			want{status: 200, xcache: "HIT", body: itemBody, cacheCtl: cacheFetch}},
		{"another spelling, same key", "GET", "/v1/ACME/Fetch/en-US/item/42/?contentLinkDepth=1&expandAllContentLinks=false", []string{"APIKey", fetchKey},
			want{status: 200, xcache: "HIT", body: itemBody}},
		{"guid in a header", "GET", "/fetch/en-us/item/42", []string{"APIKey", fetchKey, "Guid", "acme"},
			want{status: 200, xcache: "HIT", body: itemBody}},
		{"guid in the host name", "GET", "/fetch/en-us/item/42", []string{"APIKey", fetchKey, "Host", "acme-api.example.com"},
			want{status: 200, xcache: "HIT", body: itemBody}},
		{"HEAD", "HEAD", "/acme/fetch/en-us/item/42", []string{"APIKey", fetchKey},
			want{status: 200, xcache: "HIT", noBody: true}},
		{"If-None-Match", "GET", "/acme/fetch/en-us/item/42", []string{"APIKey", fetchKey, "If-None-Match", `"x", ` + item.ETag},
			want{status: 304, xcache: "HIT", noBody: true}},
		{"If-None-Match weak", "GET", "/acme/fetch/en-us/item/42", []string{"APIKey", fetchKey, "If-None-Match", "W/" + item.ETag},
			want{status: 304, xcache: "HIT", noBody: true}},
		{"If-None-Match other", "GET", "/acme/fetch/en-us/item/42", []string{"APIKey", fetchKey, "If-None-Match", `"other"`},
			want{status: 200, xcache: "HIT", body: itemBody}},
		{"list page", "GET", "/acme/fetch/en-us/list/posts", []string{"APIKey", fetchKey},
			want{status: 200, xcache: "MISS", body: `{"items":[],"totalCount":0}`}},
		{"sitemap", "GET", "/acme/fetch/en-us/sitemap/flat/website", []string{"APIKey", fetchKey},
			want{status: 200, xcache: "MISS", body: `{}`}},

		{"no key", "GET", "/acme/fetch/en-us/item/42", nil, want{status: 401, problem: true}},
		// A key not in the manifest may be newer than it: the origin is
		// asked, once (its answer is remembered).
		{"unknown key", "GET", "/acme/fetch/en-us/item/42", []string{"APIKey", "nope"}, want{status: 401, problem: true,
			origin: "/acme/fetch/en-us/item/42?contentLinkDepth=1&expandAllContentLinks=false"}},
		{"unknown key again", "GET", "/acme/fetch/en-us/item/42", []string{"APIKey", "nope"}, want{status: 401, problem: true}},
		{"disabled key", "GET", "/acme/fetch/en-us/item/42", []string{"APIKey", "disabled"}, want{status: 401, problem: true}},
		{"expired key", "GET", "/acme/fetch/en-us/item/42", []string{"APIKey", "expired"}, want{status: 401, problem: true}},
		{"preview key on fetch", "GET", "/acme/fetch/en-us/item/42", []string{"APIKey", previewKey}, want{status: 403, problem: true}},
		{"fetch key on preview", "GET", "/acme/preview/en-us/item/42", []string{"APIKey", fetchKey}, want{status: 403, problem: true}},
		{"bad parameter", "GET", "/acme/fetch/en-us/list/posts?take=0", []string{"APIKey", fetchKey}, want{status: 400, problem: true}},
		{"no such path", "GET", "/acme/fetch/en-us/nothing/1/2/3", []string{"APIKey", fetchKey}, want{status: 400, problem: true}},
		{"path traversal", "GET", "/acme/fetch/..%2f..%2fetc/item/1", []string{"APIKey", fetchKey}, want{status: 400, problem: true}},

		{"store miss goes to the origin, canonically", "GET", "/acme/fetch/en-us/item/43?contentlinkdepth=2", []string{"APIKey", fetchKey},
			want{status: 200, xcache: "MISS", origin: "/acme/fetch/en-us/item/43?contentLinkDepth=2&expandAllContentLinks=false"}},
		{"preview always goes to the origin", "GET", "/acme/preview/en-us/item/42", []string{"APIKey", previewKey},
			want{status: 200, xcache: "MISS", origin: "/acme/preview/en-us/item/42?contentLinkDepth=1&expandAllContentLinks=false"}},
		{"instance without manifest goes to the origin", "GET", "/other/fetch/en-us/item/1", []string{"APIKey", "whatever"},
			want{status: 200, xcache: "MISS", origin: "/other/fetch/en-us/item/1?contentLinkDepth=1&expandAllContentLinks=false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := org.count()
			r := do(t, tt.method, e.url+tt.path, nil, tt.headers...)
			w := tt.want
			if r.status != w.status {
				t.Fatalf("%s %s = %d %s, want %d", tt.method, tt.path, r.status, r.body, w.status)
			}
			if got := r.header.Get("X-Cache"); got != w.xcache {
				t.Errorf("X-Cache = %q, want %q", got, w.xcache)
			}
			if w.body != "" && string(r.body) != w.body {
				t.Errorf("body = %s, want %s", r.body, w.body)
			}
			if w.noBody && len(r.body) != 0 {
				t.Errorf("body = %q, want none", r.body)
			}
			if w.cacheCtl != "" && r.header.Get("Cache-Control") != w.cacheCtl {
				t.Errorf("Cache-Control = %q, want %q", r.header.Get("Cache-Control"), w.cacheCtl)
			}
			switch {
			case w.origin != "":
				if got := org.last(t).uri; got != w.origin || org.count() != before+1 {
					t.Errorf("origin got %q (%d requests), want %q (1 request)", got, org.count()-before, w.origin)
				}
			case org.count() != before:
				t.Errorf("the origin was asked %q, want no request", org.last(t).uri)
			}
			if w.problem {
				if ct := r.header.Get("Content-Type"); ct != problem.ContentType {
					t.Errorf("Content-Type = %q, want %q", ct, problem.ContentType)
				}
				var doc map[string]any
				if err := json.Unmarshal(r.body, &doc); err != nil || doc["detail"] == "" {
					t.Errorf("body %s is not a problem document", r.body)
				}
				return
			}
			if w.origin == "" && w.status == 200 || w.status == 304 {
				if got := r.header.Get("ETag"); got != item.ETag && strings.Contains(tt.path, "item/42") {
					t.Errorf("ETag = %q, want %q", got, item.ETag)
				}
				if r.header.Get("Age") == "" {
					t.Error("no Age header")
				}
			}
		})
	}

	t.Run("headers of a stored object", func(t *testing.T) {
		r := get(t, e.url+"/acme/fetch/en-us/item/42", fetchKey)
		for name, want := range map[string]string{
			"Content-Type":   jsonType,
			"Cache-Control":  cacheFetch,
			"ETag":           item.ETag,
			"Surrogate-Key":  "acme.en-us.c:posts acme.en-us.i:42",
			"X-Cache":        "HIT",
			"Content-Length": fmt.Sprint(len(itemBody)),
		} {
			if got := r.header.Get(name); got != want {
				t.Errorf("%s = %q, want %q", name, got, want)
			}
		}
		h := do(t, "HEAD", e.url+"/acme/fetch/en-us/item/42", nil, "APIKey", fetchKey)
		if got, want := h.header.Get("Content-Length"), fmt.Sprint(len(itemBody)); got != want {
			t.Errorf("HEAD Content-Length = %q, want %q", got, want)
		}
	})
}

// TestAge checks that Age counts the seconds since the edge read the
// object from the store.
func TestAge(t *testing.T) {
	st, _ := site(t)
	var mu sync.Mutex
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e := startEdge(t, st, edge.Config{OriginURL: deadURL(t), Now: clock})
	url := e.url + "/acme/fetch/en-us/item/42"
	if got := get(t, url, fetchKey).header.Get("Age"); got != "0" {
		t.Errorf("Age on a miss = %q, want 0", got)
	}
	mu.Lock()
	now = now.Add(90 * time.Second)
	mu.Unlock()
	if got := get(t, url, fetchKey).header.Get("Age"); got != "90" {
		t.Errorf("Age after 90 s = %q, want 90", got)
	}
}

// TestOriginDown checks what an edge answers with its origin down: what
// the store holds, stale copies of changed objects, and clear problems for
// the rest.
func TestOriginDown(t *testing.T) {
	st, _ := site(t)
	feed := newFeedWriter(t, st)
	feed.changed() // the feed exists before the edge starts
	e := startEdge(t, st, edge.Config{OriginURL: deadURL(t)})

	if r := get(t, e.url+"/acme/fetch/en-us/item/42", fetchKey); r.status != 200 || string(r.body) != itemBody {
		t.Fatalf("stored item = %d %s, want 200 %s", r.status, r.body, itemBody)
	}
	for _, tt := range []struct{ name, method, path, key string }{
		{"store miss", "GET", "/acme/fetch/en-us/item/43", fetchKey},
		{"preview, though stored", "GET", "/acme/preview/en-us/item/42", previewKey},
		{"management API", "POST", "/api/v1/instance/acme/fr-ca/items", ""},
	} {
		r := do(t, tt.method, e.url+tt.path, strings.NewReader("{}"), "APIKey", tt.key)
		// Nothing listens at the origin's address: the connection is
		// refused, which is unreachable (503), not a bad answer (502).
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" {
			t.Errorf("%s: %s %s = %d (Retry-After %q) %s, want 503 with Retry-After: 1", tt.name, tt.method, tt.path, r.status, r.header.Get("Retry-After"), r.body)
		}
		if got := r.header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("%s: Cache-Control = %q, want no-store", tt.name, got)
		}
		if got := r.header.Get("Content-Type"); got != problem.ContentType {
			t.Errorf("%s: Content-Type = %q, want %q", tt.name, got, problem.ContentType)
		}
	}

	// The edge's health is its own: a load balancer must keep an edge that
	// serves from the store while the origin is down.
	for _, path := range []string{"/healthz", "/livez"} {
		if r := do(t, "GET", e.url+path, nil); r.status != 200 || r.header.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s with the origin down = %d (Cache-Control %q) %s, want 200 no-store", path, r.status, r.header.Get("Cache-Control"), r.body)
		}
	}

	// The item is unpublished: the publisher deletes it and lists it in the
	// feed. With the origin down the edge keeps serving its copy, marked
	// stale, rather than fail.
	if err := st.Delete(context.Background(), itemKey); err != nil {
		t.Fatal(err)
	}
	feed.changed(itemKey)
	waitFor(t, 10*time.Second, "stale copy served", func() bool {
		return get(t, e.url+"/acme/fetch/en-us/item/42", fetchKey).header.Get("X-Cache") == "STALE"
	})
	r := get(t, e.url+"/acme/fetch/en-us/item/42", fetchKey)
	if r.status != 200 || string(r.body) != itemBody {
		t.Errorf("stale item = %d %s, want 200 %s", r.status, r.body, itemBody)
	}
}

// TestStaleDroppedWhenGone checks that an origin that answers 404 for a
// changed object makes the edge drop its stale copy.
func TestStaleDroppedWhenGone(t *testing.T) {
	st := store.NewMemory(nil)
	putManifest(t, st, "missing", key{secret: fetchKey, typ: "fetch"})
	k := "missing/fetch/en-us/item/1/d1.json"
	put(t, st, k, `{"old":true}`)
	feed := newFeedWriter(t, st)
	feed.changed()
	org := newOrigin(t)
	e := startEdge(t, st, edge.Config{OriginURL: org.URL})
	url := e.url + "/missing/fetch/en-us/item/1"
	if r := get(t, url, fetchKey); r.status != 200 {
		t.Fatalf("GET = %d %s", r.status, r.body)
	}
	st.Delete(context.Background(), k)
	feed.changed(k)
	waitFor(t, 10*time.Second, "origin's 404 served", func() bool { return get(t, url, fetchKey).status == 404 })
	entries, _ := e.srv.CacheStats()
	if entries != 0 {
		t.Errorf("cache holds %d entries after the origin's 404, want 0", entries)
	}
}

// TestProxy checks that the edge passes what it does not serve to the
// origin unchanged: method, URI, headers and body there; status, headers
// and body back.
func TestProxy(t *testing.T) {
	st, _ := site(t)
	org := newOrigin(t)
	e := startEdge(t, st, edge.Config{OriginURL: org.URL})
	for _, tt := range []struct {
		method, uri, body string
		status            int
	}{
		{"POST", "/api/v1/instance/acme/en-us/items?x=%2F1", `{"title":"a"}`, 200},
		{"PUT", "/api/v1/instance/acme/en-us/items/1", `{"title":"b"}`, 200},
		{"DELETE", "/api/v1/instance/acme/apikeys/3", "", 200},
		{"PATCH", "/acme/fetch/en-us/item/42", `{}`, 200},
		{"GET", "/api/v1/instance/acme/models", "", 200},
		{"HEAD", "/api/openapi.json", "", 200},
		{"GET", "/studio/", "", 200},
		{"GET", "/studio/acme/content/posts?q=x", "", 200},
		{"GET", "/studio", "", 200},
		{"GET", "/api/missing/x", "", 404},
		{"POST", "/api/broken/y", "x", 500},
	} {
		var body io.Reader
		if tt.body != "" {
			body = strings.NewReader(tt.body)
		}
		r := do(t, tt.method, e.url+tt.uri, body, "Authorization", "Bearer tok", "X-Custom", "kept")
		if r.status != tt.status {
			t.Errorf("%s %s = %d %s, want %d", tt.method, tt.uri, r.status, r.body, tt.status)
			continue
		}
		got := org.last(t)
		if got.method != tt.method || got.uri != tt.uri || got.body != tt.body {
			t.Errorf("origin got %s %s %q, want %s %s %q", got.method, got.uri, got.body, tt.method, tt.uri, tt.body)
		}
		if got.header.Get("Authorization") != "Bearer tok" || got.header.Get("X-Custom") != "kept" {
			t.Errorf("%s %s: origin got headers %v", tt.method, tt.uri, got.header)
		}
		if got.header.Get("X-Forwarded-For") == "" {
			t.Errorf("%s %s: no X-Forwarded-For", tt.method, tt.uri)
		}
		if tt.status == 200 {
			if r.header.Get("X-Origin") != "yes" || r.header.Get("ETag") != `"origin"` {
				t.Errorf("%s %s: headers %v, want the origin's", tt.method, tt.uri, r.header)
			}
			if want := fmt.Sprintf(`{"origin":%q}`, tt.method+" "+tt.uri); tt.method != "HEAD" && string(r.body) != want {
				t.Errorf("%s %s: body %s, want %s", tt.method, tt.uri, r.body, want)
			}
		}
	}
}

// TestCacheBound checks that the cache never holds more bytes than
// configured, whatever is read.
func TestCacheBound(t *testing.T) {
	st := store.NewMemory(nil)
	putManifest(t, st, guid, key{secret: fetchKey, typ: "fetch"})
	const n, size = 300, 3000
	for i := 1; i <= n; i++ {
		put(t, st, fmt.Sprintf("acme/fetch/en-us/item/%d/d1.json", i), fmt.Sprintf(`{"id":%d,"pad":%q}`, i, strings.Repeat("x", size)))
	}
	const max = 64 << 10
	e := startEdge(t, st, edge.Config{OriginURL: deadURL(t), CacheBytes: max})
	for round := 0; round < 2; round++ {
		for i := 1; i <= n; i++ {
			r := get(t, fmt.Sprintf("%s/acme/fetch/en-us/item/%d", e.url, i), fetchKey)
			if r.status != 200 || !strings.HasPrefix(string(r.body), fmt.Sprintf(`{"id":%d,`, i)) {
				t.Fatalf("item %d = %d %.40s", i, r.status, r.body)
			}
			if _, bytes := e.srv.CacheStats(); bytes > max {
				t.Fatalf("after item %d the cache holds %d bytes, more than %d", i, bytes, max)
			}
		}
	}
	entries, bytes := e.srv.CacheStats()
	t.Logf("cache: %d entries, %d bytes of %d", entries, bytes, max)
	if entries == 0 || entries >= n {
		t.Errorf("cache holds %d entries, want some but not all %d", entries, n)
	}
	// Recently read objects are hits.
	r := get(t, fmt.Sprintf("%s/acme/fetch/en-us/item/%d", e.url, n), fetchKey)
	if r.header.Get("X-Cache") != "HIT" {
		t.Errorf("last item read: X-Cache = %q, want HIT", r.header.Get("X-Cache"))
	}
	// An object larger than an eighth of the cache is served, not cached.
	big := fmt.Sprintf(`{"pad":%q}`, strings.Repeat("y", max/4))
	put(t, st, "acme/fetch/en-us/item/9999/d1.json", big)
	for i := 0; i < 2; i++ {
		r := get(t, e.url+"/acme/fetch/en-us/item/9999", fetchKey)
		if r.status != 200 || string(r.body) != big || r.header.Get("X-Cache") != "MISS" {
			t.Errorf("big object: %d X-Cache %q, want 200 MISS", r.status, r.header.Get("X-Cache"))
		}
	}
}

// TestShutdown checks that Shutdown closes the kept-alive connections, those
// whose last answer was a hit and those whose last answer was an error, and
// that Serve returns and the edge accepts no more connections.
func TestShutdown(t *testing.T) {
	t.Parallel()
	st, _ := site(t)
	e := startEdge(t, st, edge.Config{OriginURL: deadURL(t)})
	get(t, e.url+"/acme/fetch/en-us/item/42", fetchKey) // cached
	var conns []net.Conn
	for _, k := range []string{fetchKey, "nope", fetchKey, "nope"} {
		c, err := net.Dial("tcp", e.addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /acme/fetch/en-us/item/42 HTTP/1.1\r\nHost: edge.test\r\nAPIKey: "+k+"\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		conns = append(conns, c)
	}
	e.stop() // returns once Serve has returned
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadAll(c); err != nil {
			t.Errorf("connection %d: %v, want it closed", i, err)
		}
	}
	if c, err := net.DialTimeout("tcp", e.addr(), time.Second); err == nil {
		c.Close()
		t.Error("the edge still accepts connections after Shutdown")
	}
}

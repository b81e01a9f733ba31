package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fixture returns the bytes of testdata/name.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recorder is an httptest server that remembers the requests it served.
type recorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
}

func (r *recorder) requests() []*http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*http.Request(nil), r.reqs...)
}

func (r *recorder) last(t *testing.T) *http.Request {
	t.Helper()
	reqs := r.requests()
	if len(reqs) == 0 {
		t.Fatal("the server got no request")
	}
	return reqs[len(reqs)-1]
}

// serve starts a server running h, and a client for it (guid "g1") whose
// backoff waits are recorded in *waits instead of slept.
func serve(t *testing.T, opts Options, h http.HandlerFunc) (*Client, *recorder, *[]time.Duration) {
	t.Helper()
	rec := &recorder{}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, r.Clone(context.Background()))
		rec.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(rec.srv.Close)
	c, err := New(rec.srv.URL, "g1", opts)
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	c.wait = func(d time.Duration) time.Duration {
		waits = append(waits, d)
		return 0
	}
	return c, rec, &waits
}

// jsonBody answers 200 with body as JSON.
func jsonBody(body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		base, guid string
		opts       Options
		wantErr    bool
		wantBase   string
	}{
		{base: "https://cdn.example.com", guid: "g1", wantBase: "https://cdn.example.com/g1"},
		{base: "https://cdn.example.com/", guid: "g1", wantBase: "https://cdn.example.com/g1"},
		{base: "http://127.0.0.1:8080/v1", guid: "g1", wantBase: "http://127.0.0.1:8080/v1/g1"},
		{base: "https://g1-api.example.com", guid: "", wantBase: "https://g1-api.example.com"},
		{base: "ftp://example.com", guid: "g1", wantErr: true},
		{base: "example.com", guid: "g1", wantErr: true},
		{base: "https://example.com?x=1", guid: "g1", wantErr: true},
		{base: "https://user:pw@example.com", guid: "g1", wantErr: true},
		{base: "https://example.com", guid: "a/b", wantErr: true},
		{base: "https://example.com", guid: "g1", opts: Options{RetryWaitMin: time.Second, RetryWaitMax: time.Millisecond}, wantErr: true},
	}
	for _, tt := range tests {
		c, err := New(tt.base, tt.guid, tt.opts)
		if tt.wantErr {
			if err == nil {
				t.Errorf("New(%q, %q) = nil error, want one", tt.base, tt.guid)
			}
			continue
		}
		if err != nil {
			t.Errorf("New(%q, %q) = %v", tt.base, tt.guid, err)
			continue
		}
		if c.base != tt.wantBase {
			t.Errorf("New(%q, %q).base = %q, want %q", tt.base, tt.guid, c.base, tt.wantBase)
		}
	}
}

func TestNewDefaults(t *testing.T) {
	c, err := New("https://example.com", "g", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.retryMax != DefaultMaxRetries || c.waitMin != DefaultRetryWaitMin || c.waitMax != DefaultRetryWaitMax {
		t.Errorf("retry settings = %d, %v, %v; want %d, %v, %v", c.retryMax, c.waitMin, c.waitMax,
			DefaultMaxRetries, DefaultRetryWaitMin, DefaultRetryWaitMax)
	}
	c, _ = New("https://example.com", "g", Options{MaxRetries: -1})
	if c.retryMax != 0 {
		t.Errorf("MaxRetries -1: retryMax = %d, want 0", c.retryMax)
	}
}

// TestRequestURLs checks the address, escaping and query of every method.
func TestRequestURLs(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		fixture string
		call    func(*Client) error
		// want is the escaped path and raw query the server received.
		wantPath, wantQuery string
	}{
		{"item defaults", "item.json",
			func(c *Client) error { _, err := c.Item(ctx, "en-us", 42, ItemOptions{}); return err },
			"/g1/fetch/en-us/item/42", ""},
		{"item depth 0 expand all", "item.json",
			func(c *Client) error {
				_, err := c.Item(ctx, "fr-CA", 42, ItemOptions{Depth: new(0), ExpandAll: true})
				return err
			},
			"/g1/fetch/fr-CA/item/42", "contentLinkDepth=0&expandAllContentLinks=true"},
		{"list defaults", "list.json",
			func(c *Client) error { _, err := c.List(ctx, "en-us", "posts", ListOptions{}); return err },
			"/g1/fetch/en-us/list/posts", ""},
		{"list every option", "list.json",
			func(c *Client) error {
				_, err := c.List(ctx, "en-us", "News & Views/2024 #1", ListOptions{
					Take: 20, Skip: 40, Sort: "fields.title", Direction: "desc",
					Filter: `fields.title[like]"R&D #1+2" AND properties.versionID[gt]3`,
					Fields: []string{"title", "category"}, Depth: new(2), ExpandAll: true,
				})
				return err
			},
			"/g1/fetch/en-us/list/News%20&%20Views%2F2024%20%231",
			"contentLinkDepth=2&direction=desc&expandAllContentLinks=true&fields=title%2Ccategory" +
				"&filter=fields.title%5Blike%5D%22R%26D+%231%2B2%22+AND+properties.versionID%5Bgt%5D3" +
				"&skip=40&sort=fields.title&take=20"},
		{"page", "page.json",
			func(c *Client) error { _, err := c.Page(ctx, "en-us", 2, PageOptions{Depth: new(3)}); return err },
			"/g1/fetch/en-us/page/2", "contentLinkDepth=3"},
		{"page by path", "page_by_path.json",
			func(c *Client) error {
				_, err := c.PageByPath(ctx, "en-us", "website", "/blog/hello edge", PageOptions{})
				return err
			},
			"/g1/fetch/en-us/page/website", "path=%2Fblog%2Fhello+edge"},
		{"sitemap flat", "sitemap_flat.json",
			func(c *Client) error { _, err := c.SitemapFlat(ctx, "en-us", "website"); return err },
			"/g1/fetch/en-us/sitemap/flat/website", ""},
		{"sitemap nested", "sitemap_nested.json",
			func(c *Client) error { _, err := c.SitemapNested(ctx, "en-us", "web site"); return err },
			"/g1/fetch/en-us/sitemap/nested/web%20site", ""},
		{"sync items from the start", "sync_items.json",
			func(c *Client) error { _, err := c.SyncItems(ctx, "en-us", 0, 0); return err },
			"/g1/fetch/en-us/sync/items", "syncToken=0"},
		{"sync pages", "sync_pages.json",
			func(c *Client) error { _, err := c.SyncPages(ctx, "en-us", 1207, 100); return err },
			"/g1/fetch/en-us/sync/pages", "pageSize=100&syncToken=1207"},
		{"gallery", "gallery.json",
			func(c *Client) error { _, err := c.Gallery(ctx, 9); return err },
			"/g1/fetch/gallery/9", ""},
		{"redirections", "urlredirection.json",
			func(c *Client) error { _, err := c.URLRedirections(ctx, ""); return err },
			"/g1/fetch/urlredirection", ""},
		{"redirections since", "urlredirection.json",
			func(c *Client) error { _, err := c.URLRedirections(ctx, "2024-03-05T14:26:01.177Z"); return err },
			"/g1/fetch/urlredirection", "lastAccessDate=2024-03-05T14%3A26%3A01.177Z"},
		{"preview flavour", "item.json",
			func(c *Client) error { _, err := c.WithPreview(true).Item(ctx, "en-us", 42, ItemOptions{}); return err },
			"/g1/preview/en-us/item/42", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, rec, _ := serve(t, Options{}, jsonBody(fixture(t, tt.fixture)))
			if err := tt.call(c); err != nil {
				t.Fatalf("call: %v", err)
			}
			r := rec.last(t)
			if got := r.URL.EscapedPath(); got != tt.wantPath {
				t.Errorf("path = %q, want %q", got, tt.wantPath)
			}
			if got := r.URL.RawQuery; got != tt.wantQuery {
				t.Errorf("query = %q, want %q", got, tt.wantQuery)
			}
		})
	}
}

// TestFilterSurvives checks that the server reads back exactly the filter,
// sort and reference name that were sent, characters like & # + included.
func TestFilterSurvives(t *testing.T) {
	const filter = `fields.title[eq]"Q&A #2 + more" OR fields.slug[in]"a,b"`
	c, rec, _ := serve(t, Options{}, jsonBody(fixture(t, "list.json")))
	if _, err := c.List(context.Background(), "en-us", "a/b c", ListOptions{Filter: filter, Sort: "properties.modified"}); err != nil {
		t.Fatal(err)
	}
	r := rec.last(t)
	if got := r.URL.Query().Get("filter"); got != filter {
		t.Errorf("filter = %q, want %q", got, filter)
	}
	if got := r.URL.Query().Get("sort"); got != "properties.modified" {
		t.Errorf("sort = %q", got)
	}
	if got, want := r.URL.Path, "/g1/fetch/en-us/list/a/b c"; got != want {
		t.Errorf("decoded path = %q, want %q", got, want)
	}
}

func TestHeaders(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		preview bool
		wantKey string
		wantUA  string
	}{
		{"fetch key", Options{FetchKey: "live.k", PreviewKey: "prev.k"}, false, "live.k", "edgecms-go/" + Version},
		{"preview key", Options{FetchKey: "live.k", PreviewKey: "prev.k"}, true, "prev.k", "edgecms-go/" + Version},
		{"preview option", Options{PreviewKey: "prev.k", Preview: true}, true, "prev.k", "edgecms-go/" + Version},
		{"no key", Options{UserAgent: "site/2.0"}, false, "", "site/2.0 edgecms-go/" + Version},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, rec, _ := serve(t, tt.opts, jsonBody(fixture(t, "item.json")))
			c = c.WithPreview(tt.preview)
			if _, err := c.Item(context.Background(), "en-us", 42, ItemOptions{}); err != nil {
				t.Fatal(err)
			}
			r := rec.last(t)
			if got := r.Header.Get("APIKey"); got != tt.wantKey {
				t.Errorf("APIKey = %q, want %q", got, tt.wantKey)
			}
			if _, ok := r.Header["Apikey"]; tt.wantKey == "" && ok {
				t.Errorf("an empty APIKey header was sent")
			}
			if got := r.Header.Get("Accept"); got != "application/json" {
				t.Errorf("Accept = %q", got)
			}
			if got := r.Header.Get("User-Agent"); got != tt.wantUA {
				t.Errorf("User-Agent = %q, want %q", got, tt.wantUA)
			}
			wantFlavour := "/fetch/"
			if tt.preview {
				wantFlavour = "/preview/"
			}
			if !strings.Contains(r.URL.Path, wantFlavour) {
				t.Errorf("path %q lacks %q", r.URL.Path, wantFlavour)
			}
		})
	}
}

func TestArgumentsChecked(t *testing.T) {
	c, rec, _ := serve(t, Options{}, jsonBody(fixture(t, "item.json")))
	ctx := context.Background()
	calls := map[string]func() error{
		"Item no locale":     func() error { _, err := c.Item(ctx, "", 1, ItemOptions{}); return err },
		"List no reference":  func() error { _, err := c.List(ctx, "en-us", "", ListOptions{}); return err },
		"PageByPath no path": func() error { _, err := c.PageByPath(ctx, "en-us", "website", "", PageOptions{}); return err },
		"SitemapFlat no channel": func() error {
			_, err := c.SitemapFlat(ctx, "en-us", "")
			return err
		},
	}
	for name, call := range calls {
		if err := call(); err == nil {
			t.Errorf("%s: nil error", name)
		}
	}
	if n := len(rec.requests()); n != 0 {
		t.Errorf("%d requests sent for invalid arguments, want 0", n)
	}
}

func TestCrossHostRedirectNotFollowed(t *testing.T) {
	var leaked bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = r.Header.Get("APIKey") != ""
		w.Write(fixture(t, "item.json"))
	}))
	defer other.Close()
	c, _, _ := serve(t, Options{FetchKey: "secret"}, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
	})
	_, err := c.Item(context.Background(), "en-us", 42, ItemOptions{})
	if got := StatusCode(err); got != http.StatusFound {
		t.Errorf("Item through a cross-host redirect: status %d (%v), want 302", got, err)
	}
	if leaked {
		t.Error("the API key was sent to another host")
	}
}

func TestContextCanceled(t *testing.T) {
	c, _, _ := serve(t, Options{}, jsonBody(fixture(t, "item.json")))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Item(ctx, "en-us", 42, ItemOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Item with a canceled context = %v, want context.Canceled", err)
	}
}

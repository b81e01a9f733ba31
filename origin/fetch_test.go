package origin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/render"
)

// fetchHarness is a harness whose origin renders the Fetch API with a
// Renderer and follows the event log every millisecond, on an instance
// with one published post; fetchKey reads it.
type fetchHarness struct {
	*harness
	fetchKey string
	post     int64
}

func newFetchHarness(t *testing.T, cfg origin.Config) *fetchHarness {
	t.Helper()
	h := newHarness(t)
	ctx := context.Background()
	r := render.New(h.store)
	t.Cleanup(func() { r.Close() })
	cfg.Renderer = r
	cfg.ChangePoll = time.Millisecond
	h.srv = origin.New(cfg, h.store, slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); h.srv.Run(runCtx) }()
	t.Cleanup(func() { stop(); wg.Wait() })

	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	_, err := h.store.CreateModel(ctx, h.inst, content.Model{Name: "Post", Kind: "content",
		Fields: content.Fields{{Name: "title", Type: content.TypeText}}})
	check("model", err)
	_, err = h.store.CreateContainer(ctx, h.inst, "posts", "Post")
	check("container", err)
	st, err := h.store.CreateItem(ctx, h.inst, "en-us", "posts", map[string]json.RawMessage{"title": json.RawMessage(`"One"`)})
	check("item", err)
	_, err = h.store.ItemAction(ctx, h.inst, "en-us", st.ContentID, content.ActionPublish)
	check("publish", err)
	_, key, err := h.store.CreateAPIKey(ctx, h.inst, content.APIKeyInput{Name: ptr("site"), Type: "fetch"})
	check("api key", err)
	// The origin started following the event log before the content
	// above was written: wait until it has read those events, so that
	// a test's first answers are not dropped by them afterwards.
	var last int64
	check("last event", h.db.Get(&last, `SELECT max(id) FROM events`))
	waitFor(t, "the origin read the setup's events", func() bool { return origin.WatchedEvent(h.srv) >= last })
	return &fetchHarness{harness: h, fetchKey: key, post: st.ContentID}
}

// get reads a Fetch API path of the instance with the fetch key.
func (h *fetchHarness) get(path string) response {
	h.t.Helper()
	req := httptest.NewRequest("GET", "/"+h.guid+"/fetch"+path, nil)
	req.Header.Set("APIKey", h.fetchKey)
	res, err := h.srv.App().Test(req, -1)
	if err != nil {
		h.t.Fatalf("GET %s: %v", path, err)
	}
	return readResponse(h.t, "GET "+path, res)
}

// waitFor calls cond until it is true, for at most a few seconds (a bound
// on the wait, not an assertion on speed).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); time.Sleep(time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("%s: still not true after 10s", what)
		}
	}
}

// TestFetchSiteFollowsLocales: the origin keeps each instance's locales in
// memory, and serves a locale added once the event log shows it.
func TestFetchSiteFollowsLocales(t *testing.T) {
	t.Parallel()
	h := newFetchHarness(t, origin.Config{})
	item := fmt.Sprintf("/%%s/item/%d", h.post)
	if r := h.get(fmt.Sprintf(item, "en-us")); r.status != 200 {
		t.Fatalf("en-us item: %s", r)
	}
	if r := h.get(fmt.Sprintf(item, "de-de")); r.status != 404 {
		t.Fatalf("de-de item before the locale exists: %s, want 404", r)
	}
	ctx := context.Background()
	if _, err := h.store.CreateLocale(ctx, h.inst, content.Locale{Code: "de-de", Name: "Deutsch"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.SaveItem(ctx, h.inst, "de-de", h.post, map[string]json.RawMessage{"title": json.RawMessage(`"Eins"`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.ItemAction(ctx, h.inst, "de-de", h.post, content.ActionPublish); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the de-de item served", func() bool { return h.get(fmt.Sprintf(item, "de-de")).status == 200 })
}

// TestFetchRenderCacheOff: with the render cache off every answer is
// rendered, so a change shows before the origin reads it in the event log
// (here it never does: Run is not started).
func TestFetchRenderCacheOff(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		bytes int64
		fresh bool
	}{{0, false}, {-1, true}} {
		h := newHarness(t)
		r := render.New(h.store)
		t.Cleanup(func() { r.Close() })
		h.srv = origin.New(origin.Config{Renderer: r, RenderCacheBytes: tt.bytes}, h.store, slog.New(slog.NewTextHandler(testWriter{t}, nil)))
		fh := &fetchHarness{harness: h}
		ctx := context.Background()
		_, err := h.store.CreateModel(ctx, h.inst, content.Model{Name: "Post", Kind: "content", Fields: content.Fields{{Name: "title", Type: content.TypeText}}})
		if err == nil {
			_, err = h.store.CreateContainer(ctx, h.inst, "posts", "Post")
		}
		if err != nil {
			t.Fatal(err)
		}
		_, fh.fetchKey, err = h.store.CreateAPIKey(ctx, h.inst, content.APIKeyInput{Name: ptr("site"), Type: "fetch"})
		if err != nil {
			t.Fatal(err)
		}
		before := fh.get("/en-us/list/posts")
		if _, err := h.store.CreateItem(ctx, h.inst, "en-us", "posts", map[string]json.RawMessage{"title": json.RawMessage(`"One"`)}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.store.ItemAction(ctx, h.inst, "en-us", 1, content.ActionPublish); err != nil {
			t.Fatal(err)
		}
		after := fh.get("/en-us/list/posts")
		if fresh := string(after.body) != string(before.body); fresh != tt.fresh {
			t.Errorf("RenderCacheBytes %d: list after a publish %s (before %s), want fresh = %v", tt.bytes, after.body, before.body, tt.fresh)
		}
	}
}

// TestWriteBackOncePerChange: an answer the origin renders is handed to the
// write-back once, from its second read on, not at every miss (the render
// cache is off here), and again once its instance changed.
func TestWriteBackOncePerChange(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	handed := map[string]int{}
	h := newFetchHarness(t, origin.Config{RenderCacheBytes: -1,
		WriteBack: func(ctx context.Context, req fetch.Request, body []byte, tags []string) {
			mu.Lock()
			handed[req.Key()]++
			mu.Unlock()
		}})
	count := func() (n int) {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range handed {
			n += c
		}
		return n
	}
	path := fmt.Sprintf("/en-us/item/%d", h.post)
	if r := h.get(path); r.status != 200 {
		t.Fatalf("item: %s", r)
	}
	if n := count(); n != 0 {
		t.Fatalf("one read of an answer handed %d answers to the write-back, want 0", n)
	}
	for range 4 {
		if r := h.get(path); r.status != 200 {
			t.Fatalf("item: %s", r)
		}
	}
	if n := count(); n != 1 {
		t.Fatalf("5 misses of one answer handed %d answers to the write-back, want 1", n)
	}
	if _, err := h.store.SaveItem(context.Background(), h.inst, "en-us", h.post, map[string]json.RawMessage{"title": json.RawMessage(`"Two"`)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the answer handed over again after a change", func() bool {
		h.get(path)
		return count() == 2
	})
	for range 3 {
		h.get(path)
	}
	if n := count(); n != 2 {
		t.Errorf("misses after the change handed %d answers in all, want 2", n)
	}
}

// TestWriteBackFromSecondRead: a variant read once is not handed to the
// write-back, whatever its spelling; read a second time, in another
// spelling of the same request and served from the render cache, it is,
// once.
func TestWriteBackFromSecondRead(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var handed []string
	h := newFetchHarness(t, origin.Config{
		WriteBack: func(ctx context.Context, req fetch.Request, body []byte, tags []string) {
			mu.Lock()
			handed = append(handed, req.Key())
			mu.Unlock()
		}})
	got := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(handed)
	}
	for i := range 20 {
		if r := h.get(fmt.Sprintf("/en-us/list/posts?filter=fields.title[eq]%%22x%d%%22", i)); r.status != 200 {
			t.Fatalf("list: %s", r)
		}
	}
	if n := len(got()); n != 0 {
		t.Fatalf("20 variants read once each: %d handed to the write-back, want 0", n)
	}
	for _, q := range []string{"fields=title&sort=title", "Fields=fields.title&sort=fields.title&direction=asc", "fields=fields.Title&SORT=Title"} {
		if r := h.get("/en-us/list/posts?" + q); r.status != 200 {
			t.Fatalf("list: %s", r)
		}
	}
	want, err := fetch.Parse(fetch.Input{Path: "/" + h.guid + "/fetch/en-us/list/posts", RawQuery: "fields=title&sort=title"})
	if err != nil {
		t.Fatal(err)
	}
	if g := got(); !slices.Equal(g, []string{want.Key()}) {
		t.Errorf("three spellings of one variant handed %v to the write-back, want %s once", g, want.Key())
	}
}

// TestFetchMissesShareRender: misses of one fetch answer at once (one per
// edge after a publish) share one render, each request gets its answer,
// and a miss after that render renders again (the render cache is off).
func TestFetchMissesShareRender(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var mu sync.Mutex
	renders := 0
	release := make(chan struct{})
	inner := renderFunc(h)
	h.srv = origin.New(origin.Config{RenderCacheBytes: -1, Render: func(ctx context.Context, req fetch.Request) ([]byte, []string, error) {
		mu.Lock()
		renders++
		mu.Unlock()
		<-release
		return inner(ctx, req)
	}}, h.store, slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	fh := &fetchHarness{harness: h}
	ctx := context.Background()
	_, err := h.store.CreateModel(ctx, h.inst, content.Model{Name: "Post", Kind: "content", Fields: content.Fields{{Name: "title", Type: content.TypeText}}})
	if err == nil {
		_, err = h.store.CreateContainer(ctx, h.inst, "posts", "Post")
	}
	if err == nil {
		_, fh.fetchKey, err = h.store.CreateAPIKey(ctx, h.inst, content.APIKeyInput{Name: ptr("site"), Type: "fetch"})
	}
	if err != nil {
		t.Fatal(err)
	}
	const n = 5
	answers := make([]response, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); answers[i] = fh.get("/en-us/list/posts") }()
	}
	waitFor(t, "every request waits on a render", func() bool { return origin.AnswersWaiting(h.srv) == n })
	close(release)
	wg.Wait()
	for i, a := range answers {
		if a.status != 200 || string(a.body) != string(answers[0].body) {
			t.Errorf("request %d: %s, want 200 and %s", i, a, answers[0].body)
		}
	}
	if renders != 1 {
		t.Errorf("%d requests at once rendered %d times, want once", n, renders)
	}
	if a := fh.get("/en-us/list/posts"); a.status != 200 || renders != 2 {
		t.Errorf("a later miss: %s after %d renders, want 200 from a second render", a, renders)
	}
}

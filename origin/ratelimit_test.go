package origin_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/render"
)

// TestRateLimitsShared: two origins on one database share each key's
// limit, fetch keys and preview keys have their own limits, and a refusal
// is a 429 with Retry-After that no cache keeps.
func TestRateLimitsShared(t *testing.T) {
	t.Parallel()
	// A preview bucket holds PreviewBurstSeconds of its rate: a small rate
	// keeps the requests that empty it few.
	const previewRate = 2
	cfg := origin.Config{FetchRateLimit: 5, PreviewRateLimit: previewRate}
	h := newFetchHarness(t, cfg)
	r := render.New(h.store)
	t.Cleanup(func() { r.Close() })
	cfg.Renderer = r
	second := origin.New(cfg, h.store, slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	origin.SetRateClock(h.srv, clock)
	origin.SetRateClock(second, clock)
	_, previewKey, err := h.store.CreateAPIKey(context.Background(), h.inst, content.APIKeyInput{Name: ptr("preview"), Type: "preview"})
	if err != nil {
		t.Fatal(err)
	}
	// count sends n requests for path with key, alternating between the
	// two origins, and returns how many were served.
	count := func(apiType, key string, n int) int {
		t.Helper()
		served := 0
		for i := 0; i < n; i++ {
			srv := h.srv
			if i%2 == 1 {
				srv = second
			}
			req := httptest.NewRequest("GET", "/"+h.guid+"/"+apiType+"/en-us/list/posts", nil)
			req.Header.Set("APIKey", key)
			res, err := srv.App().Test(req, -1)
			if err != nil {
				t.Fatal(err)
			}
			r := readResponse(t, "GET", res)
			switch r.status {
			case 200:
				served++
			case 429:
				if r.header.Get("Retry-After") != "1" || r.header.Get("Cache-Control") != "no-store" {
					t.Errorf("429 with Retry-After %q and Cache-Control %q, want 1 and no-store", r.header.Get("Retry-After"), r.header.Get("Cache-Control"))
				}
			default:
				t.Fatalf("GET %s = %s", apiType, r)
			}
		}
		return served
	}
	if got := count("fetch", h.fetchKey, 20); got != 5 {
		t.Errorf("two origins served %d fetch requests of one key in a stopped second, want the limit 5 once", got)
	}
	bucket := previewRate * origin.PreviewBurstSeconds
	if got := count("preview", previewKey, bucket+bucket/2); got != bucket {
		t.Errorf("two origins served %d preview requests of one key in a stopped second, want the preview bucket (%d) once", got, bucket)
	}
	now = now.Add(time.Second)
	if got := count("fetch", h.fetchKey, 20); got != 5 {
		t.Errorf("a second later: %d fetch requests, want 5", got)
	}
}

package compat

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/origin"
)

// TestFetchStatus is the Fetch API's status table, route by route: keys,
// unknown things, bad parameters, and the cache policy of each answer.
func TestFetchStatus(t *testing.T) {
	s := start(t)
	ctx := context.Background()
	g := s.inst.Guid
	posts, err := s.store.Items(ctx, s.inst, "en-us", "posts", 250, 0)
	if err != nil {
		t.Fatal(err)
	}
	post := posts.Items[0].ContentID
	// An item that was never published, and one that was unpublished.
	draft, err := s.store.CreateItem(ctx, s.inst, "en-us", "posts", map[string]json.RawMessage{"Title": json.RawMessage(`"Draft"`), "Slug": json.RawMessage(`"draft"`)})
	if err != nil {
		t.Fatal(err)
	}
	unpub := posts.Items[1].ContentID
	if _, err := s.store.ItemAction(ctx, s.inst, "en-us", unpub, content.ActionUnpublish); err != nil {
		t.Fatal(err)
	}
	pages, _ := s.store.Pages(ctx, s.inst, "en-us", "website")
	page := pages[0].PageID

	name := "x"
	_, disabled, _ := s.store.CreateAPIKey(ctx, s.inst, content.APIKeyInput{Name: &name, Type: "fetch"})
	keys, _ := s.store.APIKeys(ctx, s.inst)
	off := false
	if _, err := s.store.UpdateAPIKey(ctx, s.inst, keys[len(keys)-1].ID, content.APIKeyInput{Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	soon := time.Now().Add(1500 * time.Millisecond)
	_, expiring, _ := s.store.CreateAPIKey(ctx, s.inst, content.APIKeyInput{Name: &name, Type: "fetch", ExpiresAt: &soon})
	other, err := s.store.CreateInstance(ctx, "other", []content.Locale{{Code: "en-us", Name: "English"}})
	if err != nil {
		t.Fatal(err)
	}
	_, otherKey, _ := s.store.CreateAPIKey(ctx, other, content.APIKeyInput{Name: &name, Type: "fetch"})

	f, p := s.fetchKey, s.previewKey
	cases := []struct {
		path   string
		key    string
		status int
		detail string // a part of the problem detail, for errors
	}{
		{fmt.Sprintf("/%s/fetch/en-us/item/%d", g, post), f, 200, ""},
		{fmt.Sprintf("/%s/preview/en-us/item/%d", g, draft.ContentID), p, 200, ""},
		{fmt.Sprintf("/%s/fetch/en-us/item/%d", g, post), "", 401, "missing APIKey"},
		{fmt.Sprintf("/%s/fetch/en-us/item/%d", g, post), "live_nope", 401, "not valid"},
		{fmt.Sprintf("/%s/fetch/en-us/item/%d", g, post), disabled, 401, "disabled"},
		{fmt.Sprintf("/%s/fetch/en-us/item/%d", g, post), otherKey, 401, "not valid"},
		{fmt.Sprintf("/%s/fetch/en-us/item/%d", g, post), p, 403, "preview key"},
		{fmt.Sprintf("/%s/preview/en-us/item/%d", g, post), f, 403, "fetch key"},
		{fmt.Sprintf("/%s/fetch/xx-yy/item/%d", g, post), f, 404, "en-us, fr-ca"},
		{fmt.Sprintf("/%s/fetch/en-us/item/999999", g), f, 404, ""},
		{fmt.Sprintf("/%s/fetch/en-us/item/%d", g, draft.ContentID), f, 404, ""},
		{fmt.Sprintf("/%s/fetch/en-us/item/%d", g, unpub), f, 404, ""},
		{fmt.Sprintf("/%s/preview/en-us/item/%d", g, unpub), p, 200, ""},
		{fmt.Sprintf("/%s/fetch/en-us/item/abc", g), f, 400, ""},
		{fmt.Sprintf("/%s/fetch/en-us/item/%d?contentLinkDepth=6", g, post), f, 400, "contentLinkDepth"},
		{fmt.Sprintf("/%s/fetch/en-us/list/posts", g), f, 200, ""},
		{fmt.Sprintf("/%s/fetch/en-us/list/nosuchlist", g), f, 404, ""},
		{fmt.Sprintf("/%s/fetch/en-us/list/posts?take=0", g), f, 400, "take"},
		{fmt.Sprintf("/%s/fetch/en-us/list/posts?take=251", g), f, 400, "take"},
		{fmt.Sprintf("/%s/fetch/en-us/list/posts?skip=-1", g), f, 400, "skip"},
		{fmt.Sprintf("/%s/fetch/en-us/list/posts?filter=fields.Title%%5Bzz%%5D1", g), f, 400, "filter"},
		{fmt.Sprintf("/%s/fetch/en-us/page/%d", g, page), f, 200, ""},
		{fmt.Sprintf("/%s/fetch/en-us/page/999999", g), f, 404, ""},
		{fmt.Sprintf("/%s/fetch/en-us/page/website?path=/nope", g), f, 404, ""},
		{fmt.Sprintf("/%s/fetch/en-us/sitemap/flat/website", g), f, 200, ""},
		{fmt.Sprintf("/%s/fetch/en-us/sitemap/nested/website", g), f, 200, ""},
		{fmt.Sprintf("/%s/fetch/en-us/sitemap/flat/nochannel", g), f, 404, ""},
		{fmt.Sprintf("/%s/fetch/en-us/sitemap/nested/nochannel", g), f, 404, ""},
		{"/nosuchguid/fetch/en-us/item/1", f, 401, ""},
	}
	for _, c := range cases {
		resp, body := s.do(t, c.path, map[string]string{"APIKey": c.key})
		if resp.StatusCode != c.status {
			t.Errorf("GET %s (key %.8s) = %d, want %d: %s", c.path, c.key, resp.StatusCode, c.status, body)
			continue
		}
		cc := resp.Header.Get("Cache-Control")
		preview := strings.Contains(c.path, "/preview/")
		switch {
		case c.status == 200 && preview:
			if cc != "no-store" {
				t.Errorf("GET %s: Cache-Control %q, want no-store for preview", c.path, cc)
			}
		case c.status == 200:
			for _, part := range []string{"s-maxage=", "stale-while-revalidate=", "stale-if-error="} {
				if !strings.Contains(cc, part) {
					t.Errorf("GET %s: Cache-Control %q lacks %s", c.path, cc, part)
				}
			}
			if resp.Header.Get("ETag") == "" {
				t.Errorf("GET %s: no ETag", c.path)
			}
		case c.status == 401 || c.status == 403:
			if cc != "no-store" {
				t.Errorf("GET %s: Cache-Control %q, want no-store for %d", c.path, cc, c.status)
			}
		}
		if c.status >= 400 {
			if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("GET %s: Content-Type %q, want application/problem+json", c.path, ct)
			}
			var doc map[string]any
			if err := json.Unmarshal(body, &doc); err != nil || doc["status"] != float64(c.status) || doc["title"] == nil || doc["type"] == nil {
				t.Errorf("GET %s: not a problem document: %s", c.path, body)
			}
			if d, _ := doc["detail"].(string); !strings.Contains(d, c.detail) {
				t.Errorf("GET %s: detail %q does not mention %q", c.path, d, c.detail)
			}
		}
	}

	// A conditional GET with the ETag answers 304.
	path := fmt.Sprintf("/%s/fetch/en-us/item/%d", g, post)
	resp, _ := s.do(t, path, map[string]string{"APIKey": f})
	resp2, _ := s.do(t, path, map[string]string{"APIKey": f, "If-None-Match": resp.Header.Get("ETag")})
	if resp2.StatusCode != 304 {
		t.Errorf("conditional GET = %d, want 304", resp2.StatusCode)
	}

	// An expired key: valid until its expiry, then 401 (the key cache lives
	// one second, less than the wait).
	if resp, body := s.do(t, path, map[string]string{"APIKey": expiring}); resp.StatusCode != 200 {
		t.Fatalf("key before expiry = %d: %s", resp.StatusCode, body)
	}
	time.Sleep(time.Until(soon) + 1100*time.Millisecond)
	if resp, body := s.do(t, path, map[string]string{"APIKey": expiring}); resp.StatusCode != 401 || !strings.Contains(string(body), "expired") {
		t.Errorf("expired key = %d %s, want 401 expired", resp.StatusCode, body)
	}
}

// TestFetchRateLimit: direct requests over the per-key limit get 429 with
// Retry-After and no-store; another key is not affected.
func TestFetchRateLimit(t *testing.T) {
	s := startWith(t, origin.Config{FetchRateLimit: 1})
	path := fmt.Sprintf("/%s/fetch/en-us/sitemap/flat/website", s.inst.Guid)
	limited := 0
	for i := 0; i < 10; i++ {
		resp, _ := s.do(t, path, map[string]string{"APIKey": s.fetchKey})
		if resp.StatusCode == 429 {
			limited++
			if resp.Header.Get("Retry-After") == "" || resp.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("429 without Retry-After or no-store: %v", resp.Header)
			}
		}
	}
	if limited == 0 {
		t.Errorf("10 requests with a limit of 1/s: none limited")
	}
	pv := fmt.Sprintf("/%s/preview/en-us/sitemap/flat/website", s.inst.Guid)
	if resp, _ := s.do(t, pv, map[string]string{"APIKey": s.previewKey}); resp.StatusCode != 200 {
		t.Errorf("another key = %d, want 200", resp.StatusCode)
	}
}

// TestFetchFreshAfterPublish: the origin caches fetch answers, and a publish
// reaches readers once the origin has read the event log.
func TestFetchFreshAfterPublish(t *testing.T) {
	s := start(t)
	ctx := context.Background()
	posts, err := s.store.Items(ctx, s.inst, "en-us", "posts", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	id := posts.Items[0].ContentID
	path := fmt.Sprintf("/%s/fetch/en-us/item/%d", s.inst.Guid, id)
	list := fmt.Sprintf("/%s/fetch/en-us/list/posts?take=250", s.inst.Guid)
	for _, p := range []string{path, list} {
		if resp, body := s.do(t, p, map[string]string{"APIKey": s.fetchKey}); resp.StatusCode != 200 {
			t.Fatalf("GET %s = %d %s", p, resp.StatusCode, body)
		}
	}
	if _, err := s.store.SaveItem(ctx, s.inst, "en-us", id, map[string]json.RawMessage{"Title": json.RawMessage(`"Fresh title"`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.store.ItemAction(ctx, s.inst, "en-us", id, content.ActionPublish); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, list} {
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, body := s.do(t, p, map[string]string{"APIKey": s.fetchKey})
			if strings.Contains(string(body), "Fresh title") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("GET %s still serves the old version 10 s after the publish", p)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

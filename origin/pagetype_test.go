package origin_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/origin"
)

// TestPageTypeChanges checks that the page settings route (PUT
// /{locale}/pages/{id}) changes a page's type both ways with pageType
// (dynamic -> static, static -> folder -> static, -> link and back, ->
// dynamic), that the published sitemap follows in the Fetch API, and that
// a pageType the other members contradict answers 400 and changes nothing.
func TestPageTypeChanges(t *testing.T) {
	t.Parallel()
	h := newFetchHarness(t, origin.Config{RenderCacheBytes: -1})
	type m = map[string]any
	h.must(201, "POST", "/page-models", m{"name": "OneColumn", "zones": []string{"Main"}})
	var p content.Page
	h.must(201, "POST", "/en-us/pages", m{"title": "Posts", "pageModel": "OneColumn",
		"dynamic": m{"referenceName": "posts", "pathField": "title"}}).decode(t, &p)
	path := fmt.Sprintf("/en-us/pages/%d", p.PageID)
	sitemap := func() map[string]json.RawMessage {
		t.Helper()
		r := h.get("/en-us/sitemap/flat/website")
		if r.status != 200 {
			t.Fatalf("flat sitemap: %s", r)
		}
		var sm map[string]json.RawMessage
		r.decode(t, &sm)
		return sm
	}
	for _, step := range []struct {
		body     m
		wantType string
		nodes    []string // paths of the flat sitemap, published after the change
	}{
		{nil, content.PageDynamic, []string{"/one"}},
		{m{"pageType": "static"}, content.PageStatic, []string{"/posts"}},
		{m{"pageType": "folder"}, content.PageFolder, nil},
		{m{"pageType": "static"}, content.PageStatic, []string{"/posts"}},
		{m{"pageType": "link", "redirectUrl": "https://example.com/"}, content.PageLink, []string{"/posts"}},
		{m{"pageType": "static", "redirectUrl": ""}, content.PageStatic, []string{"/posts"}},
		{m{"pageType": "dynamic", "dynamic": m{"referenceName": "posts", "pathField": "title"}}, content.PageDynamic, []string{"/one"}},
	} {
		if step.body != nil {
			h.must(200, "PUT", path, step.body).decode(t, &p)
		}
		if p.PageType != step.wantType || (p.Dynamic != nil) != (step.wantType == content.PageDynamic) {
			t.Errorf("after %v: pageType %q dynamic %+v, want %q", step.body, p.PageType, p.Dynamic, step.wantType)
		}
		h.must(200, "POST", path+"/publish", nil)
		sm := sitemap()
		for _, n := range step.nodes {
			if sm[n] == nil {
				t.Errorf("after %v: the flat sitemap has no %s: %v", step.body, n, keys(sm))
			}
		}
		if step.wantType == content.PageDynamic && sm["/posts"] != nil {
			t.Errorf("after %v: a dynamic page has a node of its own: %v", step.body, keys(sm))
		}
		if step.wantType != content.PageDynamic && sm["/one"] != nil {
			t.Errorf("after %v: the item node stayed: %v", step.body, keys(sm))
		}
	}

	h.must(200, "PUT", path, m{"pageType": "static"})
	before := h.fingerprint()
	for _, c := range []struct {
		body  m
		field string
	}{
		{m{"pageType": "weird"}, "pageType"},
		{m{"pageType": "static", "folder": true}, "folder"},
		{m{"pageType": "folder", "folder": false}, "folder"},
		{m{"pageType": "dynamic"}, "dynamic"},
		{m{"pageType": "static", "dynamic": m{"referenceName": "posts", "pathField": "title"}}, "dynamic"},
		{m{"pageType": "link"}, "redirectUrl"},
		{m{"pageType": "static", "redirectUrl": "https://example.com/"}, "redirectUrl"},
		{m{"pageType": "dynamic", "dynamic": m{"referenceName": "posts", "pathField": "nope"}}, "dynamic.pathField"},
		{m{"pageType": 3}, "pageType"},
	} {
		checkProblem(t, fmt.Sprintf("PUT %v", c.body), h.as(content.RoleFull, request{"PUT", path, c.body}), 400, c.field)
	}
	if ch := changedTables(before, h.fingerprint()); len(ch) > 0 {
		t.Errorf("a refused pageType changed tables %v", ch)
	}
}

func keys(sm map[string]json.RawMessage) []string {
	var out []string
	for k := range sm {
		out = append(out, k)
	}
	return out
}

package origin_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/content"
)

// TestPageNamesAndPositions checks chosen and transliterated names, a
// rename that redirects the old path, and moving pages among siblings.
func TestPageNamesAndPositions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := h.populate()
	type m = map[string]any
	newPage := func(body m) content.Page {
		t.Helper()
		var p content.Page
		h.must(201, "POST", "/en-us/pages", body).decode(t, &p)
		return p
	}
	if p := newPage(m{"title": "О нас", "pageModel": "Main"}); p.Name != "o-nas" {
		t.Errorf("page titled О нас: name %q, want o-nas", p.Name)
	}
	if p := newPage(m{"title": "会社概要", "pageModel": "Main"}); p.Name != "hui-she-gai-yao" {
		t.Errorf("page titled 会社概要: name %q", p.Name)
	}
	chosen := newPage(m{"title": "Whatever", "name": "team-2026", "pageModel": "Main", "parentPageID": w.parent})
	if chosen.Name != "team-2026" || chosen.Path != "/home/team-2026" {
		t.Errorf("chosen name: %q at %q", chosen.Name, chosen.Path)
	}
	checkProblem(t, "a sibling's name", h.as(content.RoleFull, request{"POST", "/en-us/pages", m{"title": "X", "name": "about", "pageModel": "Main", "parentPageID": w.parent}}), 409, "")

	// Rename: the old path redirects to the new one.
	var renamed content.Page
	h.must(200, "PUT", fmt.Sprintf("/en-us/pages/%d", w.child), m{"name": "about-us"}).decode(t, &renamed)
	if renamed.Path != "/home/about-us" {
		t.Errorf("renamed path = %q", renamed.Path)
	}
	var reds []content.Redirection
	h.must(200, "GET", "/redirections", nil).decode(t, &reds)
	if len(reds) != 1 || reds[0].OriginURL != "/home/about" || reds[0].DestinationURL != "/home/about-us" || reds[0].StatusCode != 301 {
		t.Errorf("redirections after rename = %+v", reds)
	}
	// Back again: no loop, one redirection the other way.
	h.must(200, "PUT", fmt.Sprintf("/en-us/pages/%d", w.child), m{"name": "about"})
	reds = nil
	h.must(200, "GET", "/redirections", nil).decode(t, &reds)
	if len(reds) != 1 || reds[0].OriginURL != "/home/about-us" || reds[0].DestinationURL != "/home/about" {
		t.Errorf("redirections after renaming back = %+v", reds)
	}

	// Positions: Home's children are about, team-2026; move team-2026
	// first, then Contact under Home before about.
	children := func() []string {
		var out struct {
			Items []content.Page `json:"items"`
		}
		h.must(200, "GET", "/en-us/pages?take=500", nil).decode(t, &out)
		var names []string
		for _, p := range out.Items {
			if p.ParentPageID != nil && *p.ParentPageID == w.parent {
				names = append(names, p.Name)
			}
		}
		return names
	}
	if got := children(); !reflect.DeepEqual(got, []string{"about", "team-2026"}) {
		t.Fatalf("children = %v", got)
	}
	pos := fmt.Sprintf("/en-us/pages/%d/position", chosen.PageID)
	h.must(200, "PUT", pos, m{"beforePageID": w.child})
	if got := children(); !reflect.DeepEqual(got, []string{"team-2026", "about"}) {
		t.Errorf("after moving team-2026 first: %v", got)
	}
	h.must(200, "PUT", pos, m{"beforePageID": nil})
	if got := children(); !reflect.DeepEqual(got, []string{"about", "team-2026"}) {
		t.Errorf("after moving team-2026 last: %v", got)
	}
	var moved content.Page
	h.must(200, "PUT", fmt.Sprintf("/en-us/pages/%d/position", w.lone), m{"parentPageID": w.parent, "beforePageID": w.child}).decode(t, &moved)
	if got := children(); !reflect.DeepEqual(got, []string{"contact", "about", "team-2026"}) || moved.Path != "/home/contact" {
		t.Errorf("after moving Contact under Home: %v, path %q", got, moved.Path)
	}
	// Refused: a cycle, a sibling of another parent, another channel.
	checkProblem(t, "under its own child", h.as(content.RoleFull, request{"PUT", fmt.Sprintf("/en-us/pages/%d/position", w.parent), m{"parentPageID": w.child}}), 400, "parentPageID")
	checkProblem(t, "before a page of another parent", h.as(content.RoleFull, request{"PUT", pos, m{"parentPageID": nil, "beforePageID": w.child}}), 400, "beforePageID")
}

// TestBatch checks that a batch takes its action on every copy it names,
// or, when one cannot, on none.
func TestBatch(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := h.populate()
	type m = map[string]any
	before := h.fingerprint()
	// The deleted item cannot be published: nothing is.
	r := h.as(content.RoleFull, request{"POST", "/en-us/batch", m{"action": "publish", "items": []int64{w.article, w.deleted}, "pages": []int64{w.lone}}})
	doc := checkProblem(t, "batch with a deleted item", r, 409, "")
	if d, _ := doc["detail"].(string); !strings.Contains(d, fmt.Sprintf("item %d", w.deleted)) {
		t.Errorf("409 detail %q does not name item %d", d, w.deleted)
	}
	if ch := changedTables(before, h.fingerprint()); len(ch) > 0 {
		t.Errorf("a refused batch changed tables %v", ch)
	}
	// An editor may not publish.
	checkProblem(t, "batch publish as editor", h.as(content.RoleEdit, request{"POST", "/en-us/batch", m{"action": "publish", "items": []int64{w.article}}}), 403, "")
	var out struct {
		Items []struct {
			ContentID int64         `json:"contentID"`
			State     content.State `json:"state"`
		} `json:"items"`
		Pages []struct {
			PageID int64         `json:"pageID"`
			State  content.State `json:"state"`
		} `json:"pages"`
	}
	h.must(200, "POST", "/en-us/batch", m{"action": "publish", "items": []int64{w.article, w.extra}, "pages": []int64{w.lone, w.parent}}).decode(t, &out)
	if len(out.Items) != 2 || out.Items[1].ContentID != w.extra || out.Items[1].State != content.Published || len(out.Pages) != 2 || out.Pages[0].State != content.Published {
		t.Errorf("batch publish = %+v", out)
	}
	var it content.Item
	h.must(200, "GET", fmt.Sprintf("/en-us/items/%d", w.extra), nil).decode(t, &it)
	if it.State != content.Published {
		t.Errorf("after batch: item %d is %s", w.extra, it.State)
	}
	h.must(200, "POST", "/en-us/batch", m{"action": "unpublish", "pages": []int64{w.lone}})
}

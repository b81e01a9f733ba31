package origin_test

import (
	"fmt"
	"testing"

	"github.com/edgecms/edgecms/content"
)

// TestModelEvolves checks PUT /models/{name}: a field added, one renamed
// with its values (working, published and versions), one removed only
// with force, compatible type changes, and the model event in the log.
func TestModelEvolves(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := h.populate()
	type m = map[string]any
	item := fmt.Sprintf("/en-us/items/%d", w.article)
	h.must(200, "PUT", item, m{"fields": m{"body": "<p>Body</p>", "count": 3}})
	h.must(200, "POST", item+"/publish", nil)
	r := h.must(200, "GET", "/models/Article", nil)
	etag := r.header.Get("ETag")
	fields := []m{
		{"name": "headline", "renameFrom": "title", "type": "text", "required": true},
		{"name": "slug", "type": "text"},
		{"name": "body", "type": "text"},     // html -> text
		{"name": "count", "type": "decimal"}, // number -> decimal
		{"name": "code", "type": "text", "shared": true},
		{"name": "category", "type": "item", "container": "categories"},
		{"name": "related", "type": "list", "container": "articles"}, // a self link
		{"name": "next", "type": "item", "container": "notYet"},      // a container still to come
	}
	// Removing nothing: force has nothing to do.
	checkProblem(t, "force on nothing", h.as(content.RoleFull, request{"PUT", "/models/Article?force=true", m{"fields": fields}}), 400, "force")
	r = h.ifMatch(etag, request{"PUT", "/models/Article", m{"fields": fields}})
	if r.status != 200 {
		t.Fatalf("PUT /models/Article = %s", r)
	}
	// The old ETag is stale now.
	checkProblem(t, "stale If-Match", h.ifMatch(etag, request{"PUT", "/models/Article", m{"fields": fields}}), 412, "")
	var it content.Item
	h.must(200, "GET", item, nil).decode(t, &it)
	if string(it.Fields["headline"]) != `"First"` || it.Fields["title"] != nil || string(it.Fields["count"]) != "3" {
		t.Errorf("after rename: fields = %s", it.Fields)
	}
	var old struct {
		Fields map[string]any `json:"fields"`
	}
	h.must(200, "GET", fmt.Sprintf("%s/versions/%d", item, w.articleVersion), nil).decode(t, &old)
	if old.Fields["headline"] != "First" {
		t.Errorf("after rename: first version = %v, want headline kept", old.Fields)
	}
	var events int
	if err := h.db.Get(&events, `SELECT count(*) FROM events WHERE subject = 'model' AND reference_name = 'Article'`); err != nil || events != 2 {
		t.Errorf("model events = %d (%v), want one per locale", events, err)
	}
	// Self link: an article lists articles.
	h.must(200, "PUT", item, m{"fields": m{"related": m{"contentIDs": []int64{w.extra}}}})
	// A link to a container that does not exist yet, or to an item of
	// another container, is refused.
	checkProblem(t, "link to a missing container", h.as(content.RoleFull, request{"PUT", item, m{"fields": m{"next": m{"contentID": w.extra}}}}), 400, "fields.next")
	checkProblem(t, "link to another container's item", h.as(content.RoleFull, request{"PUT", item, m{"fields": m{"category": m{"contentID": w.extra}}}}), 400, "fields.category")

	// Removing a field with values needs force, and says how many.
	without := []m{{"name": "headline", "type": "text", "required": true}}
	without = append(without, fields[2:]...)
	r = h.as(content.RoleFull, request{"PUT", "/models/Article", m{"fields": without}})
	doc := checkProblem(t, "remove slug", r, 409, "")
	if fmt.Sprint(doc["fields"]) != "[map[items:2 name:slug]]" {
		t.Errorf("409 fields = %v, want slug held by 2 items", doc["fields"])
	}
	h.must(200, "PUT", "/models/Article?force=true", m{"fields": without})
	it = content.Item{}
	h.must(200, "GET", item, nil).decode(t, &it)
	if it.Fields["slug"] != nil {
		t.Errorf("after removal: fields = %s", it.Fields)
	}
}

// TestPageModelEvolves checks PUT /page-models/{name}: a zone renamed with
// its components, one added, one removed only with force.
func TestPageModelEvolves(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := h.populate()
	type m = map[string]any
	zones := []any{m{"name": "Main", "renameFrom": "MainContentZone"}, "Sidebar", "Footer"}
	h.must(200, "PUT", "/page-models/Main", m{"zones": zones})
	var p content.Page
	h.must(200, "GET", fmt.Sprintf("/en-us/pages/%d", w.parent), nil).decode(t, &p)
	if len(p.Zones["Main"]) != 1 || p.Zones["Main"][0].ContentID != w.component || p.Zones["MainContentZone"] != nil {
		t.Errorf("after rename: zones = %+v", p.Zones)
	}
	h.must(201, "POST", fmt.Sprintf("/en-us/pages/%d/zones/Footer", w.parent), m{"module": "Hero", "fields": m{"heading": "Foot"}})
	checkProblem(t, "remove Main", h.as(content.RoleFull, request{"PUT", "/page-models/Main", m{"zones": []any{"Sidebar", "Footer"}}}), 409, "")
	h.must(200, "PUT", "/page-models/Main?force=true", m{"zones": []any{"Sidebar", "Footer"}})
	p = content.Page{}
	h.must(200, "GET", fmt.Sprintf("/en-us/pages/%d", w.parent), nil).decode(t, &p)
	if _, ok := p.Zones["Main"]; ok || len(p.Zones["Footer"]) != 1 {
		t.Errorf("after removal: zones = %+v", p.Zones)
	}
}

// TestLocalesChannelsContainers checks PATCH /locales/{code}, DELETE
// /channels/{name} once its pages are deleted, and DELETE
// /containers/{ref} once every item it held is deleted.
func TestLocalesChannelsContainers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := h.populate()
	type m = map[string]any
	h.must(200, "PATCH", "/locales/fr-ca", m{"name": "Français", "isDefault": true})
	var ls []content.Locale
	h.must(200, "GET", "/locales", nil).decode(t, &ls)
	if len(ls) != 2 || ls[0].Code != "fr-ca" || !ls[0].IsDefault || ls[1].IsDefault || ls[0].Name != "Français" {
		t.Errorf("locales = %+v, want fr-ca the default, first", ls)
	}
	checkProblem(t, "delete legal with a page", h.as(content.RoleFull, request{"DELETE", "/channels/legal", nil}), 409, "")
	h.must(204, "DELETE", fmt.Sprintf("/en-us/pages/%d", w.footerPage), nil)
	h.must(204, "DELETE", "/channels/legal", nil)

	var st content.Status
	h.must(201, "POST", "/containers", m{"referenceName": "drafts", "model": "Article"})
	h.must(201, "POST", "/en-us/items", m{"referenceName": "drafts", "fields": m{"title": "Draft"}}).decode(t, &st)
	checkProblem(t, "delete drafts with an item", h.as(content.RoleFull, request{"DELETE", "/containers/drafts", nil}), 409, "")
	h.must(204, "DELETE", fmt.Sprintf("/en-us/items/%d", st.ContentID), nil)
	h.must(204, "DELETE", "/containers/drafts", nil)
}

// TestSearchFollowsRenames checks that a renamed field stays searchable.
func TestSearchFollowsRenames(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.populate()
	type m = map[string]any
	var p content.ItemPage
	h.must(200, "GET", "/en-us/items?q=first", nil).decode(t, &p)
	if p.TotalCount != 1 {
		t.Fatalf("q=first before the rename: %d items", p.TotalCount)
	}
	h.must(200, "PUT", "/models/Article", m{"fields": []m{{"name": "headline", "renameFrom": "title", "type": "text"},
		{"name": "slug", "type": "text"}, {"name": "body", "type": "html"}, {"name": "count", "type": "number"},
		{"name": "code", "type": "text", "shared": true}, {"name": "category", "type": "item", "container": "categories"}}})
	h.must(200, "GET", "/en-us/items?q=first", nil).decode(t, &p)
	if p.TotalCount != 1 {
		t.Errorf("q=first after renaming title to headline: %d items", p.TotalCount)
	}
}

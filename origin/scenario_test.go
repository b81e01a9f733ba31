package origin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
)

// These tests walk the management API the way a user does, through HTTP
// only, and check what each step answers.

type m = map[string]any

// site creates, through HTTP, the models and containers the scenarios use:
// Category and Article (with a shared field and an item link) in containers
// categories and articles, the component Hero and the page model Main.
func site(h *harness) {
	h.t.Helper()
	h.must(201, "POST", "/models", m{"name": "Category", "kind": "content", "fields": []m{{"name": "title", "type": "text"}}})
	h.must(201, "POST", "/containers", m{"referenceName": "categories", "model": "Category"})
	h.must(201, "POST", "/models", m{"name": "Article", "kind": "content", "fields": []m{
		{"name": "title", "type": "text", "required": true},
		{"name": "slug", "type": "text"},
		{"name": "count", "type": "number"},
		{"name": "code", "type": "text", "shared": true},
		{"name": "category", "type": "item", "container": "CATEGORIES"},
	}})
	h.must(201, "POST", "/containers", m{"referenceName": "articles", "model": "Article"})
	h.must(201, "POST", "/models", m{"name": "Hero", "kind": "component", "fields": []m{{"name": "heading", "type": "text"}}})
	h.must(201, "POST", "/page-models", m{"name": "Main", "zones": []string{"MainContentZone", "Sidebar"}})
}

func getItem(h *harness, locale string, id int64) content.Item {
	h.t.Helper()
	var it content.Item
	h.must(200, "GET", fmt.Sprintf("/%s/items/%d", locale, id), nil).decode(h.t, &it)
	return it
}

func getPage(h *harness, locale string, id int64) content.Page {
	h.t.Helper()
	var p content.Page
	h.must(200, "GET", fmt.Sprintf("/%s/pages/%d", locale, id), nil).decode(h.t, &p)
	return p
}

func status(h *harness, want int, method, path string, body any) content.Status {
	h.t.Helper()
	var st content.Status
	h.must(want, method, path, body).decode(h.t, &st)
	return st
}

func eventCount(h *harness) int {
	h.t.Helper()
	var n int
	if err := h.db.Get(&n, `SELECT count(*) FROM events`); err != nil {
		h.t.Fatal(err)
	}
	return n
}

func TestLocalesScenario(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var ls []content.Locale
	h.must(200, "GET", "/locales", nil).decode(t, &ls)
	want := []content.Locale{{Code: "en-us", Name: "English", IsDefault: true}, {Code: "fr-ca", Name: "Français (Canada)"}}
	if !reflect.DeepEqual(ls, want) {
		t.Errorf("GET /locales = %+v, want %+v", ls, want)
	}
	var l content.Locale
	h.must(201, "POST", "/locales", m{"code": "de-DE", "name": " Deutsch "}).decode(t, &l)
	if want := (content.Locale{Code: "de-DE", Name: "Deutsch"}); l != want {
		t.Errorf("POST /locales = %+v, want %+v", l, want)
	}
	h.must(200, "GET", "/locales", nil).decode(t, &ls)
	if len(ls) != 3 || ls[2].Code != "de-DE" {
		t.Errorf("GET /locales after adding de-DE = %+v", ls)
	}
	// The lower-case form the SDKs send resolves to the configured code.
	h.must(200, "GET", "/de-de/pages", nil)
	h.must(204, "DELETE", "/locales/de-DE", nil)
	h.must(200, "GET", "/locales", nil).decode(t, &ls)
	if len(ls) != 2 {
		t.Errorf("GET /locales after deleting de-DE = %+v, want 2 locales", ls)
	}
	// A locale in use cannot go.
	site(h)
	h.must(201, "POST", "/fr-ca/items", m{"referenceName": "articles", "fields": m{"title": "Bonjour"}})
	checkProblem(t, "DELETE /locales/fr-ca in use", h.as(content.RoleFull, request{"DELETE", "/locales/fr-ca", nil}), 409, "")
}

func TestTokensScenario(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.must(201, "POST", "/tokens", m{"name": "ci", "role": "publish"})
	var created struct {
		ID    int64        `json:"id"`
		Name  string       `json:"name"`
		Role  content.Role `json:"role"`
		Token string       `json:"token"`
	}
	r.decode(t, &created)
	if created.ID == 0 || created.Name != "ci" || created.Role != content.RolePublish || !strings.HasPrefix(created.Token, "mt_") {
		t.Fatalf("POST /tokens = %s", r.body)
	}
	// Shown once: the list has no secrets.
	list := h.must(200, "GET", "/tokens", nil)
	if strings.Contains(string(list.body), created.Token) || strings.Contains(string(list.body), `"token"`) {
		t.Errorf("GET /tokens shows a secret: %s", list.body)
	}
	var ts []content.Token
	list.decode(t, &ts)
	if len(ts) != 5 || ts[4].Name != "ci" || ts[4].Role != content.RolePublish {
		t.Errorf("GET /tokens = %s, want the 4 test tokens and ci", list.body)
	}
	// Usable, with its role.
	if r := h.withToken(created.Token, request{"GET", "/locales", nil}); r.status != 200 {
		t.Errorf("GET /locales with the new token = %s, want 200", r)
	}
	checkProblem(t, "POST /models with a publish token", h.withToken(created.Token, request{"POST", "/models", m{"name": "X", "kind": "content", "fields": []m{{"name": "a", "type": "text"}}}}), 403, "")
	// Revoked, it no longer authenticates.
	h.must(204, "DELETE", fmt.Sprintf("/tokens/%d", created.ID), nil)
	checkProblem(t, "GET /locales with a revoked token", h.withToken(created.Token, request{"GET", "/locales", nil}), 401, "")
	checkProblem(t, "DELETE a revoked token", h.as(content.RoleFull, request{"DELETE", fmt.Sprintf("/tokens/%d", created.ID), nil}), 404, "")
}

type apiKeyJSON struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	Type      string     `json:"type"`
	ExpiresAt *time.Time `json:"expiresAt"`
	Enabled   bool       `json:"enabled"`
	Key       string     `json:"key"`
}

func TestAPIKeysScenario(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	var live, preview apiKeyJSON
	h.must(201, "POST", "/apikeys", m{"name": "site", "type": "fetch"}).decode(t, &live)
	if live.ID == 0 || live.Name != "site" || live.Type != "fetch" || !live.Enabled || live.ExpiresAt != nil || !strings.HasPrefix(live.Key, "live_") {
		t.Errorf("POST /apikeys (fetch) = %+v", live)
	}
	expiry := time.Now().Add(30 * 24 * time.Hour).UTC().Truncate(time.Second)
	h.must(201, "POST", "/apikeys", m{"name": "drafts", "type": "preview", "expiresAt": expiry}).decode(t, &preview)
	if preview.Type != "preview" || !strings.HasPrefix(preview.Key, "preview_") || preview.ExpiresAt == nil || !preview.ExpiresAt.Equal(expiry) {
		t.Errorf("POST /apikeys (preview) = %+v, want expiry %v", preview, expiry)
	}
	// The key works: it is the stored key, usable.
	k, err := h.store.LookupAPIKey(ctx, h.guid, live.Key)
	if err != nil || k.ID != live.ID || !k.Usable(time.Now()) {
		t.Errorf("LookupAPIKey(new fetch key) = %+v, %v; want usable key %d", k, err, live.ID)
	}
	// Never shown again.
	list := h.must(200, "GET", "/apikeys", nil)
	for _, secret := range []string{live.Key, preview.Key} {
		if strings.Contains(string(list.body), secret) {
			t.Errorf("GET /apikeys shows a secret: %s", list.body)
		}
	}
	var keys []apiKeyJSON
	list.decode(t, &keys)
	if len(keys) != 2 || keys[0].Key != "" || keys[1].Key != "" {
		t.Errorf("GET /apikeys = %s", list.body)
	}

	path := fmt.Sprintf("/apikeys/%d", live.ID)
	var got apiKeyJSON
	h.must(200, "PATCH", path, m{"enabled": false}).decode(t, &got)
	if got.Enabled || got.Name != "site" || got.Key != "" {
		t.Errorf("PATCH enabled=false = %+v", got)
	}
	if k, _ := h.store.LookupAPIKey(ctx, h.guid, live.Key); k.Usable(time.Now()) {
		t.Errorf("a disabled key is usable")
	}
	h.must(200, "PATCH", path, m{"enabled": true, "expiresAt": expiry, "name": "website"}).decode(t, &got)
	if !got.Enabled || got.Name != "website" || got.ExpiresAt == nil || !got.ExpiresAt.Equal(expiry) {
		t.Errorf("PATCH enable, expiry, rename = %+v", got)
	}
	h.must(200, "PATCH", path, m{"expiresAt": nil}).decode(t, &got)
	if got.ExpiresAt != nil || !got.Enabled || got.Name != "website" {
		t.Errorf("PATCH expiresAt=null = %+v, want no expiry and the rest kept", got)
	}
	// An expiry in the past makes the key unusable (expired, not refused).
	h.must(200, "PATCH", path, m{"expiresAt": time.Now().Add(-time.Minute).UTC()}).decode(t, &got)
	if k, _ := h.store.LookupAPIKey(ctx, h.guid, live.Key); k.Usable(time.Now()) {
		t.Errorf("an expired key is usable")
	}

	h.must(204, "DELETE", path, nil)
	h.must(200, "GET", "/apikeys", nil).decode(t, &keys)
	if len(keys) != 1 || keys[0].ID != preview.ID {
		t.Errorf("GET /apikeys after delete = %+v", keys)
	}
	checkProblem(t, "DELETE again", h.as(content.RoleFull, request{"DELETE", path, nil}), 404, "")
	checkProblem(t, "PATCH deleted", h.as(content.RoleFull, request{"PATCH", path, m{"enabled": true}}), 404, "")
}

func TestModelsContainersChannelsScenario(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	site(h)
	var model content.Model
	h.must(200, "GET", "/models/article", nil).decode(t, &model)
	if model.Name != "Article" || model.Kind != "content" || len(model.Fields) != 5 {
		t.Errorf("GET /models/article = %+v", model)
	}
	if f, _ := model.Field("category"); f.Type != content.TypeItem || f.Container != "categories" {
		t.Errorf("field category = %+v, want an item field of container categories", f)
	}
	if f, _ := model.Field("code"); !f.Shared {
		t.Errorf("field code = %+v, want shared", f)
	}
	var models []content.Model
	h.must(200, "GET", "/models", nil).decode(t, &models)
	if len(models) != 3 {
		t.Errorf("GET /models lists %d models, want 3", len(models))
	}
	var c content.Container
	h.must(200, "GET", "/containers/ARTICLES", nil).decode(t, &c)
	if c.ReferenceName != "articles" || c.Model != "Article" || c.ItemCount != 0 {
		t.Errorf("GET /containers/ARTICLES = %+v", c)
	}
	h.must(201, "POST", "/en-us/items", m{"referenceName": "articles", "fields": m{"title": "x"}})
	h.must(200, "GET", "/containers/articles", nil).decode(t, &c)
	if c.ItemCount != 1 {
		t.Errorf("itemCount after one item = %d, want 1", c.ItemCount)
	}
	var cs []content.Container
	h.must(200, "GET", "/containers", nil).decode(t, &cs)
	if len(cs) != 2 {
		t.Errorf("GET /containers lists %d, want 2", len(cs))
	}
	checkProblem(t, "DELETE a used model", h.as(content.RoleFull, request{"DELETE", "/models/Article", nil}), 409, "")

	// Unused things can go.
	h.must(201, "POST", "/models", m{"name": "Tmp", "kind": "content", "fields": []m{{"name": "a", "type": "text"}}})
	h.must(201, "POST", "/containers", m{"referenceName": "tmp", "model": "Tmp"})
	h.must(204, "DELETE", "/containers/tmp", nil)
	h.must(204, "DELETE", "/models/Tmp", nil)
	h.must(404, "GET", "/models/Tmp", nil)

	var pms []content.PageModel
	h.must(200, "GET", "/page-models", nil).decode(t, &pms)
	if len(pms) != 1 || pms[0].Name != "Main" || !reflect.DeepEqual([]string(pms[0].Zones), []string{"MainContentZone", "Sidebar"}) {
		t.Errorf("GET /page-models = %+v", pms)
	}
	h.must(201, "POST", "/page-models", m{"name": "Blank", "zones": []string{"Z"}})
	h.must(204, "DELETE", "/page-models/Blank", nil)

	var ch content.Channel
	h.must(201, "POST", "/channels", m{"name": "footer"}).decode(t, &ch)
	if ch.Name != "footer" || ch.ID == 0 {
		t.Errorf("POST /channels = %+v", ch)
	}
	var chs []content.Channel
	h.must(200, "GET", "/channels", nil).decode(t, &chs)
	if len(chs) != 2 || chs[0].Name != "website" || chs[1].Name != "footer" {
		t.Errorf("GET /channels = %+v, want website then footer", chs)
	}
}

func TestItemsScenario(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	site(h)
	st := status(h, 201, "POST", "/en-us/items", m{"referenceName": "Articles", "fields": m{"title": "Hello", "count": 3, "code": "A1", "slug": "hello"}})
	if st.ContentID == 0 || st.VersionID == 0 || st.State != content.Staging {
		t.Fatalf("POST /en-us/items = %+v", st)
	}
	id := st.ContentID
	it := getItem(h, "en-us", id)
	if it.ContentID != id || it.Locale != "en-us" || it.ReferenceName != "articles" || it.Model != "Article" ||
		it.State != content.Staging || it.VersionID != st.VersionID || it.Published != nil {
		t.Errorf("GET item = %+v", it)
	}
	if got := string(it.Fields["title"]) + string(it.Fields["count"]); got != `"Hello"3` {
		t.Errorf("fields title+count = %s, want \"Hello\"3", got)
	}

	// Save: fields not named keep their values; the version grows.
	st2 := status(h, 200, "PUT", fmt.Sprintf("/en-us/items/%d", id), m{"fields": m{"title": "Hello again"}})
	if st2.ContentID != id || st2.VersionID <= st.VersionID || st2.State != content.Staging {
		t.Errorf("PUT item = %+v, want a newer version than %d", st2, st.VersionID)
	}
	it = getItem(h, "en-us", id)
	if string(it.Fields["title"]) != `"Hello again"` || string(it.Fields["count"]) != "3" {
		t.Errorf("fields after save = %v", it.Fields)
	}

	// The connected copy in fr-ca: same contentID, shared fields carried over.
	st3 := status(h, 200, "PUT", fmt.Sprintf("/fr-ca/items/%d", id), m{"fields": m{"title": "Bonjour"}})
	if st3.ContentID != id {
		t.Errorf("PUT fr-ca copy = %+v, want contentID %d", st3, id)
	}
	fr := getItem(h, "fr-ca", id)
	if string(fr.Fields["title"]) != `"Bonjour"` || string(fr.Fields["code"]) != `"A1"` || fr.Fields["count"] != nil {
		t.Errorf("fr-ca copy fields = %v, want title Bonjour, shared code A1, no count", fr.Fields)
	}
	// A shared field saved in one locale is saved in every copy, each a save.
	before := eventCount(h)
	h.must(200, "PUT", fmt.Sprintf("/en-us/items/%d", id), m{"fields": m{"code": "B2"}})
	if n := eventCount(h) - before; n != 2 {
		t.Errorf("saving a shared field wrote %d events, want 2 (one per copy)", n)
	}
	fr = getItem(h, "fr-ca", id)
	if string(fr.Fields["code"]) != `"B2"` || string(fr.Fields["title"]) != `"Bonjour"` {
		t.Errorf("fr-ca copy after shared save = %v", fr.Fields)
	}
	// A non-shared field stays per locale.
	h.must(200, "PUT", fmt.Sprintf("/fr-ca/items/%d", id), m{"fields": m{"title": "Salut"}})
	if it := getItem(h, "en-us", id); string(it.Fields["title"]) != `"Hello again"` {
		t.Errorf("en-us title after fr-ca save = %s", it.Fields["title"])
	}

	// An item link, stored as {contentID}.
	cat := status(h, 201, "POST", "/en-us/items", m{"referenceName": "categories", "fields": m{"title": "News"}}).ContentID
	h.must(200, "PUT", fmt.Sprintf("/en-us/items/%d", id), m{"fields": m{"category": m{"contentID": cat}}})
	if got, want := string(getItem(h, "en-us", id).Fields["category"]), fmt.Sprintf(`{"contentID":%d}`, cat); got != want {
		t.Errorf("category = %s, want %s", got, want)
	}

	// The workflow.
	base := fmt.Sprintf("/en-us/items/%d/", id)
	for _, step := range []struct {
		action string
		want   content.State
	}{
		{"request-approval", content.AwaitingApproval},
		{"decline", content.Declined},
		{"request-approval", content.AwaitingApproval},
		{"approve", content.Approved},
		{"publish", content.Published},
		{"unpublish", content.Unpublished},
		{"publish", content.Published},
	} {
		st := status(h, 200, "POST", base+step.action, nil)
		if st.State != step.want || st.ContentID != id {
			t.Errorf("POST %s%s = %+v, want state %d", base, step.action, st, step.want)
		}
	}
	it = getItem(h, "en-us", id)
	if it.State != content.Published || it.Published == nil || it.Published.VersionID != it.VersionID {
		t.Errorf("after publish: state %d, published %+v, version %d", it.State, it.Published, it.VersionID)
	}
	checkProblem(t, "publish twice", h.as(content.RoleFull, request{"POST", base + "publish", nil}), 409, "")
	// fr-ca's copy is untouched by en-us's workflow.
	if fr := getItem(h, "fr-ca", id); fr.State != content.Staging || fr.Published != nil {
		t.Errorf("fr-ca copy after en-us publish: state %d, published %+v", fr.State, fr.Published)
	}
	// A save after publishing keeps the published version.
	h.must(200, "PUT", fmt.Sprintf("/en-us/items/%d", id), m{"fields": m{"slug": "hello-2"}})
	if it2 := getItem(h, "en-us", id); it2.State != content.Staging || it2.Published == nil || it2.Published.VersionID != it.VersionID {
		t.Errorf("after a save of a published item: state %d, published %+v", it2.State, it2.Published)
	}

	// Schedule, then clear it.
	pub := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Second)
	unpub := pub.Add(24 * time.Hour)
	var sc content.Schedule
	h.must(200, "PUT", base+"schedule", m{"publishAt": pub, "unpublishAt": unpub}).decode(t, &sc)
	if sc.PublishAt == nil || !sc.PublishAt.Equal(pub) || sc.UnpublishAt == nil || !sc.UnpublishAt.Equal(unpub) {
		t.Errorf("PUT schedule = %+v", sc)
	}
	it = getItem(h, "en-us", id)
	if it.PublishAt == nil || !it.PublishAt.Equal(pub) || it.UnpublishAt == nil || !it.UnpublishAt.Equal(unpub) {
		t.Errorf("item schedule = %v, %v; want %v, %v", it.PublishAt, it.UnpublishAt, pub, unpub)
	}
	h.must(200, "PUT", base+"schedule", m{})
	if it := getItem(h, "en-us", id); it.PublishAt != nil || it.UnpublishAt != nil {
		t.Errorf("schedule after clearing = %v, %v", it.PublishAt, it.UnpublishAt)
	}

	// Listing a container, in order, with paging.
	second := status(h, 201, "POST", "/en-us/items", m{"referenceName": "articles", "fields": m{"title": "Second"}}).ContentID
	third := status(h, 201, "POST", "/en-us/items", m{"referenceName": "articles", "fields": m{"title": "Third"}}).ContentID
	var page content.ItemPage
	h.must(200, "GET", "/en-us/items?container=ARTICLES", nil).decode(t, &page)
	if got := itemIDs(page.Items); page.TotalCount != 3 || !reflect.DeepEqual(got, []int64{id, second, third}) {
		t.Errorf("list = %v of %d, want [%d %d %d] of 3", got, page.TotalCount, id, second, third)
	}
	h.must(200, "GET", "/en-us/items?container=articles&take=1&skip=1", nil).decode(t, &page)
	if got := itemIDs(page.Items); page.TotalCount != 3 || !reflect.DeepEqual(got, []int64{second}) {
		t.Errorf("list take=1 skip=1 = %v of %d, want [%d] of 3", got, page.TotalCount, second)
	}
	h.must(200, "GET", "/fr-ca/items?container=articles", nil).decode(t, &page)
	if got := itemIDs(page.Items); page.TotalCount != 1 || !reflect.DeepEqual(got, []int64{id}) {
		t.Errorf("fr-ca list = %v of %d, want [%d]", got, page.TotalCount, id)
	}

	// Delete a copy: it stays readable in state deleted; the other locale keeps its copy.
	h.must(204, "DELETE", fmt.Sprintf("/fr-ca/items/%d", id), nil)
	if fr := getItem(h, "fr-ca", id); fr.State != content.Deleted {
		t.Errorf("fr-ca copy after DELETE: state %d, want %d", fr.State, content.Deleted)
	}
	if it := getItem(h, "en-us", id); it.State == content.Deleted {
		t.Errorf("en-us copy deleted with the fr-ca copy")
	}
	checkProblem(t, "DELETE twice", h.as(content.RoleFull, request{"DELETE", fmt.Sprintf("/fr-ca/items/%d", id), nil}), 409, "")
}

func itemIDs(items []content.Item) []int64 {
	ids := []int64{}
	for _, it := range items {
		ids = append(ids, it.ContentID)
	}
	return ids
}

func TestReorderScenario(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	site(h)
	var ids []int64
	for _, title := range []string{"a", "b", "c"} {
		ids = append(ids, status(h, 201, "POST", "/en-us/items", m{"referenceName": "articles", "fields": m{"title": title}}).ContentID)
	}
	a, b, c := ids[0], ids[1], ids[2]
	before := eventCount(h)
	h.must(204, "PUT", "/containers/articles/order", m{"contentIDs": []int64{c, a}})
	if n := eventCount(h) - before; n != 2 {
		t.Errorf("reorder wrote %d events, want one whole-list event per locale (2)", n)
	}
	var page content.ItemPage
	h.must(200, "GET", "/en-us/items?container=articles", nil).decode(t, &page)
	if got := itemIDs(page.Items); !reflect.DeepEqual(got, []int64{c, a, b}) {
		t.Errorf("order = %v, want [%d %d %d]", got, c, a, b)
	}
	for i := 1; i < len(page.Items); i++ {
		if page.Items[i].ItemOrder <= page.Items[i-1].ItemOrder {
			t.Errorf("itemOrder not increasing: %d then %d", page.Items[i-1].ItemOrder, page.Items[i].ItemOrder)
		}
	}
	// An empty list keeps the order.
	h.must(204, "PUT", "/containers/articles/order", m{"contentIDs": []int64{}})
	h.must(200, "GET", "/en-us/items?container=articles", nil).decode(t, &page)
	if got := itemIDs(page.Items); !reflect.DeepEqual(got, []int64{c, a, b}) {
		t.Errorf("order after an empty reorder = %v", got)
	}
}

type createdPage struct {
	PageID int64  `json:"pageID"`
	Name   string `json:"name"`
	Path   string `json:"path"`
}

func TestPagesScenario(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	site(h)
	newPage := func(locale string, body m) createdPage {
		t.Helper()
		var p createdPage
		h.must(201, "POST", "/"+locale+"/pages", body).decode(t, &p)
		return p
	}
	about := newPage("en-us", m{"title": "Über uns", "pageModel": "Main"})
	if about.PageID == 0 || about.Name != "uber-uns" || about.Path != "/uber-uns" {
		t.Errorf("POST page = %+v, want name uber-uns at /uber-uns", about)
	}
	if p := newPage("en-us", m{"title": "Über uns!", "pageModel": "main"}); p.Name != "uber-uns-2" {
		t.Errorf("second page of the same title: name %q, want uber-uns-2", p.Name)
	}
	team := newPage("en-us", m{"title": "Team", "pageModel": "Main", "parentPageID": about.PageID})
	if team.Path != "/uber-uns/team" {
		t.Errorf("child page path = %q, want /uber-uns/team", team.Path)
	}

	p := getPage(h, "en-us", about.PageID)
	if p.Title != "Über uns" || p.MenuText != "Über uns" || !p.Visible.Menu || !p.Visible.Sitemap || p.PageType != content.PageStatic ||
		p.Channel != "website" || p.PageModel != "Main" || p.State != content.Staging || p.ParentPageID != nil ||
		len(p.Zones["MainContentZone"]) != 0 || p.Zones["Sidebar"] == nil {
		t.Errorf("GET page = %+v", p)
	}

	// The name never changes with the title.
	var saved content.Page
	h.must(200, "PUT", fmt.Sprintf("/en-us/pages/%d", about.PageID), m{"title": "About us", "seo": m{"metaDescription": "Who we are"}, "visible": m{"menu": false, "sitemap": true}}).decode(t, &saved)
	if saved.Name != "uber-uns" || saved.Title != "About us" || saved.SEO.MetaDescription != "Who we are" || saved.Visible.Menu || saved.VersionID <= p.VersionID {
		t.Errorf("PUT page = %+v", saved)
	}

	// Lists, parents before children, by channel.
	h.must(201, "POST", "/channels", m{"name": "footer"})
	imprint := newPage("en-us", m{"title": "Imprint", "pageModel": "Main", "channel": "footer"})
	var pages []content.Page
	listPages := func(path string) {
		t.Helper()
		var out struct {
			Items      []content.Page `json:"items"`
			TotalCount int            `json:"totalCount"`
		}
		h.must(200, "GET", path, nil).decode(t, &out)
		if out.TotalCount < len(out.Items) {
			t.Errorf("GET %s: totalCount %d < %d items", path, out.TotalCount, len(out.Items))
		}
		pages = out.Items
	}
	listPages("/en-us/pages?channel=website")
	if got := pagePaths(pages); !reflect.DeepEqual(got, []string{"/uber-uns", "/uber-uns/team", "/uber-uns-2"}) {
		t.Errorf("website pages = %v", got)
	}
	listPages("/en-us/pages?channel=footer")
	if len(pages) != 1 || pages[0].PageID != imprint.PageID {
		t.Errorf("footer pages = %v", pagePaths(pages))
	}
	listPages("/en-us/pages")
	if len(pages) != 4 {
		t.Errorf("all pages = %v, want 4", pagePaths(pages))
	}
	listPages("/en-us/pages?take=2&skip=1")
	if got := pagePaths(pages); !reflect.DeepEqual(got, []string{"/uber-uns/team", "/uber-uns-2"}) {
		t.Errorf("pages take 2 skip 1 = %v", got)
	}

	// Zones: add, reorder, remove.
	zone := fmt.Sprintf("/en-us/pages/%d/zones/", about.PageID)
	var comps []int64
	for i, z := range []string{"MainContentZone", "MainContentZone", "maincontentzone"} {
		var added struct {
			ContentID int64 `json:"contentID"`
			Position  int   `json:"position"`
		}
		h.must(201, "POST", zone+z, m{"module": "Hero", "fields": m{"heading": fmt.Sprint("H", i)}}).decode(t, &added)
		if added.Position != i || added.ContentID == 0 {
			t.Errorf("add component %d = %+v", i, added)
		}
		comps = append(comps, added.ContentID)
	}
	if got := zoneIDs(getPage(h, "en-us", about.PageID), "MainContentZone"); !reflect.DeepEqual(got, comps) {
		t.Errorf("zone = %v, want %v", got, comps)
	}
	if e := getPage(h, "en-us", about.PageID).Zones["MainContentZone"][0]; e.Module != "Hero" {
		t.Errorf("zone entry = %+v, want module Hero", e)
	}
	comp := getItem(h, "en-us", comps[0])
	if comp.Model != "Hero" || string(comp.Fields["heading"]) != `"H0"` || comp.State != content.Staging {
		t.Errorf("component item = %+v", comp)
	}
	order := []int64{comps[2], comps[0], comps[1]}
	h.must(204, "PUT", zone+"MainContentZone/order", m{"contentIDs": order})
	if got := zoneIDs(getPage(h, "en-us", about.PageID), "MainContentZone"); !reflect.DeepEqual(got, order) {
		t.Errorf("zone after reorder = %v, want %v", got, order)
	}
	h.must(204, "DELETE", fmt.Sprintf("%sMainContentZone/%d", zone, comps[1]), nil)
	if got, want := zoneIDs(getPage(h, "en-us", about.PageID), "MainContentZone"), []int64{comps[2], comps[0]}; !reflect.DeepEqual(got, want) {
		t.Errorf("zone after remove = %v, want %v", got, want)
	}
	if c := getItem(h, "en-us", comps[1]); c.State != content.Deleted {
		t.Errorf("removed component: state %d, want deleted", c.State)
	}

	// The workflow; publishing publishes the components.
	base := fmt.Sprintf("/en-us/pages/%d/", about.PageID)
	for _, step := range []struct {
		action string
		want   content.State
	}{
		{"request-approval", content.AwaitingApproval},
		{"approve", content.Approved},
		{"publish", content.Published},
	} {
		st := status(h, 200, "POST", base+step.action, nil)
		if st.State != step.want || st.PageID != about.PageID {
			t.Errorf("POST %s%s = %+v, want state %d", base, step.action, st, step.want)
		}
	}
	if c := getItem(h, "en-us", comps[0]); c.State != content.Published {
		t.Errorf("component after page publish: state %d, want published", c.State)
	}
	if p := getPage(h, "en-us", about.PageID); p.Published == nil || p.Published.VersionID != p.VersionID {
		t.Errorf("page after publish: published %+v, version %d", p.Published, p.VersionID)
	}
	if st := status(h, 200, "POST", base+"unpublish", nil); st.State != content.Unpublished {
		t.Errorf("unpublish = %+v", st)
	}

	// Schedule.
	pub := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	h.must(200, "PUT", base+"schedule", m{"publishAt": pub})
	if p := getPage(h, "en-us", about.PageID); p.PublishAt == nil || !p.PublishAt.Equal(pub) || p.UnpublishAt != nil {
		t.Errorf("page schedule = %v, %v", p.PublishAt, p.UnpublishAt)
	}

	// A copy in another locale: same pageID, its own name.
	var fr content.Page
	h.must(200, "PUT", fmt.Sprintf("/fr-ca/pages/%d", about.PageID), m{"title": "À propos"}).decode(t, &fr)
	if fr.PageID != about.PageID || fr.Locale != "fr-ca" || fr.Name != "a-propos" || fr.Path != "/a-propos" || fr.State != content.Staging {
		t.Errorf("fr-ca copy = %+v", fr)
	}

	// Page types.
	dyn := newPage("en-us", m{"title": "Articles", "pageModel": "Main", "dynamic": m{"referenceName": "articles", "pathField": "slug"}})
	if p := getPage(h, "en-us", dyn.PageID); p.PageType != content.PageDynamic || p.Dynamic == nil || *p.Dynamic != (content.Dynamic{ReferenceName: "articles", PathField: "slug"}) {
		t.Errorf("dynamic page = %+v (dynamic %+v)", p, p.Dynamic)
	}
	folder := newPage("en-us", m{"title": "Docs", "pageModel": "Main", "folder": true})
	if p := getPage(h, "en-us", folder.PageID); p.PageType != content.PageFolder {
		t.Errorf("folder page type = %q", p.PageType)
	}
	link := newPage("en-us", m{"title": "Elsewhere", "pageModel": "Main", "redirectUrl": "https://example.com/"})
	if p := getPage(h, "en-us", link.PageID); p.PageType != content.PageLink || p.RedirectURL != "https://example.com/" {
		t.Errorf("link page = %q %q", p.PageType, p.RedirectURL)
	}

	// Move, then delete: a page with children cannot go before them.
	var moved content.Page
	h.must(200, "PUT", fmt.Sprintf("/en-us/pages/%d", team.PageID), m{"parentPageID": nil}).decode(t, &moved)
	if moved.Path != "/team" || moved.ParentPageID != nil {
		t.Errorf("moved page = %q parent %v, want /team at the root", moved.Path, moved.ParentPageID)
	}
	h.must(200, "PUT", fmt.Sprintf("/en-us/pages/%d", team.PageID), m{"parentPageID": about.PageID})
	checkProblem(t, "DELETE a parent", h.as(content.RoleFull, request{"DELETE", fmt.Sprintf("/en-us/pages/%d", about.PageID), nil}), 409, "")
	h.must(204, "DELETE", fmt.Sprintf("/en-us/pages/%d", team.PageID), nil)
	h.must(204, "DELETE", fmt.Sprintf("/en-us/pages/%d", about.PageID), nil)
	if p := getPage(h, "en-us", about.PageID); p.State != content.Deleted {
		t.Errorf("deleted page: state %d", p.State)
	}
	// Its name is free again among the live siblings.
	if p := newPage("en-us", m{"title": "Über uns", "pageModel": "Main"}); p.Name != "uber-uns" {
		t.Errorf("new page after delete: name %q, want uber-uns", p.Name)
	}
}

func pagePaths(ps []content.Page) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.Path)
	}
	return out
}

func zoneIDs(p content.Page, zone string) []int64 {
	ids := []int64{}
	for _, e := range p.Zones[zone] {
		ids = append(ids, e.ContentID)
	}
	return ids
}

// TestProblemBodies checks the shape of a problem document end to end.
func TestProblemBodies(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.as(content.RoleFull, request{"POST", "/models", m{"name": "1bad", "kind": "x", "fields": []m{}}})
	doc := checkProblem(t, "POST /models with three bad fields", r, 400, "name")
	var errs []struct{ Field, Reason string }
	b, _ := json.Marshal(doc["errors"])
	json.Unmarshal(b, &errs)
	if len(errs) != 3 {
		t.Errorf("errors = %+v, want name, kind and fields", errs)
	}
	if doc["type"] != "/problems/invalid" || doc["title"] != "Invalid request" {
		t.Errorf("type, title = %v, %v", doc["type"], doc["title"])
	}
	if cc := r.header.Get("Cache-Control"); cc == "" {
		t.Errorf("no Cache-Control on a problem answer")
	}
}

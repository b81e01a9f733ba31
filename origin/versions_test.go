package origin_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/content"
)

// ifMatch sends rq with the token of role and an If-Match header.
func (h *harness) ifMatch(etag string, rq request) response {
	h.t.Helper()
	hdr := http.Header{"Authorization": {"Bearer " + h.tokens[content.RoleFull]}}
	if etag != "" {
		hdr.Set("If-Match", etag)
	}
	return h.sendHeaders(rq.method, h.base()+rq.path, hdr, "application/json", bodyBytes(h.t, rq.body))
}

// TestIfMatch checks optimistic concurrency on items and pages: GET answers
// the version as ETag, a change with a stale If-Match answers 412 and
// changes nothing, a current one goes through.
func TestIfMatch(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := h.populate()
	type m = map[string]any
	for _, c := range []struct {
		name, path string
		save       any
	}{
		{"item", fmt.Sprintf("/en-us/items/%d", w.article), m{"fields": m{"title": "Edited"}}},
		{"page", fmt.Sprintf("/en-us/pages/%d", w.lone), m{"title": "Edited"}},
	} {
		r := h.must(200, "GET", c.path, nil)
		etag := r.header.Get("ETag")
		var cur struct {
			VersionID int64 `json:"versionID"`
		}
		r.decode(t, &cur)
		if want := fmt.Sprintf(`"%d"`, cur.VersionID); etag != want {
			t.Fatalf("%s: ETag = %q, want %q", c.name, etag, want)
		}
		// Someone else saves: the ETag read before is stale.
		r = h.ifMatch(etag, request{"PUT", c.path, c.save})
		if r.status != 200 {
			t.Fatalf("%s: PUT with the current If-Match = %s", c.name, r)
		}
		fresh := r.header.Get("ETag")
		if fresh == "" || fresh == etag {
			t.Errorf("%s: PUT answered ETag %q, want a new version's", c.name, fresh)
		}
		before := h.fingerprint()
		for _, rq := range []request{{"PUT", c.path, c.save}, {"POST", c.path + "/publish", nil}, {"DELETE", c.path, nil}} {
			r = h.ifMatch(etag, rq)
			doc := checkProblem(t, c.name+": stale "+rq.String(), r, 412, "")
			if doc != nil && fmt.Sprint(doc["currentVersionID"]) == "" {
				t.Errorf("%s: 412 does not name the current version: %v", c.name, doc)
			}
		}
		if ch := changedTables(before, h.fingerprint()); len(ch) > 0 {
			t.Errorf("%s: a stale If-Match changed tables %v", c.name, ch)
		}
		for _, bad := range []string{"12", `"12`, `W/12`, `"a b"`} {
			checkProblem(t, c.name+": If-Match "+bad, h.ifMatch(bad, request{"PUT", c.path, c.save}), 400, "If-Match")
		}
		// A weak tag never matches (If-Match compares strongly); a list
		// and "*" match the current version.
		checkProblem(t, c.name+": weak", h.ifMatch("W/"+fresh, request{"PUT", c.path, c.save}), 412, "")
		if r := h.ifMatch(`"1", `+fresh, request{"PUT", c.path, c.save}); r.status != 200 {
			t.Errorf("%s: If-Match list with the current version = %s", c.name, r)
		}
		if r := h.ifMatch("*", request{"PUT", c.path, c.save}); r.status != 200 {
			t.Errorf("%s: If-Match * = %s", c.name, r)
		}
	}
	// A copy that does not exist yet matches no entity tag.
	checkProblem(t, "new copy", h.ifMatch(`"1"`, request{"PUT", fmt.Sprintf("/fr-ca/items/%d", w.article), m{"fields": m{"title": "Premier"}}}), 412, "")
}

// versionList is the answer of a versions list.
type versionList struct {
	Items []struct {
		VersionID int64         `json:"versionID"`
		State     content.State `json:"state"`
		Actor     string        `json:"actor"`
		Action    string        `json:"action"`
		Current   bool          `json:"current"`
		Published bool          `json:"published"`
	} `json:"items"`
	TotalCount int `json:"totalCount"`
}

// TestItemVersions checks that every save keeps a version with its actor,
// that a restore is a new version with the old fields, and that discard
// goes back to the published version.
func TestItemVersions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := h.populate()
	type m = map[string]any
	path := fmt.Sprintf("/en-us/items/%d", w.article)
	var first content.Status
	h.must(200, "PUT", path, m{"fields": m{"title": "One"}}).decode(t, &first)
	h.must(200, "POST", path+"/publish", nil)
	r := h.as(content.RoleEdit, request{"PUT", path, m{"fields": m{"title": "Two"}}})
	if r.status != 200 {
		t.Fatalf("save as editor = %s", r)
	}
	var vs versionList
	h.must(200, "GET", path+"/versions", nil).decode(t, &vs)
	if vs.TotalCount != 3 || len(vs.Items) != 3 {
		t.Fatalf("versions = %+v, want 3 (create, save, save)", vs)
	}
	top := vs.Items[0]
	if !top.Current || top.Published || top.Action != "save" || top.Actor == "" || top.Actor == vs.Items[1].Actor {
		t.Errorf("newest version = %+v, want the editor's current save", top)
	}
	if v := vs.Items[1]; v.VersionID != first.VersionID || !v.Published || v.State != content.Published {
		t.Errorf("second version = %+v, want the published version %d", v, first.VersionID)
	}
	if vs.Items[2].Action != "create" {
		t.Errorf("oldest version = %+v, want create", vs.Items[2])
	}
	h.must(200, "GET", path+"/versions?take=1&skip=1", nil).decode(t, &vs)
	if len(vs.Items) != 1 || vs.Items[0].VersionID != first.VersionID || vs.TotalCount != 3 {
		t.Errorf("versions take 1 skip 1 = %+v", vs)
	}
	var old struct {
		Fields map[string]any `json:"fields"`
	}
	h.must(200, "GET", fmt.Sprintf("%s/versions/%d", path, first.VersionID), nil).decode(t, &old)
	if old.Fields["title"] != "One" {
		t.Errorf("version %d fields = %v", first.VersionID, old.Fields)
	}

	// Restore: a new version with the old fields.
	var restored content.Status
	h.must(200, "POST", fmt.Sprintf("%s/versions/%d/restore", path, vs.Items[0].VersionID+0), nil).decode(t, &restored)
	var it content.Item
	h.must(200, "GET", path, nil).decode(t, &it)
	if string(it.Fields["title"]) != `"One"` || it.VersionID != restored.VersionID || restored.VersionID <= top.VersionID || it.State != content.Staging {
		t.Errorf("after restore: item = %v v%d %s, status %+v", it.Fields, it.VersionID, it.State, restored)
	}
	h.must(200, "GET", path+"/versions", nil).decode(t, &vs)
	if vs.TotalCount != 4 || vs.Items[0].Action != "restore" {
		t.Errorf("after restore: versions = %+v", vs)
	}

	// Discard: back to the published version.
	h.must(200, "PUT", path, m{"fields": m{"title": "Draft"}})
	var disc content.Status
	h.must(200, "POST", path+"/discard", nil).decode(t, &disc)
	h.must(200, "GET", path, nil).decode(t, &it)
	if string(it.Fields["title"]) != `"One"` || it.State != content.Published || it.VersionID != first.VersionID || disc.VersionID != first.VersionID {
		t.Errorf("after discard: item = %v v%d %s, status %+v", it.Fields, it.VersionID, it.State, disc)
	}
	// Nothing to discard: answered as it is.
	h.must(200, "POST", path+"/discard", nil)
	// Never published: nothing to go back to.
	checkProblem(t, "discard unpublished", h.as(content.RoleFull, request{"POST", fmt.Sprintf("/en-us/items/%d/discard", w.extra), nil}), 409, "")
	// A version of another item is not found.
	checkProblem(t, "restore another item's version", h.as(content.RoleFull,
		request{"POST", fmt.Sprintf("/en-us/items/%d/versions/%d/restore", w.extra, first.VersionID), nil}), 404, "")
}

// TestPageVersions checks that a page restore brings back its fields, its
// zones and its components' values, and that discard drops components
// added since publishing.
func TestPageVersions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := h.populate()
	type m = map[string]any
	path := fmt.Sprintf("/en-us/pages/%d", w.parent)
	var p content.Page
	h.must(200, "GET", path, nil).decode(t, &p)
	saved := p.VersionID
	h.must(200, "POST", path+"/publish", nil)
	// Edit: title, the component's heading, a new component.
	h.must(200, "PUT", path, m{"title": "Home, edited"})
	h.must(200, "PUT", fmt.Sprintf("/en-us/items/%d", w.component), m{"fields": m{"heading": "Changed"}})
	var added struct {
		ContentID int64 `json:"contentID"`
	}
	h.must(201, "POST", path+"/zones/MainContentZone", m{"module": "Hero", "fields": m{"heading": "New"}}).decode(t, &added)

	h.must(200, "POST", fmt.Sprintf("%s/versions/%d/restore", path, saved), nil)
	h.must(200, "GET", path, nil).decode(t, &p)
	if p.Title != "Home" || len(p.Zones["MainContentZone"]) != 1 || p.Zones["MainContentZone"][0].ContentID != w.component {
		t.Errorf("after restore: page = %q %+v", p.Title, p.Zones)
	}
	var comp content.Item
	h.must(200, "GET", fmt.Sprintf("/en-us/items/%d", w.component), nil).decode(t, &comp)
	if string(comp.Fields["heading"]) != `"Hi"` {
		t.Errorf("after restore: component heading = %v, want Hi", comp.Fields["heading"])
	}
	var gone content.Item
	h.must(200, "GET", fmt.Sprintf("/en-us/items/%d", added.ContentID), nil).decode(t, &gone)
	if gone.State != content.Deleted {
		t.Errorf("after restore: the component added since is %s, want deleted", gone.State)
	}
	var vs versionList
	h.must(200, "GET", path+"/versions", nil).decode(t, &vs)
	if vs.Items[0].Action != "restore" || !vs.Items[0].Current {
		t.Errorf("page versions = %+v", vs)
	}
	var pv struct {
		Doc        content.PageDoc           `json:"doc"`
		Zones      map[string][]int64        `json:"zones"`
		Components map[string]map[string]any `json:"components"`
	}
	h.must(200, "GET", fmt.Sprintf("%s/versions/%d", path, saved), nil).decode(t, &pv)
	if pv.Doc.Title != "Home" || pv.Components[fmt.Sprint(w.component)]["heading"] != "Hi" {
		t.Errorf("page version %d = %+v", saved, pv)
	}

	// Discard after another edit: the published page again.
	h.must(201, "POST", path+"/zones/Sidebar", m{"module": "Hero", "fields": m{"heading": "Side"}})
	h.must(200, "POST", path+"/discard", nil)
	h.must(200, "GET", path, nil).decode(t, &p)
	if p.State != content.Published || p.VersionID != saved || len(p.Zones["Sidebar"]) != 0 {
		t.Errorf("after discard: page = v%d %s %+v", p.VersionID, p.State, p.Zones)
	}
}

// TestAudit checks that changes record their actor in the audit log, a
// failed change records nothing, and the log reads newest first with its
// filters.
func TestAudit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := h.populate()
	type m = map[string]any
	path := fmt.Sprintf("/en-us/items/%d", w.article)
	h.must(200, "PUT", path, m{"fields": m{"title": "By the full token"}})
	if r := h.asUser(content.RoleEdit, request{"PUT", path, m{"fields": m{"title": "By a user"}}}); r.status != 200 {
		t.Fatalf("save as user = %s", r)
	}
	h.as(content.RoleFull, request{"PUT", path, m{"fields": m{"nope": 1}}}) // refused: not recorded
	h.must(201, "POST", "/channels", m{"name": "footer"})
	h.must(200, "POST", path+"/request-approval", nil)
	var log struct {
		Items []struct {
			Actor, Action, Path string
		} `json:"items"`
		TotalCount int `json:"totalCount"`
	}
	h.must(200, "GET", "/audit", nil).decode(t, &log)
	if log.TotalCount != 4 || len(log.Items) != 4 {
		t.Fatalf("audit = %+v, want 4 rows", log)
	}
	if a := log.Items[0]; a.Action != "POST /en-us/items/{id}/request-approval" || !strings.HasPrefix(a.Actor, "token:") {
		t.Errorf("newest audit row = %+v", a)
	}
	if a := log.Items[1]; a.Action != "POST /channels" {
		t.Errorf("second audit row = %+v", a)
	}
	if a := log.Items[2]; a.Action != "PUT /en-us/items/{id}" || a.Path != path || !strings.HasPrefix(a.Actor, "user:") {
		t.Errorf("third audit row = %+v", a)
	}
	user := log.Items[2].Actor
	h.must(200, "GET", "/audit?actor="+user, nil).decode(t, &log)
	if log.TotalCount != 1 {
		t.Errorf("audit of %s = %+v", user, log)
	}
	h.must(200, "GET", "/audit?fromDate=2999-01-01T00:00:00Z", nil).decode(t, &log)
	if log.TotalCount != 0 {
		t.Errorf("audit from 2999 = %+v", log)
	}
	h.must(200, "GET", "/audit?take=1&skip=3", nil).decode(t, &log)
	if len(log.Items) != 1 || log.Items[0].Action != "PUT /en-us/items/{id}" || !strings.HasPrefix(log.Items[0].Actor, "token:") {
		t.Errorf("audit take 1 skip 2 = %+v", log)
	}
}

// TestIfMatchEveryCopyRoute checks every route that changes one item or
// page copy against If-Match: a stale tag answers 412 and changes nothing,
// a malformed one 400 and changes nothing, the current one goes through.
// Before each row the copy is saved once, which makes the tag read before
// it stale.
func TestIfMatchEveryCopyRoute(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := h.populate()
	type m = map[string]any
	item := fmt.Sprintf("/en-us/items/%d", w.article)
	page := fmt.Sprintf("/en-us/pages/%d", w.parent)
	lone := fmt.Sprintf("/en-us/pages/%d", w.lone)
	future := m{"publishAt": "2999-01-01T00:00:00Z"}
	for _, c := range []struct {
		copy string // the item or page whose ETag the row sends
		rq   request
		want int
	}{
		{item, request{"PUT", item, m{"fields": m{"title": "Saved"}}}, 200},
		{item, request{"PUT", item + "/schedule", future}, 200},
		{item, request{"POST", item + "/publish", nil}, 200},
		{item, request{"POST", item + "/discard", nil}, 200},
		{item, request{"POST", fmt.Sprintf("%s/versions/%d/restore", item, w.articleVersion), nil}, 200},
		{item, request{"POST", item + "/request-approval", nil}, 200},
		{item, request{"DELETE", item, nil}, 204},
		{page, request{"PUT", page, m{"title": "Saved"}}, 200},
		{page, request{"PUT", page + "/schedule", future}, 200},
		{page, request{"PUT", page + "/position", m{"beforePageID": nil}}, 200},
		{page, request{"POST", page + "/zones/Sidebar", m{"module": "Hero", "fields": m{"heading": "Side"}}}, 201},
		{page, request{"PUT", page + "/zones/MainContentZone/order", m{"contentIDs": []int64{w.component}}}, 204},
		{page, request{"DELETE", fmt.Sprintf("%s/zones/MainContentZone/%d", page, w.component), nil}, 204},
		{page, request{"POST", page + "/publish", nil}, 200},
		{page, request{"POST", page + "/discard", nil}, 200},
		{page, request{"POST", fmt.Sprintf("%s/versions/%d/restore", page, w.parentVersion), nil}, 200},
		{lone, request{"DELETE", lone, nil}, 204},
	} {
		stale := h.must(200, "GET", c.copy, nil).header.Get("ETag")
		bump := request{"PUT", c.copy, m{"title": "Bumped"}}
		if strings.Contains(c.copy, "/items/") {
			bump.body = m{"fields": m{"title": "Bumped"}}
		}
		if r := h.ifMatch("", bump); r.status != 200 {
			t.Fatalf("%s: save before = %s", c.rq, r)
		}
		current := h.must(200, "GET", c.copy, nil).header.Get("ETag")
		before := h.fingerprint()
		checkProblem(t, c.rq.String()+" stale If-Match", h.ifMatch(stale, c.rq), 412, "")
		checkProblem(t, c.rq.String()+" malformed If-Match", h.ifMatch("12", c.rq), 400, "If-Match")
		if ch := changedTables(before, h.fingerprint()); len(ch) > 0 {
			t.Errorf("%s: a stale or malformed If-Match changed tables %v", c.rq, ch)
		}
		if r := h.ifMatch(current, c.rq); r.status != c.want {
			t.Errorf("%s with the current If-Match %s = %s, want %d", c.rq, current, r, c.want)
		}
	}
}

// TestVersionLimit checks the instance setting that caps the versions kept
// per copy: validated, applied at once to the versions already kept and at
// every save after, never dropping the current or the published version,
// and a restore of a kept version still works.
func TestVersionLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := h.populate()
	type m = map[string]any
	var st struct {
		VersionLimit *int `json:"versionLimit"`
	}
	h.must(200, "GET", "/settings", nil).decode(t, &st)
	if st.VersionLimit != nil {
		t.Fatalf("versionLimit = %d, want null (every version kept)", *st.VersionLimit)
	}
	for _, bad := range []any{1, 0, -3, 2.5, "5", true} {
		checkProblem(t, fmt.Sprintf("versionLimit %v", bad), h.as(content.RoleFull, request{"PATCH", "/settings", m{"versionLimit": bad}}), 400, "versionLimit")
	}
	checkProblem(t, "unknown setting", h.as(content.RoleFull, request{"PATCH", "/settings", m{"versions": 3}}), 400, "")
	checkProblem(t, "settings as manage", h.as(content.RoleManage, request{"PATCH", "/settings", m{"versionLimit": 3}}), 403, "")

	path := fmt.Sprintf("/en-us/items/%d", w.article)
	save := func(title string) int64 {
		t.Helper()
		var s content.Status
		h.must(200, "PUT", path, m{"fields": m{"title": title}}).decode(t, &s)
		return s.VersionID
	}
	published := save("s1")
	h.must(200, "POST", path+"/publish", nil)
	var saved []int64
	for _, title := range []string{"s2", "s3", "s4", "s5"} {
		saved = append(saved, save(title))
	}
	versions := func(p string) []int64 {
		t.Helper()
		var vs versionList
		h.must(200, "GET", p+"/versions", nil).decode(t, &vs)
		var ids []int64
		for _, v := range vs.Items {
			ids = append(ids, v.VersionID)
		}
		return ids
	}
	if got := versions(path); len(got) != 6 {
		t.Fatalf("versions before the cap = %v, want 6", got)
	}
	h.must(200, "PATCH", "/settings", m{"versionLimit": 3}).decode(t, &st)
	if st.VersionLimit == nil || *st.VersionLimit != 3 {
		t.Fatalf("PATCH versionLimit 3 answered %+v", st)
	}
	// The newest three and the published one, at once.
	want := fmt.Sprint([]int64{saved[3], saved[2], saved[1], published})
	if got := versions(path); fmt.Sprint(got) != want {
		t.Errorf("versions after the cap = %v, want %s", got, want)
	}
	s6 := save("s6")
	want = fmt.Sprint([]int64{s6, saved[3], saved[2], published})
	if got := versions(path); fmt.Sprint(got) != want {
		t.Errorf("versions after a save under the cap = %v, want %s", got, want)
	}
	// A kept version restores; a dropped one is gone.
	h.must(200, "POST", fmt.Sprintf("%s/versions/%d/restore", path, saved[2]), nil)
	var it content.Item
	h.must(200, "GET", path, nil).decode(t, &it)
	if string(it.Fields["title"]) != `"s4"` {
		t.Errorf("after restoring s4: title %s", it.Fields["title"])
	}
	checkProblem(t, "restore a dropped version", h.as(content.RoleFull,
		request{"POST", fmt.Sprintf("%s/versions/%d/restore", path, saved[0]), nil}), 404, "")
	if got := versions(path); len(got) != 4 || got[3] != published {
		t.Errorf("versions after the restore = %v, want 3 and the published %d", got, published)
	}

	// Pages follow the same cap.
	page := fmt.Sprintf("/en-us/pages/%d", w.lone)
	for i := range 5 {
		h.must(200, "PUT", page, m{"title": fmt.Sprint("Contact ", i)})
	}
	if got := versions(page); len(got) != 3 {
		t.Errorf("page versions under the cap = %v, want 3", got)
	}

	// null: every version kept again from now on.
	h.must(200, "PATCH", "/settings", m{"versionLimit": nil}).decode(t, &st)
	if st.VersionLimit != nil {
		t.Errorf("PATCH versionLimit null answered %+v", st)
	}
	h.must(200, "PATCH", "/settings", m{}) // nothing named: nothing changes
	save("s7")
	save("s8")
	if got := versions(path); len(got) != 6 {
		t.Errorf("versions without a cap = %v, want 6", got)
	}
}

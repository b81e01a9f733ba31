package content

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/problem"
)

// kitchen makes a model with a field of every type, its container
// "Kitchen", and the containers Categories and Tags its links point to.
// It returns an item of Categories and two of Tags.
func (f *fixture) kitchen() (cat int64, tags [2]int64) {
	f.t.Helper()
	f.model("Category", "content", Field{Name: "name", Type: TypeText})
	f.container("Categories", "Category")
	f.model("Tag", "content", Field{Name: "name", Type: TypeText})
	f.container("Tags", "Tag")
	f.model("Kitchen", "content",
		Field{Name: "text", Type: TypeText},
		Field{Name: "html", Type: TypeHTML},
		Field{Name: "number", Type: TypeNumber},
		Field{Name: "decimal", Type: TypeDecimal},
		Field{Name: "boolean", Type: TypeBoolean},
		Field{Name: "date", Type: TypeDate},
		Field{Name: "link", Type: TypeLink},
		Field{Name: "image", Type: TypeImage},
		Field{Name: "gallery", Type: TypeGallery},
		Field{Name: "category", Type: TypeItem, Container: "categories"},
		Field{Name: "tags", Type: TypeList, Container: "Tags"})
	f.container("Kitchen", "Kitchen")
	cat = f.createItem("en-us", "Categories", map[string]any{"name": "Food"}).ContentID
	tags[0] = f.createItem("en-us", "Tags", map[string]any{"name": "red"}).ContentID
	tags[1] = f.createItem("en-us", "Tags", map[string]any{"name": "blue"}).ContentID
	return cat, tags
}

func TestItemValues(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cat, tags := f.kitchen()
	otherInst := f.instance("other")
	f.s.CreateModel(f.ctx, otherInst, Model{Name: "Category", Kind: "content", Fields: Fields{{Name: "name", Type: TypeText}}})
	f.s.CreateContainer(f.ctx, otherInst, "Categories", "Category")
	foreign, err := f.s.CreateItem(f.ctx, otherInst, "en-us", "Categories", nil)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 1<<20)
	gallery := f.gallery(f.inst, "Photos").ID
	otherGallery := f.gallery(otherInst, "Photos").ID
	asset := f.asset(f.inst, 40, 30, "photo.png", "A photo")
	otherAsset := f.asset(otherInst, 40, 30, "photo.png", "A photo")

	tests := []struct {
		field string
		in    string // the JSON given
		want  string // the stored JSON, or "" when the value is invalid
	}{
		{"text", `"hello"`, `"hello"`},
		{"text", `""`, `""`},
		{"text", `5`, ""},
		{"text", `true`, ""},
		{"text", `{"a":1}`, ""},
		{"text", `["a"]`, ""},
		{"html", `"<p>Hi &amp; bye</p>"`, `"<p>Hi &amp; bye</p>"`},
		{"html", `1`, ""},
		{"number", `42`, `42`},
		{"number", `-7`, `-7`},
		{"number", `0`, `0`},
		{"number", `1.5`, ""},
		{"number", `1e3`, ""},
		{"number", `"42"`, ""},
		{"number", `true`, ""},
		{"number", `[1]`, ""},
		{"number", `99999999999999999999`, ""},
		{"decimal", `1.25`, `1.25`},
		{"decimal", `10`, `10`},
		{"decimal", `-0.5`, `-0.5`},
		{"decimal", `"1.25"`, ""},
		{"decimal", `false`, ""},
		{"decimal", `{}`, ""},
		{"boolean", `true`, `true`},
		{"boolean", `false`, `false`},
		{"boolean", `"true"`, ""},
		{"boolean", `1`, ""},
		{"date", `"2026-01-31T09:30:00+01:00"`, `"2026-01-31T09:30:00+01:00"`},
		{"date", `"2026-01-31T09:30:00Z"`, `"2026-01-31T09:30:00Z"`},
		{"date", `"2026-01-31T09:30:00.123Z"`, `"2026-01-31T09:30:00Z"`},
		{"date", `"2026-01-31"`, ""},
		{"date", `"31/01/2026"`, ""},
		{"date", `1769851800`, ""},
		{"link", `"https://example.com/a"`, `"https://example.com/a"`},
		{"link", `42`, ""},
		{"image", `{"url":"https://cdn.example.com/a.png","label":"A","width":10,"height":20,"filesize":300}`,
			`{"url":"https://cdn.example.com/a.png","label":"A","filesize":300,"width":10,"height":20}`},
		{"image", `{"url":"/assets/a.png"}`, `{"url":"/assets/a.png"}`},
		{"image", `{"url":"https://x/a.png","target":"_blank"}`, `{"url":"https://x/a.png","target":"_blank"}`},
		{"image", `{"url":"ftp://x/a.png"}`, ""},
		{"image", `{"url":"a.png"}`, ""},
		{"image", `{"label":"no url"}`, ""},
		{"image", `{}`, ""},
		{"image", `{"url":"https://x/a.png","colour":"red"}`, ""},
		{"image", `{"url":"https://x/a.png","width":-1}`, ""},
		{"image", `{"url":"https://x/a.png","width":"10"}`, ""},
		{"image", `"https://x/a.png"`, ""},
		{"image", fmt.Sprintf(`{"assetID":%d}`, asset.ID),
			fmt.Sprintf(`{"assetID":%d,"key":%q,"url":%q,"label":"A photo","filesize":%d,"width":40,"height":30}`, asset.ID, asset.Key, asset.URL, asset.Size)},
		{"image", fmt.Sprintf(`{"assetID":%d,"label":"Mine","target":"_blank"}`, asset.ID),
			fmt.Sprintf(`{"assetID":%d,"key":%q,"url":%q,"label":"Mine","target":"_blank","filesize":%d,"width":40,"height":30}`, asset.ID, asset.Key, asset.URL, asset.Size)},
		{"image", fmt.Sprintf(`{"assetID":%d}`, otherAsset.ID), ""}, // another instance's asset
		{"image", `{"assetID":999999}`, ""},
		{"image", `{"assetID":0}`, ""},
		{"image", fmt.Sprintf(`{"assetID":%d,"url":"https://x/a.png"}`, asset.ID), ""},
		{"gallery", fmt.Sprintf(`{"galleryID":%d}`, gallery), fmt.Sprintf(`{"galleryID":%d}`, gallery)},
		{"gallery", fmt.Sprintf(`{"galleryID":%d}`, otherGallery), ""}, // another instance's gallery
		{"gallery", `{"galleryID":999999}`, ""},
		{"gallery", `{"galleryID":0}`, ""},
		{"gallery", `{"galleryID":-3}`, ""},
		{"gallery", `{"galleryID":"3"}`, ""},
		{"gallery", fmt.Sprintf(`{"galleryID":%d,"x":1}`, gallery), ""},
		{"gallery", fmt.Sprint(gallery), ""},
		{"category", fmt.Sprintf(`{"contentID":%d}`, cat), fmt.Sprintf(`{"contentID":%d}`, cat)},
		{"category", fmt.Sprintf(`{"contentID":%d}`, tags[0]), ""},           // an item of another container
		{"category", fmt.Sprintf(`{"contentID":%d}`, foreign.ContentID), ""}, // same container name, other instance
		{"category", `{"contentID":999999}`, ""},
		{"category", `{"contentID":0}`, ""},
		{"category", `{"contentID":"1"}`, ""},
		{"category", fmt.Sprintf(`%d`, cat), ""},
		{"category", fmt.Sprintf(`{"contentID":%d,"extra":true}`, cat), ""},
		{"tags", fmt.Sprintf(`{"contentIDs":[%d,%d]}`, tags[1], tags[0]), fmt.Sprintf(`{"contentIDs":[%d,%d]}`, tags[1], tags[0])},
		{"tags", `{}`, `{}`},
		{"tags", `{"contentIDs":[]}`, ""}, // an empty selection is refused: it would read as the whole container
		{"tags", fmt.Sprintf(`{"contentIDs":[%d,%d]}`, tags[0], tags[0]), ""},
		{"tags", fmt.Sprintf(`{"contentIDs":[%d]}`, cat), ""},
		{"tags", `{"contentIDs":[-1]}`, ""},
		{"tags", fmt.Sprintf(`[%d]`, tags[0]), ""},
		{"tags", fmt.Sprintf(`{"contentIDs":[%d],"sort":"x"}`, tags[0]), ""},
		{"nope", `"x"`, ""},
		{"text", `"` + long + `x"`, ""},
		{"text", `"` + long + `"`, `"` + long + `"`},
	}
	id := f.createItem("en-us", "Kitchen", nil).ContentID
	for _, tt := range tests {
		short := tt.in
		if len(short) > 60 {
			short = short[:60] + "..."
		}
		before := f.item("en-us", id)
		mark := f.lastEvent()
		st, err := f.s.SaveItem(f.ctx, f.inst, "en-us", id, map[string]json.RawMessage{tt.field: json.RawMessage(tt.in)})
		after := f.item("en-us", id)
		if tt.want == "" {
			what := fmt.Sprintf("save %s = %s", tt.field, short)
			wantFields(t, what, err, "fields."+tt.field)
			if after.VersionID != before.VersionID || jsonText(after.Fields) != jsonText(before.Fields) {
				t.Errorf("%s: refused but the copy changed: version %d -> %d", what, before.VersionID, after.VersionID)
			}
			f.checkEvents(what, mark)
			continue
		}
		if err != nil {
			t.Errorf("save %s = %s: %v, want it stored as %.60s", tt.field, short, err, tt.want)
			continue
		}
		if got := after.Fields[tt.field]; !sameJSON(got, []byte(tt.want)) {
			t.Errorf("save %s = %s: stored %.80s, want %.80s", tt.field, short, got, tt.want)
		}
		f.checkEvents("save "+tt.field, mark, itemEv(eventlog.Saved, "en-us", "Kitchen", id, st.VersionID, t0))
	}
}

func TestItemValuesCreateStoresEveryType(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cat, tags := f.kitchen()
	gallery := f.gallery(f.inst, "Photos").ID
	in := map[string]any{
		"text": "t", "html": "<b>h</b>", "number": 3, "decimal": 2.5, "boolean": true,
		"date": "2026-01-31T09:30:00Z", "link": "https://example.com", "image": map[string]any{"url": "/a.png"},
		"gallery": map[string]any{"galleryID": gallery}, "category": map[string]any{"contentID": cat},
		"tags": map[string]any{"contentIDs": []int64{tags[0]}},
	}
	st := f.createItem("en-us", "Kitchen", in)
	it := f.item("en-us", st.ContentID)
	if len(it.Fields) != len(in) {
		t.Errorf("created item has %d fields, want %d: %v", len(it.Fields), len(in), jsonText(it.Fields))
	}
	for name, v := range in {
		want := jsonText(v)
		if got := it.Fields[name]; !sameJSON(got, []byte(want)) {
			t.Errorf("field %s = %s, want %s", name, got, want)
		}
	}
	if it.Model != "Kitchen" || it.ReferenceName != "Kitchen" || it.Locale != "en-us" || it.State != Staging || it.VersionID != st.VersionID {
		t.Errorf("created item = %+v", it)
	}
}

func TestItemValueNamesAreCaseInsensitive(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.articles()
	st := f.createItem("en-us", "Articles", map[string]any{"TITLE": "Hello", "Body": "b"})
	it := f.item("en-us", st.ContentID)
	if got := jsonText(it.Fields); got != `{"body":"b","title":"Hello"}` {
		t.Errorf("fields saved as TITLE and Body are stored as %s, want the model's names", got)
	}
}

func TestItemNullClearsAndRequired(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.articles()
	id := f.createItem("en-us", "Articles", map[string]any{"title": "Hello", "body": "b", "price": 3}).ContentID

	f.saveItem("en-us", id, map[string]any{"body": nil})
	it := f.item("en-us", id)
	if _, ok := it.Fields["body"]; ok || compact(it.Fields["title"]) != `"Hello"` || compact(it.Fields["price"]) != `3` {
		t.Errorf("after body = null: fields %s, want body gone and the others kept", jsonText(it.Fields))
	}
	// Fields not named keep their values.
	f.saveItem("en-us", id, map[string]any{"price": 4})
	if got := jsonText(f.item("en-us", id).Fields); got != `{"price":4,"title":"Hello"}` {
		t.Errorf("after price = 4: fields %s", got)
	}

	tests := []struct {
		name   string
		fields map[string]any
		want   []string
	}{
		{"clear a required field", map[string]any{"title": nil}, []string{"fields.title"}},
		{"empty a required field", map[string]any{"title": ""}, []string{"fields.title"}},
		{"one valid and one invalid field", map[string]any{"body": "new", "price": "x"}, []string{"fields.price"}},
		{"two invalid fields", map[string]any{"body": 1, "price": "x"}, []string{"fields.body", "fields.price"}},
		{"an unknown field beside a valid one", map[string]any{"body": "new", "author": "me"}, []string{"fields.author"}},
	}
	for _, tt := range tests {
		before := f.item("en-us", id)
		mark := f.lastEvent()
		_, err := f.s.SaveItem(f.ctx, f.inst, "en-us", id, values(t, tt.fields))
		wantFields(t, tt.name, err, tt.want...)
		after := f.item("en-us", id)
		if after.VersionID != before.VersionID || jsonText(after.Fields) != jsonText(before.Fields) {
			t.Errorf("%s: the copy changed: %s v%d -> %s v%d", tt.name, jsonText(before.Fields), before.VersionID, jsonText(after.Fields), after.VersionID)
		}
		f.checkEvents(tt.name, mark)
	}
}

func TestCreateItemFailures(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.articles()
	f.model("Teaser", "component", Field{Name: "heading", Type: TypeText})
	other := f.instance("other")
	tests := []struct {
		name   string
		inst   Instance
		ref    string
		fields map[string]any
		kind   problem.Kind
		want   []string
	}{
		{"no required title", f.inst, "Articles", map[string]any{"body": "b"}, problem.Invalid, []string{"fields.title"}},
		{"empty title", f.inst, "Articles", map[string]any{"title": ""}, problem.Invalid, []string{"fields.title"}},
		{"a bad value", f.inst, "Articles", map[string]any{"title": "T", "price": 1.5}, problem.Invalid, []string{"fields.price"}},
		{"an unknown field", f.inst, "Articles", map[string]any{"title": "T", "colour": "red"}, problem.Invalid, []string{"fields.colour"}},
		{"bad values and no title", f.inst, "Articles", map[string]any{"price": "x"}, problem.Invalid, []string{"fields.price"}},
		{"unknown container", f.inst, "Nope", map[string]any{"title": "T"}, problem.NotFound, nil},
		{"container of another instance", other, "Articles", map[string]any{"title": "T"}, problem.NotFound, nil},
	}
	for _, tt := range tests {
		mark := f.lastEvent()
		items := f.count(`SELECT count(*) FROM items`)
		_, err := f.s.CreateItem(f.ctx, tt.inst, "en-us", tt.ref, values(t, tt.fields))
		if tt.kind == problem.Invalid {
			wantFields(t, tt.name, err, tt.want...)
		} else {
			wantKind(t, tt.name, err, tt.kind)
		}
		if n := f.count(`SELECT count(*) FROM items`); n != items {
			t.Errorf("%s: %d items after a failed create, want %d", tt.name, n, items)
		}
		f.checkEvents(tt.name, mark)
	}
	// The container is found case-insensitively and the event carries its own spelling.
	mark := f.lastEvent()
	st := f.createItem("en-us", "ARTICLES", map[string]any{"title": "T"})
	f.checkEvents("create in ARTICLES", mark, itemEv(eventlog.Saved, "en-us", "Articles", st.ContentID, st.VersionID, t0))
}

// TestSharedFields checks the shared-field rule: a shared field saved in
// one locale is saved in every connected copy, which counts as a save of
// each; other fields stay per locale.
func TestSharedFields(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.locale("de-de")
	f.model("Product", "content",
		Field{Name: "title", Type: TypeText, Required: true},
		Field{Name: "price", Type: TypeNumber, Shared: true},
		Field{Name: "photo", Type: TypeImage, Shared: true},
		Field{Name: "note", Type: TypeText})
	f.container("Products", "Product")
	en := f.createItem("en-us", "Products", map[string]any{"title": "Chair", "price": 10, "photo": map[string]any{"url": "/chair.png"}, "note": "en note"})
	id := en.ContentID

	// A new connected copy starts from the shared values, not the others.
	mark := f.lastEvent()
	fr := f.saveItem("fr-ca", id, map[string]any{"title": "Chaise"})
	if fr.ContentID != id || fr.State != Staging || fr.VersionID <= en.VersionID {
		t.Errorf("new fr-ca copy: status %+v, want contentID %d, staging, a version above %d", fr, id, en.VersionID)
	}
	if got := jsonText(f.item("fr-ca", id).Fields); got != `{"photo":{"url":"/chair.png"},"price":10,"title":"Chaise"}` {
		t.Errorf("new fr-ca copy fields = %s, want the shared price and photo and its own title", got)
	}
	f.checkEvents("new connected copy", mark, itemEv(eventlog.Saved, "fr-ca", "Products", id, fr.VersionID, t0))
	if got := f.item("en-us", id); got.VersionID != en.VersionID {
		t.Errorf("en-us version %d after creating fr-ca without shared changes, want %d", got.VersionID, en.VersionID)
	}

	// A new connected copy must still have its required fields.
	mark = f.lastEvent()
	_, err := f.s.SaveItem(f.ctx, f.inst, "de-de", id, values(t, map[string]any{"note": "x"}))
	wantFields(t, "new de-de copy without title", err, "fields.title")
	f.checkEvents("refused new copy", mark)
	if _, err := f.s.Item(f.ctx, f.inst, "de-de", id); !problem.Is(err, problem.NotFound) {
		t.Errorf("Item(de-de) after a refused new copy: %v, want NotFound", err)
	}

	// Publish en-us; saving a shared field in fr-ca saves it in en-us too,
	// which moves en-us back to staging with its published version kept.
	f.itemAction("en-us", id, ActionPublish)
	enBefore := f.item("en-us", id)
	frBefore := f.item("fr-ca", id)
	mark = f.lastEvent()
	f.clock = t0.Add(time.Second)
	st := f.saveItem("fr-ca", id, map[string]any{"price": 12, "note": "fr note"})
	evs := f.eventsAfter(mark)
	enAfter, frAfter := f.item("en-us", id), f.item("fr-ca", id)
	if frAfter.VersionID != st.VersionID || compact(frAfter.Fields["price"]) != "12" || compact(frAfter.Fields["note"]) != `"fr note"` {
		t.Errorf("fr-ca after save: %s v%d, want price 12, note fr note, v%d", jsonText(frAfter.Fields), frAfter.VersionID, st.VersionID)
	}
	if compact(enAfter.Fields["price"]) != "12" || compact(enAfter.Fields["note"]) != `"en note"` || compact(enAfter.Fields["title"]) != `"Chair"` {
		t.Errorf("en-us after fr-ca saved price and note: %s, want price 12 and its own note and title", jsonText(enAfter.Fields))
	}
	if enAfter.VersionID <= enBefore.VersionID || enAfter.VersionID == frAfter.VersionID {
		t.Errorf("en-us version %d (was %d, fr-ca %d), want a new version of its own", enAfter.VersionID, enBefore.VersionID, frAfter.VersionID)
	}
	if enAfter.State != Staging || enAfter.Published == nil || enAfter.Published.VersionID != enBefore.VersionID {
		t.Errorf("en-us after a shared save: state %v published %+v, want staging with version %d still published", enAfter.State, enAfter.Published, enBefore.VersionID)
	}
	if !enAfter.Modified.Equal(f.clock) {
		t.Errorf("en-us modified %v, want the time of the save", enAfter.Modified)
	}
	want := []ev{
		itemEv(eventlog.Saved, "fr-ca", "Products", id, frAfter.VersionID, f.clock),
		itemEv(eventlog.Saved, "en-us", "Products", id, enAfter.VersionID, f.clock),
	}
	if got := simplify(evs); !slices.Equal(sortEvs(got), sortEvs(want)) {
		t.Errorf("events of a shared save:\n got %v\nwant %v", got, want)
	}
	_ = frBefore

	// A non-shared field stays in its locale: no save of the other copy.
	enBefore = f.item("en-us", id)
	mark = f.lastEvent()
	st = f.saveItem("fr-ca", id, map[string]any{"title": "Chaise longue"})
	if got := f.item("en-us", id); got.VersionID != enBefore.VersionID || compact(got.Fields["title"]) != `"Chair"` {
		t.Errorf("en-us after fr-ca saved its title: title %s v%d, want Chair v%d", got.Fields["title"], got.VersionID, enBefore.VersionID)
	}
	f.checkEvents("non-shared save", mark, itemEv(eventlog.Saved, "fr-ca", "Products", id, st.VersionID, f.clock))

	// A deleted copy is not saved; a null on a shared field clears it in
	// every live copy.
	de := f.saveItem("de-de", id, map[string]any{"title": "Stuhl"})
	if got := jsonText(f.item("de-de", id).Fields); got != `{"photo":{"url":"/chair.png"},"price":12,"title":"Stuhl"}` {
		t.Errorf("new de-de copy fields = %s", got)
	}
	f.itemAction("de-de", id, ActionDelete)
	mark = f.lastEvent()
	st = f.saveItem("en-us", id, map[string]any{"photo": nil})
	enAfter, frAfter = f.item("en-us", id), f.item("fr-ca", id)
	deAfter := f.item("de-de", id)
	for _, it := range []Item{enAfter, frAfter} {
		if _, ok := it.Fields["photo"]; ok {
			t.Errorf("%s after photo = null in en-us: %s, want no photo", it.Locale, jsonText(it.Fields))
		}
	}
	if _, ok := deAfter.Fields["photo"]; !ok || deAfter.State != Deleted || deAfter.VersionID != de.VersionID {
		t.Errorf("deleted de-de copy after a shared save: %s state %v v%d, want it untouched", jsonText(deAfter.Fields), deAfter.State, deAfter.VersionID)
	}
	want = []ev{
		itemEv(eventlog.Saved, "en-us", "Products", id, st.VersionID, f.clock),
		itemEv(eventlog.Saved, "fr-ca", "Products", id, frAfter.VersionID, f.clock),
	}
	if got := simplify(f.eventsAfter(mark)); !slices.Equal(sortEvs(got), sortEvs(want)) {
		t.Errorf("events of a shared clear:\n got %v\nwant %v", got, want)
	}

	// A new connected copy that sets a shared field saves it everywhere.
	f.locale("it-it")
	mark = f.lastEvent()
	it := f.saveItem("it-it", id, map[string]any{"title": "Sedia", "price": 15})
	for _, l := range []string{"en-us", "fr-ca", "it-it"} {
		if got := compact(f.item(l, id).Fields["price"]); got != "15" {
			t.Errorf("%s price = %s after it-it created with price 15, want 15", l, got)
		}
	}
	if n := len(f.eventsAfter(mark)); n != 3 {
		t.Errorf("new copy with a shared value wrote %d events, want 3 (it-it, en-us, fr-ca)", n)
	}
	_ = it

	// A shared save that fails in one copy (here: bad value) writes nothing anywhere.
	versions := map[string]int64{}
	for _, l := range []string{"en-us", "fr-ca"} {
		versions[l] = f.item(l, id).VersionID
	}
	mark = f.lastEvent()
	_, err = f.s.SaveItem(f.ctx, f.inst, "en-us", id, values(t, map[string]any{"price": 16, "photo": map[string]any{"url": "ftp://x"}}))
	wantFields(t, "shared save with a bad photo", err, "fields.photo")
	for l, v := range versions {
		if got := f.item(l, id); got.VersionID != v || compact(got.Fields["price"]) != "15" {
			t.Errorf("%s after a refused shared save: price %s v%d, want 15 v%d", l, got.Fields["price"], got.VersionID, v)
		}
	}
	f.checkEvents("refused shared save", mark)
}

func TestItemLookup(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.articles()
	other := f.instance("other")
	id := f.createItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
	tests := []struct {
		name   string
		inst   Instance
		locale string
		id     int64
		detail string
	}{
		{"no copy in the locale", f.inst, "fr-ca", id, "no copy in locale"},
		{"unknown item", f.inst, "en-us", id + 100, "not found"},
		{"item of another instance", other, "en-us", id, "not found"},
	}
	for _, tt := range tests {
		_, err := f.s.Item(f.ctx, tt.inst, tt.locale, tt.id)
		wantKind(t, tt.name, err, problem.NotFound)
		wantDetail(t, tt.name, err, tt.detail)
	}
	_, err := f.s.SaveItem(f.ctx, other, "en-us", id, values(t, map[string]any{"title": "x"}))
	wantKind(t, "save an item of another instance", err, problem.NotFound)
	_, err = f.s.Items(f.ctx, f.inst, "en-us", "Nope", 10, 0)
	wantKind(t, "items of an unknown container", err, problem.NotFound)
}

func TestItemsAndReorder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.locale("de-de")
	f.articles()
	var ids []int64
	for i := range 4 {
		ids = append(ids, f.createItem("en-us", "Articles", map[string]any{"title": fmt.Sprint("T", i)}).ContentID)
	}
	f.saveItem("fr-ca", ids[2], map[string]any{"title": "F"})
	order := func(locale string) []int64 {
		t.Helper()
		p, err := f.s.Items(f.ctx, f.inst, locale, "articles", 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for i, it := range p.Items {
			out = append(out, it.ContentID)
			if i > 0 && it.ItemOrder <= p.Items[i-1].ItemOrder {
				t.Errorf("itemOrder %d after %d, want increasing", it.ItemOrder, p.Items[i-1].ItemOrder)
			}
		}
		if p.TotalCount != len(out) {
			t.Errorf("Items(%s) totalCount %d, want %d", locale, p.TotalCount, len(out))
		}
		return out
	}
	if got := order("en-us"); !slices.Equal(got, ids) {
		t.Errorf("items in creation order = %v, want %v", got, ids)
	}
	if got := order("fr-ca"); !slices.Equal(got, ids[2:3]) {
		t.Errorf("fr-ca items = %v, want %v", got, ids[2:3])
	}
	p, err := f.s.Items(f.ctx, f.inst, "en-us", "Articles", 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Items) != 2 || p.Items[0].ContentID != ids[1] || p.Items[1].ContentID != ids[2] || p.TotalCount != 4 {
		t.Errorf("Items(take 2, skip 1) = %d items from %d, total %d; want %d and %d of 4", len(p.Items), p.Items[0].ContentID, p.TotalCount, ids[1], ids[2])
	}

	// Listed items come first, the others follow in their order.
	mark := f.lastEvent()
	if err := f.s.ReorderContainer(f.ctx, f.inst, "ARTICLES", []int64{ids[3], ids[1]}); err != nil {
		t.Fatal(err)
	}
	want := []int64{ids[3], ids[1], ids[0], ids[2]}
	if got := order("en-us"); !slices.Equal(got, want) {
		t.Errorf("after reorder: %v, want %v", got, want)
	}
	// One whole-list Deleted event per locale, with neither contentID nor pageID.
	var wantEvs []ev
	for _, l := range []string{"en-us", "fr-ca", "de-de"} {
		wantEvs = append(wantEvs, ev{State: eventlog.Deleted, Subject: eventlog.SubjectList, Locale: l, ReferenceName: "Articles", ChangeDate: t0})
	}
	f.checkEvents("reorder", mark, wantEvs...)

	tests := []struct {
		name string
		ids  []int64
	}{
		{"an item of no container", []int64{999999}},
		{"an item listed twice", []int64{ids[0], ids[0]}},
	}
	for _, tt := range tests {
		mark := f.lastEvent()
		err := f.s.ReorderContainer(f.ctx, f.inst, "Articles", tt.ids)
		wantFields(t, tt.name, err, "contentIDs")
		if got := order("en-us"); !slices.Equal(got, want) {
			t.Errorf("%s: order %v after a refused reorder, want %v", tt.name, got, want)
		}
		f.checkEvents(tt.name, mark)
	}
	f.model("Other", "content", Field{Name: "x", Type: TypeText})
	f.container("Others", "Other")
	x := f.createItem("en-us", "Others", nil).ContentID
	err = f.s.ReorderContainer(f.ctx, f.inst, "Articles", []int64{x})
	wantFields(t, "an item of another container", err, "contentIDs")
	wantKind(t, "unknown container", f.s.ReorderContainer(f.ctx, f.inst, "Nope", nil), problem.NotFound)

	// A new item goes last.
	n := f.createItem("en-us", "Articles", map[string]any{"title": "new"}).ContentID
	if got := order("en-us"); got[len(got)-1] != n {
		t.Errorf("new item at %v, want it last", got)
	}
}

func TestDeletedItemStaysDeleted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.articles()
	id := f.createItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
	f.itemAction("en-us", id, ActionPublish)
	if err := f.s.DeleteItem(f.ctx, f.inst, "en-us", id); err != nil {
		t.Fatal(err)
	}
	it := f.item("en-us", id)
	if it.State != Deleted || it.Published != nil {
		t.Errorf("after delete: state %v published %+v, want deleted with nothing published", it.State, it.Published)
	}
	wantKind(t, "delete twice", f.s.DeleteItem(f.ctx, f.inst, "en-us", id), problem.Conflict)
	_, err := f.s.SaveItem(f.ctx, f.inst, "en-us", id, values(t, map[string]any{"title": "again"}))
	wantKind(t, "save a deleted copy", err, problem.Conflict)
	// Another locale may still get a copy.
	if st := f.saveItem("fr-ca", id, map[string]any{"title": "F"}); st.State != Staging {
		t.Errorf("fr-ca copy of an item deleted in en-us: state %v, want staging", st.State)
	}
}

// TestContainerCountsFollowWrites checks that what schema 009 keeps beside
// the item copies follows every write: container_counts (a list's
// totalCount per flavour) equals counting the copies, and each copy's
// container, order and model are its item's. Writes: creates in two
// containers and both locales, a connected copy, shared fields, publish,
// save after publish, unpublish, delete of published and unpublished
// copies, approval, a reorder, a component (no container), and rows written
// by SQL in bulk (a seeder, a test).
func TestContainerCountsFollowWrites(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.articles()
	f.model("Note", "content", Field{Name: "text", Type: TypeText})
	f.container("notes", "Note")
	f.pages()
	check := func(when string) {
		t.Helper()
		var diff []string
		err := f.db.SelectContext(f.ctx, &diff, `
			WITH want AS (SELECT container_id, locale, count(*) FILTER (WHERE published_version_id IS NOT NULL) AS f,
					count(*) FILTER (WHERE state <> 3) AS p
				FROM item_copies WHERE container_id IS NOT NULL GROUP BY container_id, locale)
			SELECT coalesce(w.container_id, cc.container_id) || '/' || coalesce(w.locale, cc.locale) || ': counted ' ||
				coalesce(w.f, 0) || '/' || coalesce(w.p, 0) || ', kept ' || coalesce(cc.fetch_count, 0) || '/' || coalesce(cc.preview_count, 0)
			FROM want w FULL JOIN container_counts cc USING (container_id, locale)
			WHERE coalesce(w.f, 0) <> coalesce(cc.fetch_count, 0) OR coalesce(w.p, 0) <> coalesce(cc.preview_count, 0)
			UNION ALL
			SELECT 'copy ' || ic.content_id || '/' || ic.locale || ' is not placed as its item'
			FROM item_copies ic JOIN items i USING (content_id)
			WHERE ic.container_id IS DISTINCT FROM i.container_id OR ic.item_order <> i.item_order OR ic.model_id <> i.model_id`)
		if err != nil {
			t.Fatal(err)
		}
		if len(diff) > 0 {
			t.Errorf("%s: %s", when, strings.Join(diff, "; "))
		}
	}
	var ids []int64
	for i := range 6 {
		ids = append(ids, f.createItem("en-us", "Articles", map[string]any{"title": fmt.Sprint("a", i), "price": i}).ContentID)
	}
	note := f.createItem("fr-ca", "notes", map[string]any{"text": "n"}).ContentID
	check("after creates")
	f.saveItem("fr-ca", ids[0], map[string]any{"title": "b0", "price": 9}) // a connected copy; price is shared
	f.saveItem("fr-ca", ids[1], map[string]any{"title": "b1"})
	for _, id := range ids[:4] {
		f.itemAction("en-us", id, ActionPublish)
	}
	f.itemAction("fr-ca", ids[0], ActionPublish)
	f.itemAction("fr-ca", note, ActionPublish)
	check("after publishes")
	f.saveItem("en-us", ids[0], map[string]any{"price": 3}) // staging again, still published; fr-ca too
	f.itemAction("en-us", ids[1], ActionUnpublish)
	f.itemAction("en-us", ids[2], ActionDelete)
	f.itemAction("en-us", ids[4], ActionDelete)
	f.itemAction("en-us", ids[5], ActionRequestApproval)
	f.itemAction("en-us", ids[5], ActionApprove)
	check("after unpublish, deletes and approval")
	if err := f.s.ReorderContainer(f.ctx, f.inst, "Articles", []int64{ids[5], ids[3]}); err != nil {
		t.Fatal(err)
	}
	check("after a reorder")
	page := f.createPage("en-us", "Home", 0)
	f.addComponent("en-us", page.PageID, "MainContentZone", "Hi")
	check("after a component")
	if _, err := f.db.ExecContext(f.ctx, `
		WITH c AS (SELECT id, model_id FROM containers WHERE reference_name = 'notes'),
		ins AS (INSERT INTO items (instance_id, model_id, container_id, item_order)
			SELECT $1, c.model_id, c.id, 100 + g FROM c, generate_series(1, 50) g RETURNING content_id)
		INSERT INTO item_copies (content_id, instance_id, locale, state, version_id, fields, modified, published_version_id, published_fields, published_modified)
		SELECT content_id, $1, l, CASE WHEN content_id % 3 = 0 THEN 3 ELSE 2 END, 1, '{}', now(),
			CASE WHEN content_id % 2 = 0 THEN 1 END, CASE WHEN content_id % 2 = 0 THEN '{}'::jsonb END, CASE WHEN content_id % 2 = 0 THEN now() END
		FROM ins, unnest(ARRAY['en-us', 'fr-ca']) l`, f.inst.ID); err != nil {
		t.Fatal(err)
	}
	check("after a bulk insert")
	if _, err := f.db.ExecContext(f.ctx, `UPDATE item_copies SET state = 3, published_version_id = NULL, published_fields = NULL,
		published_modified = NULL WHERE content_id % 5 = 0`); err != nil {
		t.Fatal(err)
	}
	check("after a bulk update")
	if _, err := f.db.ExecContext(f.ctx, `DELETE FROM item_copies WHERE content_id % 7 = 0`); err != nil {
		t.Fatal(err)
	}
	check("after a bulk delete")
}

package content

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/problem"
)

// t0 is the fake clock's start; tests that need another time move the clock.
var t0 = time.Date(2030, 5, 17, 9, 30, 0, 0, time.UTC)

// fixture is one test's store on a fresh database, with an instance of
// locales en-us (the default) and fr-ca, and a fake clock.
type fixture struct {
	t     *testing.T
	ctx   context.Context
	db    *sqlx.DB
	s     *Store
	inst  Instance
	clock time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	db, _ := pgtest.New(t)
	f := &fixture{t: t, ctx: context.Background(), db: db, s: NewStore(db), clock: t0}
	f.s.Now = func() time.Time { return f.clock }
	f.inst = f.instance("acme")
	return f
}

// instance creates another instance with the locales en-us and fr-ca.
func (f *fixture) instance(guid string) Instance {
	f.t.Helper()
	inst, err := f.s.CreateInstance(f.ctx, guid, []Locale{{Code: "en-us", Name: "English"}, {Code: "fr-ca", Name: "Français"}})
	if err != nil {
		f.t.Fatalf("CreateInstance(%q): %v", guid, err)
	}
	return inst
}

func (f *fixture) locale(code string) {
	f.t.Helper()
	if _, err := f.s.CreateLocale(f.ctx, f.inst, Locale{Code: code, Name: code}); err != nil {
		f.t.Fatalf("CreateLocale(%q): %v", code, err)
	}
}

func (f *fixture) model(name, kind string, fields ...Field) Model {
	f.t.Helper()
	m, err := f.s.CreateModel(f.ctx, f.inst, Model{Name: name, Kind: kind, Fields: fields})
	if err != nil {
		f.t.Fatalf("CreateModel(%q): %v", name, err)
	}
	return m
}

func (f *fixture) container(ref, model string) Container {
	f.t.Helper()
	c, err := f.s.CreateContainer(f.ctx, f.inst, ref, model)
	if err != nil {
		f.t.Fatalf("CreateContainer(%q, %q): %v", ref, model, err)
	}
	return c
}

// articles makes the model Article (title text required, body html, price
// number shared) and its container "Articles".
func (f *fixture) articles() {
	f.t.Helper()
	f.model("Article", "content",
		Field{Name: "title", Type: TypeText, Required: true},
		Field{Name: "body", Type: TypeHTML},
		Field{Name: "price", Type: TypeNumber, Shared: true})
	f.container("Articles", "Article")
}

func (f *fixture) createItem(locale, ref string, fields map[string]any) Status {
	f.t.Helper()
	st, err := f.s.CreateItem(f.ctx, f.inst, locale, ref, values(f.t, fields))
	if err != nil {
		f.t.Fatalf("CreateItem(%s, %q): %v", locale, ref, err)
	}
	return st
}

func (f *fixture) saveItem(locale string, id int64, fields map[string]any) Status {
	f.t.Helper()
	st, err := f.s.SaveItem(f.ctx, f.inst, locale, id, values(f.t, fields))
	if err != nil {
		f.t.Fatalf("SaveItem(%s, %d): %v", locale, id, err)
	}
	return st
}

func (f *fixture) itemAction(locale string, id int64, a Action) Status {
	f.t.Helper()
	st, err := f.s.ItemAction(f.ctx, f.inst, locale, id, a)
	if err != nil {
		f.t.Fatalf("ItemAction(%s, %d, %s): %v", locale, id, a, err)
	}
	return st
}

func (f *fixture) item(locale string, id int64) Item {
	f.t.Helper()
	it, err := f.s.Item(f.ctx, f.inst, locale, id)
	if err != nil {
		f.t.Fatalf("Item(%s, %d): %v", locale, id, err)
	}
	return it
}

// pages makes the page model Standard with zones MainContentZone and
// Sidebar, and the component model Teaser (heading text required).
func (f *fixture) pages() {
	f.t.Helper()
	if _, err := f.s.CreatePageModel(f.ctx, f.inst, "Standard", []string{"MainContentZone", "Sidebar"}); err != nil {
		f.t.Fatalf("CreatePageModel: %v", err)
	}
	f.model("Teaser", "component", Field{Name: "heading", Type: TypeText, Required: true})
}

// pageInput is the input of a Standard page titled title under parent (0: the root).
func pageInput(title string, parent int64) PageInput {
	in := PageInput{Title: ptr(title), PageModel: ptr("Standard")}
	if parent != 0 {
		in.ParentPageID = json.RawMessage(jsonText(parent))
	}
	return in
}

func (f *fixture) createPage(locale, title string, parent int64) Page {
	f.t.Helper()
	p, err := f.s.CreatePage(f.ctx, f.inst, locale, pageInput(title, parent))
	if err != nil {
		f.t.Fatalf("CreatePage(%s, %q): %v", locale, title, err)
	}
	return p
}

func (f *fixture) page(locale string, id int64) Page {
	f.t.Helper()
	p, err := f.s.Page(f.ctx, f.inst, locale, id)
	if err != nil {
		f.t.Fatalf("Page(%s, %d): %v", locale, id, err)
	}
	return p
}

func (f *fixture) pageAction(locale string, id int64, a Action) Status {
	f.t.Helper()
	st, err := f.s.PageAction(f.ctx, f.inst, locale, id, a)
	if err != nil {
		f.t.Fatalf("PageAction(%s, %d, %s): %v", locale, id, a, err)
	}
	return st
}

func (f *fixture) addComponent(locale string, pageID int64, zone, heading string) int64 {
	f.t.Helper()
	id, _, err := f.s.AddComponent(f.ctx, f.inst, locale, pageID, zone, "Teaser", values(f.t, map[string]any{"heading": heading}))
	if err != nil {
		f.t.Fatalf("AddComponent(%s, %d, %s): %v", locale, pageID, zone, err)
	}
	return id
}

// lastEvent is the id of the newest row of the event log (0 when empty):
// a mark to read the rows a change writes after it.
func (f *fixture) lastEvent() int64 {
	f.t.Helper()
	var id int64
	if err := f.db.GetContext(f.ctx, &id, `SELECT coalesce(max(id), 0) FROM events`); err != nil {
		f.t.Fatal(err)
	}
	return id
}

// eventsAfter returns the rows of the event log after mark, in id order,
// read straight from the table.
func (f *fixture) eventsAfter(mark int64) []eventlog.Event {
	f.t.Helper()
	evs := []eventlog.Event{}
	err := f.db.SelectContext(f.ctx, &evs, `SELECT id, tx::text AS tx, instance_id, instance_guid, state, subject,
		locale, reference_name, content_id, page_id, version_id, change_date, created_at
		FROM events WHERE id > $1 ORDER BY id`, mark)
	if err != nil {
		f.t.Fatal(err)
	}
	return evs
}

// count runs a count(*) query.
func (f *fixture) count(query string, args ...any) int {
	f.t.Helper()
	var n int
	if err := f.db.GetContext(f.ctx, &n, query, args...); err != nil {
		f.t.Fatalf("%s: %v", query, err)
	}
	return n
}

// ev is an event as the tests compare it: the members a row should carry,
// without ids, transaction and creation time.
type ev struct {
	State         eventlog.State
	Subject       eventlog.Subject
	Locale        string
	ReferenceName string
	ContentID     int64
	PageID        int64
	VersionID     int64
	HasVersion    bool
	ChangeDate    time.Time
}

func (e ev) String() string {
	b, _ := json.Marshal(e)
	return string(b)
}

// simplify turns event rows into comparable values.
func simplify(evs []eventlog.Event) []ev {
	out := make([]ev, len(evs))
	for i, e := range evs {
		out[i] = ev{State: e.State, Subject: e.Subject, Locale: deref(e.Locale), ReferenceName: deref(e.ReferenceName),
			ContentID: deref(e.ContentID), PageID: deref(e.PageID), VersionID: deref(e.VersionID),
			HasVersion: e.VersionID != nil, ChangeDate: e.ChangeDate.UTC()}
	}
	return out
}

// sortEvs orders events for comparisons where the order of rows written by
// one change does not matter.
func sortEvs(evs []ev) []ev {
	out := slices.Clone(evs)
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func itemEv(state eventlog.State, locale, ref string, id, version int64, at time.Time) ev {
	return ev{State: state, Subject: eventlog.SubjectItem, Locale: locale, ReferenceName: ref, ContentID: id, VersionID: version, HasVersion: true, ChangeDate: at}
}

func pageEv(state eventlog.State, locale string, id, version int64, at time.Time) ev {
	return ev{State: state, Subject: eventlog.SubjectPage, Locale: locale, PageID: id, VersionID: version, HasVersion: true, ChangeDate: at}
}

// checkEvents compares the event rows written after mark with want.
func (f *fixture) checkEvents(what string, mark int64, want ...ev) {
	f.t.Helper()
	got := simplify(f.eventsAfter(mark))
	if want == nil {
		want = []ev{}
	}
	if !slices.Equal(got, want) {
		f.t.Errorf("%s: events\n got %v\nwant %v", what, got, want)
	}
}

// values encodes field values for a save.
func values(t testing.TB, in map[string]any) map[string]json.RawMessage {
	t.Helper()
	out := map[string]json.RawMessage{}
	for k, v := range in {
		if r, ok := v.(json.RawMessage); ok {
			out[k] = r
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = b
	}
	return out
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// compact returns raw JSON without insignificant space, for comparisons.
func compact(raw []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "invalid JSON " + string(raw)
	}
	return b.String()
}

// sameJSON reports whether a and b are the same JSON value (Postgres jsonb
// reorders object members and drops escapes).
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// wantKind fails the test unless err is a problem of kind k.
func wantKind(t testing.TB, what string, err error, k problem.Kind) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: error = nil, want %s", what, k.Title())
		return
	}
	if got := problem.KindOf(err); got != k {
		t.Errorf("%s: error kind = %s (%v), want %s", what, got.Title(), err, k.Title())
	}
}

// fieldsOf lists the field names of an Invalid problem, sorted.
func fieldsOf(err error) []string {
	var pe *problem.Error
	if !errors.As(err, &pe) {
		return nil
	}
	var out []string
	for _, fe := range pe.Fields {
		out = append(out, fe.Field)
	}
	sort.Strings(out)
	return out
}

// wantFields fails the test unless err is Invalid and names exactly fields.
func wantFields(t testing.TB, what string, err error, fields ...string) {
	t.Helper()
	wantKind(t, what, err, problem.Invalid)
	sort.Strings(fields)
	if got := fieldsOf(err); !slices.Equal(got, fields) {
		t.Errorf("%s: invalid fields = %q, want %q (error %v)", what, got, fields, err)
	}
}

// wantDetail fails the test unless err's message holds each of parts.
func wantDetail(t testing.TB, what string, err error, parts ...string) {
	t.Helper()
	if err == nil {
		return
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q does not say %q", what, err, p)
		}
	}
}

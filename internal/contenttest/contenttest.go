// Package contenttest is a test's content store on a fresh database, for the
// tests of the packages that read what package content writes (the event
// log, the sync stamper): one instance with the locales en-us (the default)
// and fr-ca, a fake clock, and short helpers that fail the test on error.
// It uses only content's exported API.
package contenttest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/internal/pgtest"
)

// T0 is the fake clock's start.
var T0 = time.Date(2030, 5, 17, 9, 30, 0, 0, time.UTC)

// Fixture is one test's content store on a fresh database.
type Fixture struct {
	T     testing.TB
	Ctx   context.Context
	DB    *sqlx.DB
	S     *content.Store
	Inst  content.Instance
	Clock time.Time
}

// New returns a Fixture with the instance "acme" on a clone of the
// migrated template database.
func New(t testing.TB) *Fixture {
	t.Helper()
	db, _ := pgtest.New(t)
	return On(t, db)
}

// On returns a Fixture with the instance "acme" on db, a migrated database
// (for a test that needs a server of its own, such as pgtest.NewServer's).
func On(t testing.TB, db *sqlx.DB) *Fixture {
	t.Helper()
	f := &Fixture{T: t, Ctx: context.Background(), DB: db, Clock: T0}
	f.S = f.NewStore()
	inst, err := f.S.CreateInstance(f.Ctx, "acme", []content.Locale{{Code: "en-us", Name: "English"}, {Code: "fr-ca", Name: "Français"}})
	if err != nil {
		t.Fatalf("CreateInstance: %v", err)
	}
	f.Inst = inst
	return f
}

// open returns a Fixture on db, whose instance "acme" On made.
func open(t testing.TB, db *sqlx.DB) *Fixture {
	t.Helper()
	f := &Fixture{T: t, Ctx: context.Background(), DB: db, Clock: T0}
	f.S = f.NewStore()
	inst, err := f.S.Instance(f.Ctx, "acme")
	if err != nil {
		t.Fatalf("Instance: %v", err)
	}
	f.Inst = inst
	return f
}

// NewStore returns another Store on the fixture's database with its clock,
// as a restarted process would have.
func (f *Fixture) NewStore() *content.Store {
	s := content.NewStore(f.DB)
	s.Now = func() time.Time { return f.Clock }
	return s
}

// Model creates a content or component model.
func (f *Fixture) Model(name, kind string, fields ...content.Field) content.Model {
	f.T.Helper()
	m, err := f.S.CreateModel(f.Ctx, f.Inst, content.Model{Name: name, Kind: kind, Fields: fields})
	if err != nil {
		f.T.Fatalf("CreateModel(%q): %v", name, err)
	}
	return m
}

// Container creates a container of model.
func (f *Fixture) Container(ref, model string) content.Container {
	f.T.Helper()
	c, err := f.S.CreateContainer(f.Ctx, f.Inst, ref, model)
	if err != nil {
		f.T.Fatalf("CreateContainer(%q, %q): %v", ref, model, err)
	}
	return c
}

// Articles makes the model Article (title text required, body html, price
// number shared) and its container "Articles".
func (f *Fixture) Articles() {
	f.T.Helper()
	f.Model("Article", "content",
		content.Field{Name: "title", Type: content.TypeText, Required: true},
		content.Field{Name: "body", Type: content.TypeHTML},
		content.Field{Name: "price", Type: content.TypeNumber, Shared: true})
	f.Container("Articles", "Article")
}

// Pages makes the page model Standard with zones MainContentZone and
// Sidebar, and the component model Teaser (heading text required).
func (f *Fixture) Pages() {
	f.T.Helper()
	if _, err := f.S.CreatePageModel(f.Ctx, f.Inst, "Standard", []string{"MainContentZone", "Sidebar"}); err != nil {
		f.T.Fatalf("CreatePageModel: %v", err)
	}
	f.Model("Teaser", "component", content.Field{Name: "heading", Type: content.TypeText, Required: true})
}

// CreateItem creates an item in container ref.
func (f *Fixture) CreateItem(locale, ref string, fields map[string]any) content.Status {
	f.T.Helper()
	st, err := f.S.CreateItem(f.Ctx, f.Inst, locale, ref, f.Values(fields))
	if err != nil {
		f.T.Fatalf("CreateItem(%s, %q): %v", locale, ref, err)
	}
	return st
}

// SaveItem saves fields of item id's copy in locale.
func (f *Fixture) SaveItem(locale string, id int64, fields map[string]any) content.Status {
	f.T.Helper()
	st, err := f.S.SaveItem(f.Ctx, f.Inst, locale, id, f.Values(fields))
	if err != nil {
		f.T.Fatalf("SaveItem(%s, %d): %v", locale, id, err)
	}
	return st
}

// ItemAction runs a workflow action on item id's copy in locale.
func (f *Fixture) ItemAction(locale string, id int64, a content.Action) content.Status {
	f.T.Helper()
	st, err := f.S.ItemAction(f.Ctx, f.Inst, locale, id, a)
	if err != nil {
		f.T.Fatalf("ItemAction(%s, %d, %s): %v", locale, id, a, err)
	}
	return st
}

// CreatePage creates a Standard page titled title under parent (0: the root).
func (f *Fixture) CreatePage(locale, title string, parent int64) content.Page {
	f.T.Helper()
	in := content.PageInput{Title: &title, PageModel: ptr("Standard")}
	if parent != 0 {
		in.ParentPageID = json.RawMessage(f.json(parent))
	}
	p, err := f.S.CreatePage(f.Ctx, f.Inst, locale, in)
	if err != nil {
		f.T.Fatalf("CreatePage(%s, %q): %v", locale, title, err)
	}
	return p
}

// PageAction runs a workflow action on page id's copy in locale.
func (f *Fixture) PageAction(locale string, id int64, a content.Action) content.Status {
	f.T.Helper()
	st, err := f.S.PageAction(f.Ctx, f.Inst, locale, id, a)
	if err != nil {
		f.T.Fatalf("PageAction(%s, %d, %s): %v", locale, id, a, err)
	}
	return st
}

// AddComponent adds a Teaser with heading to a zone of a page and returns
// the component's contentID.
func (f *Fixture) AddComponent(locale string, pageID int64, zone, heading string) int64 {
	f.T.Helper()
	id, _, err := f.S.AddComponent(f.Ctx, f.Inst, locale, pageID, zone, "Teaser", f.Values(map[string]any{"heading": heading}))
	if err != nil {
		f.T.Fatalf("AddComponent(%s, %d, %s): %v", locale, pageID, zone, err)
	}
	return id
}

// Count runs a count(*) query.
func (f *Fixture) Count(query string, args ...any) int {
	f.T.Helper()
	var n int
	if err := f.DB.GetContext(f.Ctx, &n, query, args...); err != nil {
		f.T.Fatalf("%s: %v", query, err)
	}
	return n
}

// Values encodes field values for a save; json.RawMessage values pass as
// they are.
func (f *Fixture) Values(in map[string]any) map[string]json.RawMessage {
	f.T.Helper()
	out := map[string]json.RawMessage{}
	for k, v := range in {
		if r, ok := v.(json.RawMessage); ok {
			out[k] = r
			continue
		}
		out[k] = json.RawMessage(f.json(v))
	}
	return out
}

func (f *Fixture) json(v any) string {
	f.T.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		f.T.Fatal(err)
	}
	return string(b)
}

func ptr[T any](v T) *T { return &v }

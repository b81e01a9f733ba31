package content

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/problem"
)

func TestNormalizeGuid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // "" for invalid
	}{
		{"acme", "acme"},
		{"  ACME-Corp ", "acme-corp"},
		{"a1", "a1"},
		{"1a", "1a"},
		{strings.Repeat("a", 64), strings.Repeat("a", 64)},
		{strings.Repeat("a", 65), ""},
		{"", ""},
		{"-acme", ""},
		{"acme_corp", ""},
		{"acme corp", ""},
		{"äcme", ""},
	}
	for _, tt := range tests {
		got, err := NormalizeGuid(tt.in)
		if tt.want == "" {
			if !problem.Is(err, problem.Invalid) {
				t.Errorf("NormalizeGuid(%q) = %q, %v; want an Invalid", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("NormalizeGuid(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestInstances(t *testing.T) {
	t.Parallel()
	db, _ := pgtest.New(t)
	s := NewStore(db)
	ctx := context.Background()
	inst, err := s.CreateInstance(ctx, "Acme", []Locale{{Code: "en-US", Name: " English "}, {Code: "fr-ca", Name: "French"}})
	if err != nil {
		t.Fatal(err)
	}
	if inst.Guid != "acme" || inst.ID == 0 || inst.CreatedAt.IsZero() {
		t.Errorf("CreateInstance = %+v", inst)
	}
	ls, err := s.Locales(ctx, inst)
	want := []Locale{{Code: "en-US", Name: "English", IsDefault: true}, {Code: "fr-ca", Name: "French"}}
	if err != nil || !slices.Equal(ls, want) {
		t.Errorf("Locales = %+v, %v; want %+v", ls, err, want)
	}
	if cs, _ := s.Channels(ctx, inst); len(cs) != 1 || cs[0].Name != "website" {
		t.Errorf("channels of a new instance = %+v, want website", cs)
	}
	for _, g := range []string{"acme", "ACME"} {
		if got, err := s.Instance(ctx, g); err != nil || got.ID != inst.ID {
			t.Errorf("Instance(%q) = %+v, %v", g, got, err)
		}
	}
	_, err = s.Instance(ctx, "nope")
	wantKind(t, "unknown instance", err, problem.NotFound)

	tests := []struct {
		name    string
		guid    string
		locales []Locale
		kind    problem.Kind
	}{
		{"duplicate guid", "ACME", []Locale{{Code: "en", Name: "English"}}, problem.Conflict},
		{"bad guid", "a b", []Locale{{Code: "en", Name: "English"}}, problem.Invalid},
		{"no locales", "beta", nil, problem.Invalid},
		{"bad locale code", "beta", []Locale{{Code: "en us", Name: "English"}}, problem.Invalid},
		{"locale without a name", "beta", []Locale{{Code: "en"}}, problem.Invalid},
		{"locales differing in case", "beta", []Locale{{Code: "en", Name: "a"}, {Code: "EN", Name: "b"}}, problem.Conflict},
	}
	for _, tt := range tests {
		_, err := s.CreateInstance(ctx, tt.guid, tt.locales)
		wantKind(t, tt.name, err, tt.kind)
	}
	// Failed creates leave nothing behind.
	_, err = s.Instance(ctx, "beta")
	wantKind(t, "instance of a failed create", err, problem.NotFound)
	var n int
	db.Get(&n, `SELECT count(*) FROM locales`)
	if n != 2 {
		t.Errorf("%d locales after failed creates, want 2", n)
	}
}

func TestLocales(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.articles()
	f.pages()
	tests := []struct {
		name   string
		l      Locale
		kind   problem.Kind
		fields []string
	}{
		{"same code", Locale{Code: "en-us", Name: "x"}, problem.Conflict, nil},
		{"same code in another case", Locale{Code: "EN-US", Name: "x"}, problem.Conflict, nil},
		{"bad code", Locale{Code: "en us", Name: "x"}, problem.Invalid, []string{"code"}},
		{"code starting with a hyphen", Locale{Code: "-en", Name: "x"}, problem.Invalid, []string{"code"}},
		{"code too long", Locale{Code: strings.Repeat("a", 33), Name: "x"}, problem.Invalid, []string{"code"}},
		{"no name", Locale{Code: "de", Name: " "}, problem.Invalid, []string{"name"}},
		{"name too long", Locale{Code: "de", Name: strings.Repeat("n", 101)}, problem.Invalid, []string{"name"}},
	}
	for _, tt := range tests {
		_, err := f.s.CreateLocale(f.ctx, f.inst, tt.l)
		if tt.kind == problem.Invalid {
			wantFields(t, tt.name, err, tt.fields...)
		} else {
			wantKind(t, tt.name, err, tt.kind)
		}
	}
	l, err := f.s.CreateLocale(f.ctx, f.inst, Locale{Code: "de-DE", Name: " Deutsch ", IsDefault: true})
	if err != nil || l != (Locale{Code: "de-DE", Name: "Deutsch"}) {
		t.Errorf("CreateLocale(de-DE) = %+v, %v; want de-DE Deutsch, not default", l, err)
	}
	ls, _ := f.s.Locales(f.ctx, f.inst)
	var codes []string
	for _, l := range ls {
		codes = append(codes, l.Code)
	}
	if !slices.Equal(codes, []string{"en-us", "fr-ca", "de-DE"}) || !ls[0].IsDefault || ls[2].IsDefault {
		t.Errorf("Locales = %+v, want en-us (default), fr-ca, de-DE", ls)
	}

	// ResolveLocale: the exact code or its lower-case form.
	resolve := []struct {
		code string
		want string
	}{
		{"de-DE", "de-DE"},
		{"de-de", "de-DE"},
		{"en-us", "en-us"},
		{"DE-DE", ""},
		{"EN-US", ""},
		{"de", ""},
		{"", ""},
	}
	for _, tt := range resolve {
		got, err := ResolveLocale(ls, tt.code)
		if tt.want != "" {
			if err != nil || got.Code != tt.want {
				t.Errorf("ResolveLocale(%q) = %+v, %v; want %s", tt.code, got, err, tt.want)
			}
			continue
		}
		wantKind(t, "ResolveLocale("+tt.code+")", err, problem.NotFound)
		wantDetail(t, "ResolveLocale("+tt.code+")", err, "en-us, fr-ca, de-DE")
		var pe *problem.Error
		if errors.As(err, &pe) && !slices.Equal(pe.Extra["locales"].([]string), codes) {
			t.Errorf("ResolveLocale(%q) lists %v, want %v", tt.code, pe.Extra["locales"], codes)
		}
	}
	if got, err := f.s.Locale(f.ctx, f.inst, "fr-ca"); err != nil || got.Code != "fr-ca" {
		t.Errorf("Locale(fr-ca) = %+v, %v", got, err)
	}

	// Delete: not the default, not one in use; by its lower-case form too.
	f.createItem("fr-ca", "Articles", map[string]any{"title": "T"})
	f.locale("it")
	f.createPage("it", "Casa", 0)
	deletes := []struct {
		name string
		code string
		kind problem.Kind // Internal: no error
	}{
		{"the default", "en-us", problem.Conflict},
		{"one with items", "fr-ca", problem.Conflict},
		{"one with pages", "it", problem.Conflict},
		{"an unknown one", "xx", problem.NotFound},
		{"an unused one by its lower-case form", "de-de", problem.Internal},
		{"it again", "de-DE", problem.NotFound},
	}
	for _, tt := range deletes {
		err := f.s.DeleteLocale(f.ctx, f.inst, tt.code)
		if tt.kind == problem.Internal {
			if err != nil {
				t.Errorf("delete %s: %v", tt.name, err)
			}
			continue
		}
		wantKind(t, "delete "+tt.name, err, tt.kind)
	}
	ls, _ = f.s.Locales(f.ctx, f.inst)
	if len(ls) != 3 {
		t.Errorf("%d locales left, want 3: %+v", len(ls), ls)
	}
	// Another instance's locales are its own.
	other := f.instance("other")
	if _, err := f.s.CreateLocale(f.ctx, other, Locale{Code: "de-de", Name: "Deutsch"}); err != nil {
		t.Errorf("de-de in another instance: %v", err)
	}
}

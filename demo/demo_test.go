package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/internal/pgtest"
)

func TestLangOf(t *testing.T) {
	tests := []struct {
		code string
		want lang
	}{
		{"en-us", english},
		{"fr-ca", french},
		{"fr-FR", french},
		{"fr", french},
		{"FR_be", french},
		{"fri", english},
		{"de-de", english},
	}
	for _, tt := range tests {
		if got := langOf(tt.code); got != tt.want {
			t.Errorf("langOf(%q) = %v, want %v", tt.code, got, tt.want)
		}
	}
}

func TestFill(t *testing.T) {
	tests := []struct {
		name      string
		locales   []content.Locale
		aboutPath map[string]string // locale -> path of the About page
	}{
		{
			name:      "english default",
			locales:   []content.Locale{{Code: "en-us", Name: "English"}, {Code: "fr-ca", Name: "Français"}},
			aboutPath: map[string]string{"en-us": "/about-us", "fr-ca": "/a-propos"},
		},
		{
			name:      "french default",
			locales:   []content.Locale{{Code: "fr-ca", Name: "Français"}, {Code: "en-us", Name: "English"}},
			aboutPath: map[string]string{"en-us": "/about-us", "fr-ca": "/a-propos"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db, _ := pgtest.New(t)
			s := content.NewStore(db)
			inst, err := s.CreateInstance(ctx, "demo", tt.locales)
			if err != nil {
				t.Fatal(err)
			}
			if err := Fill(ctx, s, inst); err != nil {
				t.Fatalf("Fill: %v", err)
			}
			checkModels(t, s, inst)
			checkItems(t, s, inst, tt.locales)
			for _, l := range tt.locales {
				checkPages(t, s, inst, l.Code, tt.aboutPath[l.Code])
			}

			before := countEvents(t, s, inst)
			if err := Fill(ctx, s, inst); err != nil {
				t.Fatalf("second Fill: %v", err)
			}
			if got := countEvents(t, s, inst); got != before {
				t.Errorf("second Fill wrote %d events, want none", got-before)
			}
		})
	}
}

func checkModels(t *testing.T, s *content.Store, inst content.Instance) {
	t.Helper()
	ms, err := s.Models(context.Background(), inst)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	types := map[content.FieldType]bool{}
	sharedFields := 0
	for _, m := range ms {
		kinds[m.Kind]++
		for _, f := range m.Fields {
			types[f.Type] = true
			if f.Shared {
				sharedFields++
			}
		}
	}
	if kinds["content"] < 3 || kinds["component"] < 2 {
		t.Errorf("models: %d content, %d component; want at least 3 and 2", kinds["content"], kinds["component"])
	}
	for _, ft := range []content.FieldType{content.TypeText, content.TypeHTML, content.TypeNumber, content.TypeDecimal,
		content.TypeBoolean, content.TypeDate, content.TypeLink, content.TypeImage, content.TypeGallery, content.TypeItem, content.TypeList} {
		if !types[ft] {
			t.Errorf("no model has a field of type %s", ft)
		}
	}
	if sharedFields == 0 {
		t.Errorf("no model has a shared field")
	}
}

func checkItems(t *testing.T, s *content.Store, inst content.Instance, locales []content.Locale) {
	t.Helper()
	ctx := context.Background()
	cs, err := s.Containers(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, c := range cs {
		m, err := s.Model(ctx, inst, c.Model)
		if err != nil {
			t.Fatal(err)
		}
		copies := map[string]map[int64]content.Item{}
		for _, l := range locales {
			page, err := s.Items(ctx, inst, l.Code, c.ReferenceName, 1000, 0)
			if err != nil {
				t.Fatal(err)
			}
			copies[l.Code] = map[int64]content.Item{}
			for _, it := range page.Items {
				copies[l.Code][it.ContentID] = it
				if it.State != content.Published || it.Published == nil || it.Published.VersionID != it.VersionID {
					t.Errorf("item %d (%s) in %s: state %v, published %+v; want published at its version", it.ContentID, c.ReferenceName, l.Code, it.State, it.Published)
				}
			}
		}
		first, second := copies[locales[0].Code], copies[locales[1].Code]
		if len(first) != len(second) {
			t.Errorf("container %s: %d items in %s, %d in %s", c.ReferenceName, len(first), locales[0].Code, len(second), locales[1].Code)
		}
		total += len(first)
		for id, a := range first {
			b, ok := second[id]
			if !ok {
				t.Errorf("item %d (%s) has no copy in %s", id, c.ReferenceName, locales[1].Code)
				continue
			}
			translated := false
			for _, f := range m.Fields {
				same := bytes.Equal(a.Fields[f.Name], b.Fields[f.Name])
				if f.Shared && !same {
					t.Errorf("item %d shared field %s: %s in %s, %s in %s", id, f.Name, a.Fields[f.Name], locales[0].Code, b.Fields[f.Name], locales[1].Code)
				}
				if !f.Shared && !same && (f.Type == content.TypeText || f.Type == content.TypeHTML) {
					translated = true
				}
			}
			if !translated {
				t.Errorf("item %d (%s): no text differs between %s and %s", id, c.ReferenceName, locales[0].Code, locales[1].Code)
			}
		}
	}
	if total < 20 {
		t.Errorf("%d items in containers, want at least 20", total)
	}
}

func checkPages(t *testing.T, s *content.Store, inst content.Instance, locale, aboutPath string) {
	t.Helper()
	ctx := context.Background()
	ps, err := s.Pages(ctx, inst, locale, "website")
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) < 6 {
		t.Errorf("%s: %d pages, want at least 6", locale, len(ps))
	}
	types := map[string]int{}
	paths := map[string]bool{}
	lists := map[string]bool{} // "selection", "whole"
	for _, p := range ps {
		types[p.PageType]++
		paths[p.Path] = true
		if p.State != content.Published || p.Published == nil {
			t.Errorf("%s page %s: state %v, want published", locale, p.Path, p.State)
		}
		components := 0
		for zone, entries := range p.Zones {
			for _, e := range entries {
				components++
				it, err := s.Item(ctx, inst, locale, e.ContentID)
				if err != nil {
					t.Fatal(err)
				}
				if it.State != content.Published {
					t.Errorf("%s page %s zone %s: component %s is %v, want published", locale, p.Path, zone, e.Module, it.State)
				}
				m, err := s.Model(ctx, inst, e.Module)
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range m.Fields {
					v, ok := it.Fields[f.Name]
					if f.Type != content.TypeList || !ok {
						continue
					}
					var l content.ListLink
					if err := json.Unmarshal(v, &l); err != nil {
						t.Fatalf("%s component %d field %s: %v", locale, e.ContentID, f.Name, err)
					}
					if len(l.ContentIDs) > 0 {
						lists["selection"] = true
					} else {
						lists["whole"] = true
					}
				}
			}
		}
		switch p.PageType {
		case content.PageStatic, content.PageDynamic:
			if components == 0 {
				t.Errorf("%s %s page %s has no components", locale, p.PageType, p.Path)
			}
		case content.PageLink:
			if p.RedirectURL == "" {
				t.Errorf("%s link page %s has no redirect URL", locale, p.Path)
			}
		}
		if p.PageType == content.PageDynamic && (p.Dynamic == nil || p.Dynamic.ReferenceName != "posts") {
			t.Errorf("%s dynamic page %s is bound to %+v, want posts", locale, p.Path, p.Dynamic)
		}
	}
	for _, pt := range []string{content.PageDynamic, content.PageFolder, content.PageLink} {
		if types[pt] != 1 {
			t.Errorf("%s: %d %s pages, want 1", locale, types[pt], pt)
		}
	}
	if !paths[aboutPath] {
		t.Errorf("%s: no page at %s", locale, aboutPath)
	}
	if !lists["selection"] || !lists["whole"] {
		t.Errorf("%s: components link lists as %v, want both a selection and a whole container", locale, lists)
	}
}

func countEvents(t *testing.T, s *content.Store, inst content.Instance) int {
	t.Helper()
	var n int
	if err := s.DB().Get(&n, `SELECT count(*) FROM events WHERE instance_id = $1`, inst.ID); err != nil {
		t.Fatal(err)
	}
	return n
}

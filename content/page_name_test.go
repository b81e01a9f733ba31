package content

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/problem"
)

var pageNameForm = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func TestPageName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		title string
		want  string
	}{
		{"About", "about"},
		{"About us", "about-us"},
		{"Über uns", "uber-uns"},
		{"Café & Crème", "cafe-and-creme"},
		{"Rock & Roll", "rock-and-roll"},
		{"Q&A", "qanda"},
		{"Straße", "strasse"},
		{"Ærøskøbing", "aeroskobing"},
		{"Łódź", "lodz"},
		{"İstanbul", "istanbul"},
		{"ﬁle", "file"},
		{"１２３ Ｇｏ", "123-go"},
		{"日本語", "ri-ben-yu"},
		{"会社概要", "hui-she-gai-yao"},
		{"Ελληνικά", "ellenika"},
		{"Привет", "privet"},
		{"О нас", "o-nas"},
		{"한국어", "hangugeo"},
		{"Mixed 日本 text", "mixed-ri-ben-text"},
		{"🎉", "page"},
		{"🎉 Party 🎉", "party"},
		{"Party🎉Time", "party-time"},
		{"!!!", "page"},
		{"", "page"},
		{"   ", "page"},
		{"...Hello, World!...", "hello-world"},
		{"--a--b--", "a-b"},
		{"C++ Guide", "c-guide"},
		{"  spaced   out  ", "spaced-out"},
		{"Version 2.0", "version-2-0"},
		{"UPPER lower MiXeD", "upper-lower-mixed"},
		{"tab\tand\nnewline", "tab-and-newline"},
		{strings.Repeat("a", 100), strings.Repeat("a", 80)},
		// The cut at 80 lands after a hyphen, which is trimmed.
		{strings.Repeat("abc ", 30), strings.TrimSuffix(strings.Repeat("abc-", 20), "-")},
		{strings.Repeat("ü", 100), strings.Repeat("u", 80)},
	}
	for _, tt := range tests {
		got := PageName(tt.title)
		if got != tt.want {
			t.Errorf("PageName(%q) = %q, want %q", tt.title, got, tt.want)
		}
		if !pageNameForm.MatchString(got) || len(got) > 80 {
			t.Errorf("PageName(%q) = %q, not 1 to 80 lower-case ASCII words joined by single hyphens", tt.title, got)
		}
	}
}

func TestUniqueName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		base  string
		taken []string
		want  string
	}{
		{"about", nil, "about"},
		{"about", []string{"about"}, "about-2"},
		{"about", []string{"about", "about-2"}, "about-3"},
		{"about", []string{"about", "about-3"}, "about-2"},
		{"about", []string{"about-2"}, "about"},
	}
	for _, tt := range tests {
		taken := map[string]bool{}
		for _, n := range tt.taken {
			taken[n] = true
		}
		if got := uniqueName(tt.base, taken); got != tt.want {
			t.Errorf("uniqueName(%q, %q) = %q, want %q", tt.base, tt.taken, got, tt.want)
		}
	}
}

func TestPageNamesInStore(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.pages()
	name := func(p Page) string { return p.Name }

	// Collisions among siblings give name-2, name-3, also against a name
	// another title already produced.
	if got := name(f.createPage("en-us", "About 2", 0)); got != "about-2" {
		t.Errorf("first page titled %q: name %q, want %q", "About 2", got, "about-2")
	}
	for i, want := range []string{"about", "about-3", "about-4"} {
		if got := name(f.createPage("en-us", "About", 0)); got != want {
			t.Errorf("page %d titled About: name %q, want %q", i+1, got, want)
		}
	}
	if got := name(f.createPage("en-us", "ABOUT!", 0)); got != "about-5" {
		t.Errorf("page titled ABOUT!: name %q, want about-5", got)
	}

	// The same title under different parents is fine.
	a := f.createPage("en-us", "Products", 0)
	b := f.createPage("en-us", "Services", 0)
	ca := f.createPage("en-us", "Contact", a.PageID)
	cb := f.createPage("en-us", "Contact", b.PageID)
	if ca.Name != "contact" || cb.Name != "contact" {
		t.Errorf("Contact under two parents: names %q and %q, want contact and contact", ca.Name, cb.Name)
	}
	if ca.Path != "/products/contact" || cb.Path != "/services/contact" {
		t.Errorf("paths %q and %q, want /products/contact and /services/contact", ca.Path, cb.Path)
	}
	// Under a parent, root pages do not count.
	if got := name(f.createPage("en-us", "About", a.PageID)); got != "about" {
		t.Errorf("About under Products: name %q, want about", got)
	}

	// The name never changes when the title is edited.
	p := f.createPage("en-us", "Old title", 0)
	saved, err := f.s.SavePage(f.ctx, f.inst, "en-us", p.PageID, PageInput{Title: ptr("New title")})
	if err != nil {
		t.Fatal(err)
	}
	if saved.Name != "old-title" || saved.Title != "New title" || saved.Path != "/old-title" {
		t.Errorf("after retitling: name %q title %q path %q, want old-title, New title, /old-title", saved.Name, saved.Title, saved.Path)
	}
	// and the freed title is not taken by it: a new page titled "Old title"
	// collides with the unchanged name.
	if got := name(f.createPage("en-us", "Old title", 0)); got != "old-title-2" {
		t.Errorf("new page titled Old title: name %q, want old-title-2", got)
	}

	// A deleted sibling frees its name.
	n := f.createPage("en-us", "News", 0)
	if err := f.s.DeletePage(f.ctx, f.inst, "en-us", n.PageID); err != nil {
		t.Fatal(err)
	}
	if got := name(f.createPage("en-us", "News", 0)); got != "news" {
		t.Errorf("News after deleting the old News: name %q, want news", got)
	}

	// Names are per locale: a connected copy is named from its own title,
	// and the same name in two locales is fine.
	fr, err := f.s.SavePage(f.ctx, f.inst, "fr-ca", p.PageID, PageInput{Title: ptr("À propos")})
	if err != nil {
		t.Fatal(err)
	}
	if fr.Name != "a-propos" {
		t.Errorf("fr-ca copy titled À propos: name %q, want a-propos", fr.Name)
	}
	fr2, err := f.s.SavePage(f.ctx, f.inst, "fr-ca", a.PageID, PageInput{Title: ptr("About")})
	if err != nil {
		t.Fatal(err)
	}
	if fr2.Name != "about" {
		t.Errorf("fr-ca copy titled About (en-us has about, about-3...): name %q, want about", fr2.Name)
	}

	// Titles in other scripts are transliterated; titles with nothing
	// left give page, page-2.
	for _, want := range []string{"ri-ben-yu", "ri-ben-yu-2"} {
		if got := name(f.createPage("en-us", "日本語", 0)); got != want {
			t.Errorf("page titled 日本語: name %q, want %q", got, want)
		}
	}
	for _, want := range []string{"page", "page-2"} {
		if got := name(f.createPage("en-us", "🎉!", 0)); got != want {
			t.Errorf("page titled 🎉!: name %q, want %q", got, want)
		}
	}
}

func TestPageNameMoveCollision(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.pages()
	a := f.createPage("en-us", "A", 0)
	f.createPage("en-us", "Team", a.PageID)
	team := f.createPage("en-us", "Team", 0)
	mark := f.lastEvent()
	_, err := f.s.SavePage(f.ctx, f.inst, "en-us", team.PageID, PageInput{ParentPageID: []byte(fmt.Sprint(a.PageID))})
	wantKind(t, "move next to a sibling of the same name", err, problem.Conflict)
	if got := f.page("en-us", team.PageID); got.Path != "/team" {
		t.Errorf("after a refused move: path %q, want /team", got.Path)
	}
	f.checkEvents("refused move", mark)
}

// TestPageNameOfAName checks that a title that is a name already, which
// PageName returns as it is, is what the transliteration makes of it, and
// that near misses still go through it.
func TestPageNameOfAName(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"a", "post-1", "hello-world-2026", "x-0-0", "9", strings.Repeat("a", 80), strings.Repeat("ab-", 26) + "ab",
		"", "-a", "a-", "a--b", "A-b", "a_b", "a b", "a.b", "é", strings.Repeat("a", 81), "post-1-", "1-2-3"} {
		if got, want := PageName(s), makePageName(s); got != want {
			t.Errorf("PageName(%q) = %q, the transliteration makes %q", s, got, want)
		}
		if isPageName(s) && makePageName(s) != s {
			t.Errorf("%q is taken for a name, but the transliteration makes %q", s, makePageName(s))
		}
	}
}

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

func parentRaw(id int64) json.RawMessage {
	if id == 0 {
		return json.RawMessage("null")
	}
	return json.RawMessage(fmt.Sprint(id))
}

func TestPageTreePaths(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.pages()
	home := f.createPage("en-us", "Home", 0)
	about := f.createPage("en-us", "About us", home.PageID)
	team := f.createPage("en-us", "The Team", about.PageID)
	contact := f.createPage("en-us", "Contact", home.PageID)
	blog := f.createPage("en-us", "Blog", 0)

	if home.PageID == 0 || home.Channel != "website" || home.ParentPageID != nil || home.PageModel != "Standard" {
		t.Errorf("created page = %+v", home)
	}
	if about.ParentPageID == nil || *about.ParentPageID != home.PageID {
		t.Errorf("About's parent = %v, want %d", about.ParentPageID, home.PageID)
	}
	pages, err := f.s.Pages(f.ctx, f.inst, "en-us", "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pages {
		got = append(got, p.Path)
	}
	want := []string{"/home", "/home/about-us", "/home/about-us/the-team", "/home/contact", "/blog"}
	if !slices.Equal(got, want) {
		t.Errorf("page paths = %q, want parents before children, siblings in order: %q", got, want)
	}
	if p := f.page("en-us", team.PageID); p.Path != "/home/about-us/the-team" || p.Name != "the-team" {
		t.Errorf("Page(team) path %q name %q", p.Path, p.Name)
	}
	_ = contact
	_ = blog

	// Pages of another channel form their own tree.
	if _, err := f.s.CreateChannel(f.ctx, f.inst, "mobile"); err != nil {
		t.Fatal(err)
	}
	in := pageInput("Home", 0)
	in.Channel = ptr("Mobile")
	m, err := f.s.CreatePage(f.ctx, f.inst, "en-us", in)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "home" || m.Path != "/home" || m.Channel != "mobile" {
		t.Errorf("Home in channel mobile: name %q path %q channel %q, want home, /home, mobile", m.Name, m.Path, m.Channel)
	}
	web, err := f.s.Pages(f.ctx, f.inst, "en-us", "WEBSITE")
	if err != nil {
		t.Fatal(err)
	}
	if len(web) != 5 {
		t.Errorf("Pages(website) = %d pages, want 5", len(web))
	}
	_, err = f.s.Pages(f.ctx, f.inst, "en-us", "print")
	wantKind(t, "Pages of an unknown channel", err, problem.NotFound)

	// A parent in another channel is refused.
	in = pageInput("Child", home.PageID)
	in.Channel = ptr("mobile")
	_, err = f.s.CreatePage(f.ctx, f.inst, "en-us", in)
	wantFields(t, "parent in another channel", err, "parentPageID")

	// Paths are per locale, from each locale's names.
	if _, err := f.s.SavePage(f.ctx, f.inst, "fr-ca", home.PageID, PageInput{Title: ptr("Accueil")}); err != nil {
		t.Fatal(err)
	}
	fr, err := f.s.SavePage(f.ctx, f.inst, "fr-ca", about.PageID, PageInput{Title: ptr("À propos")})
	if err != nil {
		t.Fatal(err)
	}
	if fr.Path != "/accueil/a-propos" {
		t.Errorf("fr-ca path = %q, want /accueil/a-propos", fr.Path)
	}
	if p := f.page("en-us", about.PageID); p.Path != "/home/about-us" || p.Title != "About us" {
		t.Errorf("en-us copy after fr-ca copy made: path %q title %q", p.Path, p.Title)
	}
}

func TestCreatePageFailures(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.pages()
	f.articles()
	home := f.createPage("en-us", "Home", 0)
	gone := f.createPage("en-us", "Gone", 0)
	f.pageAction("en-us", gone.PageID, ActionDelete)
	other := f.instance("other")
	long := strings.Repeat("x", 201)
	tests := []struct {
		name   string
		inst   Instance
		locale string
		in     PageInput
		kind   problem.Kind
		fields []string
	}{
		{"no page model", f.inst, "en-us", PageInput{Title: ptr("X")}, problem.Invalid, []string{"pageModel"}},
		{"unknown page model", f.inst, "en-us", PageInput{Title: ptr("X"), PageModel: ptr("Nope")}, problem.NotFound, nil},
		{"no title", f.inst, "en-us", PageInput{PageModel: ptr("Standard")}, problem.Invalid, []string{"title"}},
		{"blank title", f.inst, "en-us", pageInput("   ", 0), problem.Invalid, []string{"title"}},
		{"title too long", f.inst, "en-us", pageInput(long, 0), problem.Invalid, []string{"title"}},
		{"unknown channel", f.inst, "en-us", PageInput{Title: ptr("X"), PageModel: ptr("Standard"), Channel: ptr("print")}, problem.NotFound, nil},
		{"unknown parent", f.inst, "en-us", pageInput("X", 999999), problem.NotFound, nil},
		{"parent without a copy in the locale", f.inst, "fr-ca", pageInput("X", home.PageID), problem.Conflict, nil},
		{"parent id not a number", f.inst, "en-us", PageInput{Title: ptr("X"), PageModel: ptr("Standard"), ParentPageID: json.RawMessage(`"1"`)}, problem.Invalid, []string{"parentPageID"}},
		{"parent id zero", f.inst, "en-us", PageInput{Title: ptr("X"), PageModel: ptr("Standard"), ParentPageID: json.RawMessage(`0`)}, problem.Invalid, []string{"parentPageID"}},
		{"bad redirect", f.inst, "en-us", PageInput{Title: ptr("X"), PageModel: ptr("Standard"), RedirectURL: ptr("javascript:alert(1)")}, problem.Invalid, []string{"redirectUrl"}},
		{"folder and dynamic", f.inst, "en-us", PageInput{Title: ptr("X"), PageModel: ptr("Standard"), Folder: ptr(true), Dynamic: &Dynamic{ReferenceName: "Articles", PathField: "title"}}, problem.Invalid, []string{"folder"}},
		{"dynamic on an unknown container", f.inst, "en-us", PageInput{Title: ptr("X"), PageModel: ptr("Standard"), Dynamic: &Dynamic{ReferenceName: "Nope", PathField: "title"}}, problem.NotFound, nil},
		{"dynamic on a non-text field", f.inst, "en-us", PageInput{Title: ptr("X"), PageModel: ptr("Standard"), Dynamic: &Dynamic{ReferenceName: "Articles", PathField: "price"}}, problem.Invalid, []string{"dynamic.pathField"}},
		{"dynamic on an unknown field", f.inst, "en-us", PageInput{Title: ptr("X"), PageModel: ptr("Standard"), Dynamic: &Dynamic{ReferenceName: "Articles", PathField: "slug"}}, problem.Invalid, []string{"dynamic.pathField"}},
		{"page model of another instance", other, "en-us", pageInput("X", 0), problem.NotFound, nil},
		{"parent deleted in the locale", f.inst, "en-us", pageInput("X", gone.PageID), problem.Conflict, nil},
		{"title of 201 characters", f.inst, "en-us", pageInput(strings.Repeat("日", 201), 0), problem.Invalid, []string{"title"}},
	}
	for _, tt := range tests {
		mark := f.lastEvent()
		pages := f.count(`SELECT count(*) FROM pages`)
		_, err := f.s.CreatePage(f.ctx, tt.inst, tt.locale, tt.in)
		if tt.kind == problem.Invalid {
			wantFields(t, tt.name, err, tt.fields...)
		} else {
			wantKind(t, tt.name, err, tt.kind)
		}
		if n := f.count(`SELECT count(*) FROM pages`); n != pages {
			t.Errorf("%s: %d pages after a failed create, want %d", tt.name, n, pages)
		}
		f.checkEvents(tt.name, mark)
	}
	// The title limit counts characters, not bytes.
	// Its name is transliterated and cut at 80 bytes on a word boundary.
	if p, err := f.s.CreatePage(f.ctx, f.inst, "en-us", pageInput(strings.Repeat("日", 200), 0)); err != nil || !strings.HasPrefix(p.Name, "ri-ri") || len(p.Name) > 80 || strings.HasSuffix(p.Name, "-") {
		t.Errorf("title of 200 CJK characters: %+v, %v; want a page named ri-ri-... of at most 80 bytes", p.Name, err)
	}
}

func TestPageTypes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.pages()
	f.articles()
	tests := []struct {
		name    string
		in      PageInput
		want    string
		dynamic *Dynamic
	}{
		{"static by default", PageInput{}, PageStatic, nil},
		{"link with a redirect", PageInput{RedirectURL: ptr("https://example.com")}, PageLink, nil},
		{"link with a site path", PageInput{RedirectURL: ptr("/elsewhere")}, PageLink, nil},
		{"link with a ~/ path", PageInput{RedirectURL: ptr("~/elsewhere")}, PageLink, nil},
		{"folder", PageInput{Folder: ptr(true)}, PageFolder, nil},
		{"not a folder", PageInput{Folder: ptr(false)}, PageStatic, nil},
		{"dynamic", PageInput{Dynamic: &Dynamic{ReferenceName: "articles", PathField: "TITLE"}}, PageDynamic, &Dynamic{ReferenceName: "Articles", PathField: "title"}},
	}
	for i, tt := range tests {
		in := tt.in
		in.Title, in.PageModel = ptr(fmt.Sprint("Page ", i)), ptr("Standard")
		p, err := f.s.CreatePage(f.ctx, f.inst, "en-us", in)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if p.PageType != tt.want {
			t.Errorf("%s: page type %q, want %q", tt.name, p.PageType, tt.want)
		}
		if (p.Dynamic == nil) != (tt.dynamic == nil) || (p.Dynamic != nil && *p.Dynamic != *tt.dynamic) {
			t.Errorf("%s: dynamic %+v, want %+v", tt.name, p.Dynamic, tt.dynamic)
		}
	}

	// Saves change the type: a redirect makes a link, removing it a static
	// page, folder true and false, dynamic.
	p := f.createPage("en-us", "Changing", 0)
	steps := []struct {
		in   PageInput
		want string
	}{
		{PageInput{RedirectURL: ptr("https://example.com")}, PageLink},
		{PageInput{MenuText: ptr("kept")}, PageLink},
		{PageInput{RedirectURL: ptr("")}, PageStatic},
		{PageInput{Folder: ptr(true)}, PageFolder},
		{PageInput{Title: ptr("Still a folder")}, PageFolder},
		{PageInput{Folder: ptr(false)}, PageStatic},
		{PageInput{Dynamic: &Dynamic{ReferenceName: "Articles", PathField: "title"}}, PageDynamic},
		{PageInput{Title: ptr("Still dynamic")}, PageDynamic},
		{PageInput{Folder: ptr(true)}, PageFolder},
	}
	for i, st := range steps {
		got, err := f.s.SavePage(f.ctx, f.inst, "en-us", p.PageID, st.in)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got.PageType != st.want {
			t.Errorf("step %d (%s): page type %q, want %q", i, jsonText(st.in), got.PageType, st.want)
		}
		if (got.Dynamic != nil) != (st.want == PageDynamic) {
			t.Errorf("step %d: dynamic %+v on a %s page", i, got.Dynamic, got.PageType)
		}
	}

	// The page type belongs to the page, the redirect to each copy: a copy
	// in another locale made or saved without touching its redirect leaves
	// a link a link.
	in := pageInput("Go", 0)
	in.RedirectURL = ptr("https://example.com")
	link, err := f.s.CreatePage(f.ctx, f.inst, "en-us", in)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []PageInput{{Title: ptr("Aller")}, {MenuText: ptr("Aller!")}} {
		if _, err := f.s.SavePage(f.ctx, f.inst, "fr-ca", link.PageID, st); err != nil {
			t.Fatal(err)
		}
		if got := f.page("en-us", link.PageID); got.PageType != PageLink || got.RedirectURL != "https://example.com" {
			t.Errorf("link page after a fr-ca save of %s: type %q redirect %q, want a link to https://example.com", jsonText(st), got.PageType, got.RedirectURL)
		}
	}

	// A container that backs a dynamic page cannot be deleted.
	wantKind(t, "delete a container behind a dynamic page", f.s.DeleteContainer(f.ctx, f.inst, "Articles"), problem.Conflict)
}

func TestSavePageFields(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.pages()
	p := f.createPage("en-us", "Home", 0)
	if p.MenuText != "Home" || !p.Visible.Menu || !p.Visible.Sitemap || p.State != Staging {
		t.Errorf("new page: menuText %q visible %+v state %v, want the title, visible, staging", p.MenuText, p.Visible, p.State)
	}
	top := "<script>x</script>"
	in := PageInput{
		Title:                  ptr("  Welcome  "),
		MenuText:               ptr("Start"),
		Visible:                &Visible{Menu: false, Sitemap: true},
		SEO:                    &SEO{MetaDescription: "d", MetaKeywords: "k"},
		Scripts:                &Scripts{Top: &top},
		SecurePage:             ptr(true),
		ExcludeFromOutputCache: ptr(true),
	}
	mark := f.lastEvent()
	got, err := f.s.SavePage(f.ctx, f.inst, "en-us", p.PageID, in)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "Welcome" || got.MenuText != "Start" || got.Visible.Menu || !got.Visible.Sitemap ||
		got.SEO.MetaDescription != "d" || got.Scripts.Top == nil || *got.Scripts.Top != top || !got.SecurePage || !got.ExcludeFromOutputCache {
		t.Errorf("saved page doc = %s", jsonText(got.PageDoc))
	}
	if got.Name != "home" || got.VersionID <= p.VersionID || !got.Modified.Equal(t0) {
		t.Errorf("saved page: name %q version %d (was %d) modified %v", got.Name, got.VersionID, p.VersionID, got.Modified)
	}
	f.checkEvents("save page", mark, pageEv(eventlog.Saved, "en-us", p.PageID, got.VersionID, t0))

	// Members not given keep their values.
	got2, err := f.s.SavePage(f.ctx, f.inst, "en-us", p.PageID, PageInput{SecurePage: ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	if got2.Title != "Welcome" || got2.MenuText != "Start" || got2.SecurePage || !got2.ExcludeFromOutputCache {
		t.Errorf("after a save of securePage only: %s", jsonText(got2.PageDoc))
	}

	// Refused saves write nothing.
	tests := []struct {
		name   string
		in     PageInput
		kind   problem.Kind
		fields []string
	}{
		{"change the model", PageInput{PageModel: ptr("Standard")}, problem.Invalid, []string{"pageModel"}},
		{"change the channel", PageInput{Channel: ptr("mobile")}, problem.Invalid, []string{"channel"}},
		{"blank title", PageInput{Title: ptr(" "), MenuText: ptr("x")}, problem.Invalid, []string{"title"}},
		{"bad redirect", PageInput{RedirectURL: ptr("mailto:x@example.com"), MenuText: ptr("x")}, problem.Invalid, []string{"redirectUrl"}},
		{"move under an unknown page", PageInput{ParentPageID: parentRaw(999999), MenuText: ptr("x")}, problem.NotFound, nil},
	}
	for _, tt := range tests {
		before := f.page("en-us", p.PageID)
		mark := f.lastEvent()
		_, err := f.s.SavePage(f.ctx, f.inst, "en-us", p.PageID, tt.in)
		if tt.kind == problem.Invalid {
			wantFields(t, tt.name, err, tt.fields...)
		} else {
			wantKind(t, tt.name, err, tt.kind)
		}
		after := f.page("en-us", p.PageID)
		if jsonText(after) != jsonText(before) {
			t.Errorf("%s: page changed:\n%s\n%s", tt.name, jsonText(before), jsonText(after))
		}
		f.checkEvents(tt.name, mark)
	}
	// The channel may be named in a save, in any case.
	if _, err := f.s.SavePage(f.ctx, f.inst, "en-us", p.PageID, PageInput{Channel: ptr("WebSite")}); err != nil {
		t.Errorf("save naming the page's own channel: %v", err)
	}
	// A new connected copy needs a title.
	_, err = f.s.SavePage(f.ctx, f.inst, "fr-ca", p.PageID, PageInput{MenuText: ptr("x")})
	wantFields(t, "new copy without title", err, "title")
	_, err = f.s.SavePage(f.ctx, f.inst, "en-us", 999999, PageInput{Title: ptr("x")})
	wantKind(t, "save an unknown page", err, problem.NotFound)
}

func TestMovePage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.pages()
	a := f.createPage("en-us", "A", 0)
	b := f.createPage("en-us", "B", a.PageID)
	c := f.createPage("en-us", "C", b.PageID)
	d := f.createPage("en-us", "D", 0)
	if _, err := f.s.SavePage(f.ctx, f.inst, "fr-ca", a.PageID, PageInput{Title: ptr("A")}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.SavePage(f.ctx, f.inst, "fr-ca", b.PageID, PageInput{Title: ptr("Bé")}); err != nil {
		t.Fatal(err)
	}

	// Move B (with its child C) under D.
	frB := f.page("fr-ca", b.PageID).VersionID
	mark := f.lastEvent()
	moved, err := f.s.SavePage(f.ctx, f.inst, "en-us", b.PageID, PageInput{ParentPageID: parentRaw(d.PageID)})
	if err != nil {
		t.Fatal(err)
	}
	if moved.Path != "/d/b" || moved.ParentPageID == nil || *moved.ParentPageID != d.PageID {
		t.Errorf("moved B: path %q parent %v, want /d/b under %d", moved.Path, moved.ParentPageID, d.PageID)
	}
	if got := f.page("en-us", c.PageID).Path; got != "/d/b/c" {
		t.Errorf("C after its parent moved: path %q, want /d/b/c", got)
	}
	// The move applies to the page in every locale.
	if got := f.page("fr-ca", b.PageID); got.ParentPageID == nil || *got.ParentPageID != d.PageID {
		t.Errorf("fr-ca copy of B after the move: parent %v, want %d", got.ParentPageID, d.PageID)
	}
	// Every locale's sitemap changes: each live copy gets a Saved event, the
	// other copies at their current version.
	f.checkEvents("move", mark, pageEv(eventlog.Saved, "fr-ca", b.PageID, frB, t0), pageEv(eventlog.Saved, "en-us", b.PageID, moved.VersionID, t0))
	if got := f.page("fr-ca", b.PageID).VersionID; got != frB {
		t.Errorf("fr-ca copy of B after the move: version %d, want %d (unchanged)", got, frB)
	}

	// To the root.
	root, err := f.s.SavePage(f.ctx, f.inst, "en-us", b.PageID, PageInput{ParentPageID: parentRaw(0)})
	if err != nil {
		t.Fatal(err)
	}
	if root.Path != "/b" || root.ParentPageID != nil {
		t.Errorf("B moved to the root: path %q parent %v", root.Path, root.ParentPageID)
	}
	// Naming the current parent is no move.
	mark = f.lastEvent()
	saved, err := f.s.SavePage(f.ctx, f.inst, "en-us", c.PageID, PageInput{ParentPageID: parentRaw(b.PageID)})
	if err != nil {
		t.Errorf("save naming the current parent: %v", err)
	}
	f.checkEvents("save naming the current parent", mark, pageEv(eventlog.Saved, "en-us", c.PageID, saved.VersionID, t0))
	// A deleted copy is in no sitemap: it gets no event.
	f.pageAction("fr-ca", b.PageID, ActionDelete)
	mark = f.lastEvent()
	moved, err = f.s.SavePage(f.ctx, f.inst, "en-us", b.PageID, PageInput{ParentPageID: parentRaw(d.PageID)})
	if err != nil {
		t.Fatal(err)
	}
	f.checkEvents("move with a deleted copy", mark, pageEv(eventlog.Saved, "en-us", b.PageID, moved.VersionID, t0))
	if _, err := f.s.SavePage(f.ctx, f.inst, "en-us", b.PageID, PageInput{ParentPageID: parentRaw(0)}); err != nil {
		t.Fatal(err)
	}

	// Cycles are refused: under itself, under its child, under its grandchild.
	f.s.SavePage(f.ctx, f.inst, "en-us", b.PageID, PageInput{ParentPageID: parentRaw(a.PageID)})
	tests := []struct {
		name   string
		page   int64
		parent int64
	}{
		{"a page under itself", a.PageID, a.PageID},
		{"a page under its child", a.PageID, b.PageID},
		{"a page under its grandchild", a.PageID, c.PageID},
		{"a page under its child (one level down)", b.PageID, c.PageID},
	}
	for _, tt := range tests {
		before := f.page("en-us", tt.page)
		mark := f.lastEvent()
		_, err := f.s.SavePage(f.ctx, f.inst, "en-us", tt.page, PageInput{ParentPageID: parentRaw(tt.parent)})
		wantFields(t, tt.name, err, "parentPageID")
		if after := f.page("en-us", tt.page); after.Path != before.Path || after.VersionID != before.VersionID {
			t.Errorf("%s: page moved to %q v%d, want %q v%d", tt.name, after.Path, after.VersionID, before.Path, before.VersionID)
		}
		f.checkEvents(tt.name, mark)
	}

	// A move in a save that fails is undone with it.
	before := f.page("en-us", d.PageID)
	mark = f.lastEvent()
	_, err = f.s.SavePage(f.ctx, f.inst, "en-us", d.PageID, PageInput{ParentPageID: parentRaw(a.PageID), Title: ptr(" ")})
	wantFields(t, "move with a blank title", err, "title")
	if after := f.page("en-us", d.PageID); after.Path != before.Path || after.ParentPageID != nil || after.VersionID != before.VersionID {
		t.Errorf("after a refused save with a move: path %q v%d, want %q v%d", after.Path, after.VersionID, before.Path, before.VersionID)
	}
	f.checkEvents("refused save with a move", mark)

	// Not into another channel.
	if _, err := f.s.CreateChannel(f.ctx, f.inst, "mobile"); err != nil {
		t.Fatal(err)
	}
	in := pageInput("M", 0)
	in.Channel = ptr("mobile")
	m, err := f.s.CreatePage(f.ctx, f.inst, "en-us", in)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.s.SavePage(f.ctx, f.inst, "en-us", d.PageID, PageInput{ParentPageID: parentRaw(m.PageID)})
	wantFields(t, "move under a page of another channel", err, "parentPageID")
}

func TestDeletePageWithChildren(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.pages()
	parent := f.createPage("en-us", "Parent", 0)
	child := f.createPage("en-us", "Child", parent.PageID)
	if _, err := f.s.SavePage(f.ctx, f.inst, "fr-ca", parent.PageID, PageInput{Title: ptr("Parent")}); err != nil {
		t.Fatal(err)
	}

	mark := f.lastEvent()
	err := f.s.DeletePage(f.ctx, f.inst, "en-us", parent.PageID)
	wantKind(t, "delete a page with a child", err, problem.Conflict)
	wantDetail(t, "delete a page with a child", err, "child pages")
	if got := f.page("en-us", parent.PageID); got.State != Staging {
		t.Errorf("parent after a refused delete: state %v, want staging", got.State)
	}
	f.checkEvents("refused delete", mark)

	// The child has no copy in fr-ca, so the fr-ca copy of the parent goes.
	if err := f.s.DeletePage(f.ctx, f.inst, "fr-ca", parent.PageID); err != nil {
		t.Errorf("delete the fr-ca copy of a page whose children have no fr-ca copy: %v", err)
	}

	// Once the child is deleted, the parent may go.
	if err := f.s.DeletePage(f.ctx, f.inst, "en-us", child.PageID); err != nil {
		t.Fatal(err)
	}
	mark = f.lastEvent()
	if err := f.s.DeletePage(f.ctx, f.inst, "en-us", parent.PageID); err != nil {
		t.Fatal(err)
	}
	f.checkEvents("delete", mark, pageEv(eventlog.Deleted, "en-us", parent.PageID, 0, t0))
	if got := f.page("en-us", parent.PageID); got.State != Deleted {
		t.Errorf("deleted page: state %v", got.State)
	}
	_, err = f.s.SavePage(f.ctx, f.inst, "en-us", parent.PageID, PageInput{Title: ptr("again")})
	wantKind(t, "save a deleted page", err, problem.Conflict)
}

func zoneIDs(p Page, zone string) []int64 {
	ids := []int64{}
	for _, e := range p.Zones[zone] {
		ids = append(ids, e.ContentID)
	}
	return ids
}

func TestPageZones(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.pages()
	f.articles()
	p := f.createPage("en-us", "Home", 0)

	// A page with no components has every zone of its model, empty.
	if len(p.Zones) != 2 || p.Zones["MainContentZone"] == nil || len(p.Zones["MainContentZone"]) != 0 || len(p.Zones["Sidebar"]) != 0 {
		t.Errorf("new page zones = %v, want MainContentZone and Sidebar, empty", p.Zones)
	}
	raw, _ := json.Marshal(p.Zones)
	if string(raw) != `{"MainContentZone":[],"Sidebar":[]}` {
		t.Errorf("new page zones as JSON = %s, want empty arrays", raw)
	}

	// Add components: the zone is named case-insensitively; each add is a
	// save of the page and of the new component.
	mark := f.lastEvent()
	id1, pos, err := f.s.AddComponent(f.ctx, f.inst, "en-us", p.PageID, "maincontentzone", "teaser", values(t, map[string]any{"heading": "One"}))
	if err != nil {
		t.Fatal(err)
	}
	if pos != 0 {
		t.Errorf("first component at position %d, want 0", pos)
	}
	after := f.page("en-us", p.PageID)
	comp := f.item("en-us", id1)
	ref := fmt.Sprintf("teaser_%d", id1)
	if comp.ReferenceName != ref || comp.Model != "Teaser" || comp.State != Staging {
		t.Errorf("component = %+v, want referenceName %s, model Teaser, staging", comp, ref)
	}
	f.checkEvents("add component", mark,
		itemEv(eventlog.Saved, "en-us", ref, id1, comp.VersionID, t0),
		pageEv(eventlog.Saved, "en-us", p.PageID, after.VersionID, t0))
	id2, pos, err := f.s.AddComponent(f.ctx, f.inst, "en-us", p.PageID, "MainContentZone", "Teaser", values(t, map[string]any{"heading": "Two"}))
	if err != nil || pos != 1 {
		t.Fatalf("second component: position %d, %v; want 1", pos, err)
	}
	id3 := f.addComponent("en-us", p.PageID, "Sidebar", "Three")
	after = f.page("en-us", p.PageID)
	if got := zoneIDs(after, "MainContentZone"); !slices.Equal(got, []int64{id1, id2}) {
		t.Errorf("MainContentZone = %v, want %v", got, []int64{id1, id2})
	}
	if got := after.Zones["Sidebar"]; len(got) != 1 || got[0] != (ZoneEntry{Module: "Teaser", ContentID: id3}) {
		t.Errorf("Sidebar = %v, want one Teaser %d", got, id3)
	}

	// Refused adds write nothing: no component item, no event.
	refused := []struct {
		name   string
		zone   string
		module string
		fields map[string]any
		kind   problem.Kind
		want   []string
	}{
		{"unknown zone", "Footer", "Teaser", map[string]any{"heading": "x"}, problem.NotFound, nil},
		{"content model as module", "Sidebar", "Article", map[string]any{"title": "x"}, problem.Invalid, []string{"module"}},
		{"unknown module", "Sidebar", "Nope", nil, problem.NotFound, nil},
		{"missing required field", "Sidebar", "Teaser", map[string]any{}, problem.Invalid, []string{"fields.heading"}},
		{"bad field value", "Sidebar", "Teaser", map[string]any{"heading": 3}, problem.Invalid, []string{"fields.heading"}},
	}
	for _, tt := range refused {
		mark := f.lastEvent()
		items := f.count(`SELECT count(*) FROM items`)
		before := f.page("en-us", p.PageID)
		_, _, err := f.s.AddComponent(f.ctx, f.inst, "en-us", p.PageID, tt.zone, tt.module, values(t, tt.fields))
		if tt.kind == problem.Invalid {
			wantFields(t, tt.name, err, tt.want...)
		} else {
			wantKind(t, tt.name, err, tt.kind)
		}
		if n := f.count(`SELECT count(*) FROM items`); n != items {
			t.Errorf("%s: %d items, want %d", tt.name, n, items)
		}
		if got := f.page("en-us", p.PageID); jsonText(got) != jsonText(before) {
			t.Errorf("%s: page changed", tt.name)
		}
		f.checkEvents(tt.name, mark)
	}

	// Reorder.
	mark = f.lastEvent()
	if err := f.s.ReorderZone(f.ctx, f.inst, "en-us", p.PageID, "MAINCONTENTZONE", []int64{id2, id1}); err != nil {
		t.Fatal(err)
	}
	after = f.page("en-us", p.PageID)
	if got := zoneIDs(after, "MainContentZone"); !slices.Equal(got, []int64{id2, id1}) {
		t.Errorf("after reorder: %v, want %v", got, []int64{id2, id1})
	}
	f.checkEvents("reorder zone", mark, pageEv(eventlog.Saved, "en-us", p.PageID, after.VersionID, t0))
	badOrders := []struct {
		name string
		ids  []int64
	}{
		{"one missing", []int64{id2}},
		{"one repeated", []int64{id2, id2}},
		{"one from another zone", []int64{id2, id3}},
		{"one extra", []int64{id2, id1, id3}},
	}
	for _, tt := range badOrders {
		mark := f.lastEvent()
		err := f.s.ReorderZone(f.ctx, f.inst, "en-us", p.PageID, "MainContentZone", tt.ids)
		wantFields(t, "reorder with "+tt.name, err, "contentIDs")
		if got := zoneIDs(f.page("en-us", p.PageID), "MainContentZone"); !slices.Equal(got, []int64{id2, id1}) {
			t.Errorf("reorder with %s: zone %v, want it unchanged", tt.name, got)
		}
		f.checkEvents("reorder with "+tt.name, mark)
	}
	wantKind(t, "reorder an unknown zone", f.s.ReorderZone(f.ctx, f.inst, "en-us", p.PageID, "Footer", nil), problem.NotFound)

	// Remove: a save of the page and a delete of the component's copy.
	mark = f.lastEvent()
	if err := f.s.RemoveComponent(f.ctx, f.inst, "en-us", p.PageID, "maincontentzone", id2); err != nil {
		t.Fatal(err)
	}
	after = f.page("en-us", p.PageID)
	if got := zoneIDs(after, "MainContentZone"); !slices.Equal(got, []int64{id1}) {
		t.Errorf("after removing %d: %v, want %v", id2, got, []int64{id1})
	}
	removed := f.item("en-us", id2)
	if removed.State != Deleted {
		t.Errorf("removed component: state %v, want deleted", removed.State)
	}
	f.checkEvents("remove component", mark,
		pageEv(eventlog.Saved, "en-us", p.PageID, after.VersionID, t0),
		itemEv(eventlog.Deleted, "en-us", fmt.Sprintf("teaser_%d", id2), id2, removed.VersionID, t0))
	mark = f.lastEvent()
	err = f.s.RemoveComponent(f.ctx, f.inst, "en-us", p.PageID, "MainContentZone", id2)
	wantKind(t, "remove a component not in the zone", err, problem.NotFound)
	err = f.s.RemoveComponent(f.ctx, f.inst, "en-us", p.PageID, "MainContentZone", id3)
	wantKind(t, "remove a component of another zone", err, problem.NotFound)
	f.checkEvents("refused removes", mark)

	// Zones are per locale: a new fr-ca copy starts with empty zones.
	fr, err := f.s.SavePage(f.ctx, f.inst, "fr-ca", p.PageID, PageInput{Title: ptr("Accueil")})
	if err != nil {
		t.Fatal(err)
	}
	if len(fr.Zones["MainContentZone"]) != 0 || len(fr.Zones["Sidebar"]) != 0 || len(fr.Zones) != 2 {
		t.Errorf("new fr-ca copy zones = %v, want the model's zones, empty", fr.Zones)
	}
	// A deleted page copy takes no component.
	q := f.createPage("en-us", "Gone", 0)
	f.pageAction("en-us", q.PageID, ActionDelete)
	_, _, err = f.s.AddComponent(f.ctx, f.inst, "en-us", q.PageID, "Sidebar", "Teaser", values(t, map[string]any{"heading": "x"}))
	wantKind(t, "add a component to a deleted page", err, problem.Conflict)
}

func TestPublishPagePublishesComponents(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.pages()
	p := f.createPage("en-us", "Home", 0)
	id1 := f.addComponent("en-us", p.PageID, "MainContentZone", "One")
	id2 := f.addComponent("en-us", p.PageID, "Sidebar", "Two")
	id3 := f.addComponent("en-us", p.PageID, "Sidebar", "Three")
	// id2 is published already with no changes; id3 is awaiting approval.
	f.itemAction("en-us", id2, ActionPublish)
	f.itemAction("en-us", id3, ActionRequestApproval)

	page := f.page("en-us", p.PageID)
	mark := f.lastEvent()
	f.clock = t0.Add(time.Minute)
	st := f.pageAction("en-us", p.PageID, ActionPublish)
	if st.State != Published || st.VersionID != page.VersionID {
		t.Errorf("publish page: status %+v, want published v%d", st, page.VersionID)
	}
	var want []ev
	for _, id := range []int64{id1, id2, id3} {
		it := f.item("en-us", id)
		if it.State != Published || it.Published == nil || it.Published.VersionID != it.VersionID {
			t.Errorf("component %d after publishing its page: state %v published %+v", id, it.State, it.Published)
		}
		if id != id2 {
			want = append(want, itemEv(eventlog.Published, "en-us", fmt.Sprintf("teaser_%d", id), id, it.VersionID, f.clock))
		}
	}
	want = append(want, pageEv(eventlog.Published, "en-us", p.PageID, page.VersionID, f.clock))
	if got := simplify(f.eventsAfter(mark)); !slices.Equal(sortEvs(got), sortEvs(want)) {
		t.Errorf("publish page events:\n got %v\nwant %v", got, want)
	}

	// A component edited in place on the published page (the Studio saves
	// the component, not the page) is published with the page, which
	// stays at its version; with nothing changed, publishing is refused.
	f.clock = t0.Add(90 * time.Second)
	edited := f.saveItem("en-us", id1, map[string]any{"heading": "One, edited"})
	mark = f.lastEvent()
	st = f.pageAction("en-us", p.PageID, ActionPublish)
	if st.State != Published || st.VersionID != page.VersionID {
		t.Errorf("publish page with an edited component: status %+v, want published v%d", st, page.VersionID)
	}
	if it := f.item("en-us", id1); it.State != Published || it.Published == nil || it.Published.VersionID != edited.VersionID {
		t.Errorf("edited component after publishing its page: state %v published %+v, want v%d", it.State, it.Published, edited.VersionID)
	}
	f.checkEvents("publish a page with an edited component", mark,
		itemEv(eventlog.Published, "en-us", fmt.Sprintf("teaser_%d", id1), id1, edited.VersionID, f.clock),
		pageEv(eventlog.Published, "en-us", p.PageID, page.VersionID, f.clock))
	_, err := f.s.PageAction(f.ctx, f.inst, "en-us", p.PageID, ActionPublish)
	wantKind(t, "publish a page and components with no changes", err, problem.Conflict)

	// A removed (deleted) component is not published again, and a page
	// with empty zones publishes alone.
	f.clock = t0.Add(2 * time.Minute)
	if err := f.s.RemoveComponent(f.ctx, f.inst, "en-us", p.PageID, "Sidebar", id2); err != nil {
		t.Fatal(err)
	}
	e := f.createPage("en-us", "Empty", 0)
	mark = f.lastEvent()
	f.pageAction("en-us", e.PageID, ActionPublish)
	f.checkEvents("publish an empty page", mark, pageEv(eventlog.Published, "en-us", e.PageID, e.VersionID, f.clock))
	if got := f.item("en-us", id2).State; got != Deleted {
		t.Errorf("removed component state %v, want deleted", got)
	}
}

func TestPageLookup(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.pages()
	other := f.instance("other")
	p := f.createPage("en-us", "Home", 0)
	tests := []struct {
		name   string
		inst   Instance
		locale string
		id     int64
		detail string
	}{
		{"no copy in the locale", f.inst, "fr-ca", p.PageID, "no copy in locale"},
		{"unknown page", f.inst, "en-us", p.PageID + 100, "not found"},
		{"page of another instance", other, "en-us", p.PageID, "not found"},
	}
	for _, tt := range tests {
		_, err := f.s.Page(f.ctx, tt.inst, tt.locale, tt.id)
		wantKind(t, tt.name, err, problem.NotFound)
		wantDetail(t, tt.name, err, tt.detail)
	}
}

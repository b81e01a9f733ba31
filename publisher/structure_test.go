package publisher

import (
	"slices"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/store"
)

// Changes to an instance's structure (containers, locales, channels, the
// page tree) reach the store through their events, without a republish.

// keysUnder lists the keys of the store under prefix.
func (e *env) keysUnder(prefix string) []string {
	e.t.Helper()
	var keys []string
	e.must(e.store.List(e.ctx, prefix, func(i store.Info) error { keys = append(keys, i.Key); return nil }))
	slices.Sort(keys)
	return keys
}

// has reports whether the store holds req's object.
func (e *env) has(req fetch.Request) bool {
	e.t.Helper()
	_, err := e.store.Get(e.ctx, req.Key())
	if err != nil && !problem.Is(err, problem.NotFound) {
		e.t.Fatal(err)
	}
	return err == nil
}

// variant is a request the publisher does not maintain by default, as an
// origin writes it back after a miss.
func (e *env) variant(p *Publisher, path, query string) fetch.Request {
	e.t.Helper()
	req := mustParse("/"+e.guid+"/fetch"+path, query)
	_, err := p.writeBack(e.ctx, e.guid, []fetch.Request{req})
	e.must(err)
	if !e.has(req) {
		e.t.Fatalf("%s?%s was not written back", path, query)
	}
	return req
}

func (e *env) count(query string, args ...any) int {
	e.t.Helper()
	var n int
	e.must(e.db.GetContext(e.ctx, &n, query, args...))
	return n
}

// TestContainerDeleteWithdrawsLists: deleting a container removes its list
// pages in every locale and every object that embeds it (here a sorted
// variant written back by the origin), and the publisher forgets its
// memberships. Drafts' list pages are only written back by the origin
// (the edge missed them); Archive's were rendered by a republish, which
// records their memberships.
func TestContainerDeleteWithdrawsLists(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	e.buildSite()
	_, err := e.cs.CreateContainer(e.ctx, e.inst, "Archive", "Tag")
	e.must(err)
	p := e.publisher(Config{})
	e.must(p.Drain(e.ctx))
	e.must(p.Republish(e.ctx, e.guid, nil))
	_, err = e.cs.CreateContainer(e.ctx, e.inst, "Drafts", "Tag")
	e.must(err)
	var reqs []fetch.Request
	for _, l := range []string{"en-us", "fr-CA"} {
		reqs = append(reqs, e.variant(p, "/"+l+"/list/drafts", "take=10&skip=0"))
		for _, ref := range []string{"drafts", "archive"} {
			reqs = append(reqs, listRequest(e.guid, l, ref, 0), e.variant(p, "/"+l+"/list/"+ref, "sort=fields.title&direction=desc"))
		}
	}
	for _, r := range reqs {
		if !e.has(r) {
			t.Fatalf("%s not in the store", requestString(r))
		}
	}
	e.check(t)
	if n := e.count(`SELECT count(*) FROM list_members WHERE guid = $1 AND reference_name = 'archive'`, e.guid); n != 2 {
		t.Fatalf("%d memberships of archive, want one per locale", n)
	}

	for _, ref := range []string{"Drafts", "Archive"} {
		e.must(e.cs.DeleteContainer(e.ctx, e.inst, ref))
	}
	e.must(p.Drain(e.ctx))
	for _, r := range reqs {
		if e.has(r) {
			t.Errorf("%s still in the store after its container was deleted", requestString(r))
		}
	}
	if n := e.count(`SELECT count(*) FROM objects WHERE guid = $1 AND request ~ '/list/(drafts|archive)[?]' AND etag IS NOT NULL`, e.guid); n != 0 {
		t.Errorf("objects table lists %d live objects of the deleted containers", n)
	}
	if n := e.count(`SELECT count(*) FROM list_members WHERE guid = $1 AND reference_name IN ('drafts', 'archive')`, e.guid); n != 0 {
		t.Errorf("%d memberships of the deleted containers left", n)
	}
	if n := e.unconfirmed(); n != 0 {
		t.Errorf("%d events unconfirmed", n)
	}
	e.check(t)
}

// TestLocaleCreateAndDelete: a new locale gets its sitemaps and list pages
// at once; a deleted one leaves nothing in the store, not even the variants
// the origin wrote back.
func TestLocaleCreateAndDelete(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	e.buildSite()
	p := e.publisher(Config{})
	e.must(p.Drain(e.ctx))

	_, err := e.cs.CreateLocale(e.ctx, e.inst, content.Locale{Code: "de-DE", Name: "Deutsch"})
	e.must(err)
	e.must(p.Drain(e.ctx))
	for _, r := range []fetch.Request{
		sitemapRequest(e.guid, "de-DE", "website", false), sitemapRequest(e.guid, "de-DE", "website", true),
		listRequest(e.guid, "de-DE", "posts", 0), listRequest(e.guid, "de-DE", "tags", 0),
	} {
		if !e.has(r) {
			t.Errorf("the new locale lacks %s", requestString(r))
		}
	}
	e.check(t) // every maintained object of de-DE is there, and right

	variant := e.variant(p, "/de-DE/list/posts", "sort=fields.title")
	prefix := e.guid + "/fetch/de-de/"
	if len(e.keysUnder(prefix)) < 5 {
		t.Fatalf("store holds %v under %s", e.keysUnder(prefix), prefix)
	}
	e.must(e.cs.DeleteLocale(e.ctx, e.inst, "de-DE"))
	e.must(p.Drain(e.ctx))
	if keys := e.keysUnder(prefix); len(keys) != 0 {
		t.Errorf("store still holds %v after the locale was deleted", keys)
	}
	if e.has(variant) {
		t.Errorf("written-back variant of the deleted locale left")
	}
	if n := e.count(`SELECT count(*) FROM objects WHERE guid = $1 AND locale = 'de-de' AND etag IS NOT NULL`, e.guid); n != 0 {
		t.Errorf("objects table lists %d live objects of the deleted locale", n)
	}
	if n := e.count(`SELECT count(*) FROM list_members WHERE guid = $1 AND locale = 'de-de'`, e.guid); n != 0 {
		t.Errorf("%d memberships of the deleted locale left", n)
	}
	e.check(t)

	// Added again, it comes back whole.
	_, err = e.cs.CreateLocale(e.ctx, e.inst, content.Locale{Code: "de-de", Name: "Deutsch"})
	e.must(err)
	e.must(p.Drain(e.ctx))
	if !e.has(listRequest(e.guid, "de-de", "posts", 0)) {
		t.Errorf("the locale added again lacks its list pages")
	}
	e.check(t)
}

// TestChannelCreate: a new channel's sitemaps exist in every locale as soon
// as it is created, and its first page shows in them.
func TestChannelCreate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	e.buildSite()
	p := e.publisher(Config{})
	e.must(p.Drain(e.ctx))

	_, err := e.cs.CreateChannel(e.ctx, e.inst, "Footer")
	e.must(err)
	e.must(p.Drain(e.ctx))
	for _, l := range []string{"en-us", "fr-CA"} {
		for _, nested := range []bool{false, true} {
			if r := sitemapRequest(e.guid, l, "footer", nested); !e.has(r) {
				t.Errorf("the new channel lacks %s", requestString(r))
			}
		}
	}
	e.check(t)

	title, model, ch := "Imprint", "Main", "Footer"
	pg, err := e.cs.CreatePage(e.ctx, e.inst, "en-us", content.PageInput{Title: &title, PageModel: &model, Channel: &ch})
	e.must(err)
	_, err = e.cs.PageAction(e.ctx, e.inst, "en-us", pg.PageID, content.ActionPublish)
	e.must(err)
	e.must(p.Drain(e.ctx))
	o, err := e.store.Get(e.ctx, sitemapRequest(e.guid, "en-us", "footer", false).Key())
	e.must(err)
	if !strings.Contains(string(o.Body), `"/imprint"`) {
		t.Errorf("footer sitemap after its first page: %s", clip(o.Body))
	}
	e.check(t)
}

// TestPageMoveEveryLocale: a page moved in one locale moves in every
// locale's sitemaps and page paths (the page, and below it its children).
func TestPageMoveEveryLocale(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	s := e.buildSite()
	child := e.newPage(&s.about, "Team", nil)
	for _, l := range []string{"en-us", "fr-CA"} {
		_, err := e.cs.PageAction(e.ctx, e.inst, l, child, content.ActionPublish)
		e.must(err)
	}
	p := e.publisher(Config{})
	e.must(p.Drain(e.ctx))
	frFlat := sitemapRequest(e.guid, "fr-CA", "website", false)
	before, err := e.store.Get(e.ctx, frFlat.Key())
	e.must(err)
	if !strings.Contains(string(before.Body), `"/home-fr/about-fr/team-fr"`) {
		t.Fatalf("fr-CA sitemap before the move: %s", clip(before.Body))
	}

	// About (with Team below it) moves to the root, saved in en-us only.
	_, err = e.cs.SavePage(e.ctx, e.inst, "en-us", s.about, content.PageInput{ParentPageID: raw(nil)})
	e.must(err)
	e.must(p.Drain(e.ctx))
	after, err := e.store.Get(e.ctx, frFlat.Key())
	e.must(err)
	for _, path := range []string{`"/about-fr"`, `"/about-fr/team-fr"`} {
		if !strings.Contains(string(after.Body), path) {
			t.Errorf("fr-CA sitemap after the move lacks %s: %s", path, clip(after.Body))
		}
	}
	old, err := pagePathRequest(e.guid, "fr-CA", "website", "/home-fr/about-fr/team-fr")
	e.must(err)
	if e.has(old) {
		t.Errorf("fr-CA page path of Team before the move still in the store")
	}
	moved, err := pagePathRequest(e.guid, "fr-CA", "website", "/about-fr/team-fr")
	e.must(err)
	if !e.has(moved) {
		t.Errorf("fr-CA page path of Team after the move not in the store")
	}
	e.check(t)
}

package render

import (
	"crypto/sha256"

	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/fetch"
)

// The differential test renders, over an instance seeded at random with a
// fixed seed, every item, list window, page, path and sitemap in every
// locale and both flavours at depths 0 to 5, and compares each answer (its
// status, the length and SHA-256 of its bytes, and its tags) with
// testdata/differential.golden.txt. The golden file was written by the
// renderer as it was before its reads were rewritten to be index-driven,
// so that the rewrite is checked to answer byte for byte the same. Bodies
// are kept as digests: at depth 5 with expandAllContentLinks one answer
// holds hundreds of items, and the readable shapes are in the other golden
// files.

// seedLocales are the locales of the seeded instance.
var seedLocales = []content.Locale{{Code: en, Name: "English"}, {Code: fr, Name: "Français"}, {Code: "de-de", Name: "Deutsch"}}

// seedCounts are how many authors, tags and articles the seeded instance has.
const (
	seedAuthors  = 6
	seedTags     = 8
	seedArticles = 30
)

// newSeededFixture is a fixture whose instance holds content made at random
// from seed (see seed).
func newSeededFixture(t testing.TB, seed uint64) *fixture {
	t.Helper()
	return newFixtureOf(t, seedLocales, func(f *fixture) { f.seed(rand.New(rand.NewPCG(seed, seed^0x5eed))) })
}

// seed fills the instance: authors, tags and articles (with item links,
// selections, a whole-list link, links between articles and so cycles,
// and a shared field), each with copies in a random subset of the locales
// in random workflow states (never published, published, published then
// edited, unpublished, deleted, awaiting approval); the articles reordered
// in part; pages in two channels with components linking articles, a
// folder, a dynamic page over the articles and a link page, published or
// not per locale.
func (f *fixture) seed(rng *rand.Rand) {
	f.model("Author", "content",
		content.Field{Name: "name", Type: content.TypeText, Required: true},
		content.Field{Name: "bio", Type: content.TypeHTML})
	_, err := f.s.CreateContainer(f.ctx, f.inst, "authors", "Author")
	f.check("CreateContainer authors", err)
	f.model("Tag", "content", content.Field{Name: "label", Type: content.TypeText, Required: true})
	_, err = f.s.CreateContainer(f.ctx, f.inst, "Tags", "Tag")
	f.check("CreateContainer Tags", err)
	f.model("Article", "content",
		content.Field{Name: "title", Type: content.TypeText, Required: true},
		content.Field{Name: "body", Type: content.TypeHTML},
		content.Field{Name: "views", Type: content.TypeNumber},
		content.Field{Name: "score", Type: content.TypeDecimal},
		content.Field{Name: "live", Type: content.TypeBoolean},
		content.Field{Name: "date", Type: content.TypeDate},
		content.Field{Name: "slug", Type: content.TypeText, Shared: true},
		content.Field{Name: "author", Type: content.TypeItem, Container: "authors"},
		content.Field{Name: "tags", Type: content.TypeList, Container: "Tags"},
		content.Field{Name: "allTags", Type: content.TypeList, Container: "Tags"})
	_, err = f.s.CreateContainer(f.ctx, f.inst, "articles", "Article")
	f.check("CreateContainer articles", err)
	// Links from articles to articles need the model edited after the
	// container exists (see build).
	_, err = f.db.ExecContext(f.ctx, `UPDATE models SET fields = fields ||
		'[{"name": "related", "type": "list", "container": "articles"}, {"name": "next", "type": "item", "container": "articles"}]'::jsonb
		WHERE instance_id = $1 AND name = 'Article'`, f.inst.ID)
	f.check("add article links to Article", err)
	f.model("Teaser", "component", content.Field{Name: "article", Type: content.TypeItem, Container: "articles"})
	f.model("Shelf", "component",
		content.Field{Name: "heading", Type: content.TypeText},
		content.Field{Name: "articles", Type: content.TypeList, Container: "articles"})
	f.model("Note", "component", content.Field{Name: "html", Type: content.TypeHTML})
	_, err = f.s.CreatePageModel(f.ctx, f.inst, "Two", []string{"Main", "Side"})
	f.check("CreatePageModel", err)
	_, err = f.s.CreatePageModel(f.ctx, f.inst, "One", []string{"Main"})
	f.check("CreatePageModel", err)

	pick := func(prefix string, n int) string { return fmt.Sprintf("%s%d", prefix, rng.IntN(n)) }
	// sample is a selection of k distinct items among prefix0..prefix<n-1>.
	sample := func(prefix string, n, k int) map[string]any {
		var ids []int64
		for _, j := range rng.Perm(n)[:k] {
			ids = append(ids, f.item[fmt.Sprintf("%s%d", prefix, j)])
		}
		return map[string]any{"contentIDs": ids}
	}
	// copies gives each item or page a copy in en-us and in a random
	// subset of the other locales.
	copies := func() []string {
		ls := []string{en}
		for _, l := range seedLocales[1:] {
			if rng.IntN(3) > 0 {
				ls = append(ls, l.Code)
			}
		}
		return ls
	}
	type made struct {
		name    string
		locales []string
	}
	var items []made
	create := func(name, ref string, locales []string, kv func(locale string) []any) {
		f.newItem(name, locales[0], ref, kv(locales[0])...)
		for _, l := range locales[1:] {
			f.save(name, l, kv(l)...)
		}
		items = append(items, made{name, locales})
	}
	for i := range seedAuthors {
		create(fmt.Sprintf("author%d", i), "authors", copies(), func(l string) []any {
			return []any{"name", fmt.Sprintf("Author %d (%s)", i, l), "bio", fmt.Sprintf("<p>Bio %d &amp; more</p>", i)}
		})
	}
	for i := range seedTags {
		create(fmt.Sprintf("tag%d", i), "Tags", copies(), func(l string) []any {
			return []any{"label", fmt.Sprintf("Tag %d %s", i, l)}
		})
	}
	for i := range seedArticles {
		create(fmt.Sprintf("article%d", i), "articles", copies(), func(l string) []any {
			kv := []any{"title", fmt.Sprintf("Article %d %s", i%(seedArticles-3), l), // some titles collide
				"body", fmt.Sprintf("<p>Body of %d in %s: \"quoted\" &lt;text&gt;\n</p>", i, l),
				"views", rng.IntN(1000), "score", float64(rng.IntN(100)) / 4, "live", rng.IntN(2) == 0,
				"date", fmt.Sprintf("2030-0%d-1%dT0%d:00:00+02:00", 1+rng.IntN(9), rng.IntN(10), rng.IntN(10)),
				"slug", fmt.Sprintf("a-%d", i)}
			if rng.IntN(4) > 0 {
				kv = append(kv, "author", map[string]any{"contentID": f.item[pick("author", seedAuthors)]})
			}
			if n := rng.IntN(4); n > 0 {
				kv = append(kv, "tags", sample("tag", seedTags, n))
			}
			if rng.IntN(3) == 0 {
				kv = append(kv, "allTags", map[string]any{})
			}
			return kv
		})
	}
	// Links between articles, made once every article exists: cycles,
	// links to items without a copy in the locale, to drafts and to
	// deleted items.
	for i := range seedArticles {
		name := fmt.Sprintf("article%d", i)
		for _, l := range items[seedAuthors+seedTags+i].locales {
			var kv []any
			if rng.IntN(3) > 0 {
				kv = append(kv, "next", map[string]any{"contentID": f.item[pick("article", seedArticles)]})
			}
			if n := rng.IntN(3); n > 0 {
				kv = append(kv, "related", sample("article", seedArticles, n))
			}
			if kv != nil {
				f.save(name, l, kv...)
			}
		}
	}
	// Workflow states, per copy.
	for _, it := range items {
		for _, l := range it.locales {
			switch rng.IntN(8) {
			case 0: // never published
			case 1, 2, 3:
				f.act(it.name, l, content.ActionPublish)
			case 4: // published, then edited
				f.act(it.name, l, content.ActionPublish)
				f.save(it.name, l, editOf(it.name)...)
			case 5:
				f.act(it.name, l, content.ActionPublish)
				f.act(it.name, l, content.ActionUnpublish)
			case 6:
				if rng.IntN(2) == 0 {
					f.act(it.name, l, content.ActionPublish)
				}
				f.act(it.name, l, content.ActionDelete)
			case 7:
				f.act(it.name, l, content.ActionRequestApproval)
			}
		}
	}
	var order []int64
	for _, j := range rng.Perm(seedArticles)[:seedArticles/3] {
		order = append(order, f.item[fmt.Sprintf("article%d", j)])
	}
	f.check("ReorderContainer", f.s.ReorderContainer(f.ctx, f.inst, "articles", order))

	f.seedPages(rng, copies)
}

// editOf is a save that changes an item of the seeded instance's kind.
func editOf(name string) []any {
	switch {
	case strings.HasPrefix(name, "author"):
		return []any{"bio", "<p>edited</p>"}
	case strings.HasPrefix(name, "tag"):
		return []any{"label", "edited " + name}
	}
	return []any{"title", "Edited " + name, "views", 5}
}

// seedPages adds the pages of the seeded instance.
func (f *fixture) seedPages(rng *rand.Rand, copies func() []string) {
	_, err := f.s.CreateChannel(f.ctx, f.inst, "footer")
	f.check("CreateChannel", err)
	article := func() map[string]any {
		return map[string]any{"contentID": f.item[fmt.Sprintf("article%d", rng.IntN(seedArticles))]}
	}
	type spec struct {
		name, model, parent, channel string
		in                           content.PageInput
	}
	specs := []spec{
		{name: "home", model: "Two"},
		{name: "about", model: "One", in: content.PageInput{MenuText: ptr("About"), Visible: &content.Visible{Menu: true, Sitemap: false}}},
		{name: "team", model: "One", parent: "about"},
		{name: "alumni", model: "Two", parent: "team"},
		{name: "news", model: "One", in: content.PageInput{Folder: ptr(true)}},
		{name: "story", model: "Two", parent: "news", in: content.PageInput{Dynamic: &content.Dynamic{ReferenceName: "articles", PathField: "title"}}},
		{name: "comments", model: "One", parent: "story"},
		{name: "elsewhere", model: "One", in: content.PageInput{RedirectURL: ptr("https://example.com/elsewhere")}},
		{name: "legal", model: "One", channel: "footer"},
		{name: "privacy", model: "Two", channel: "footer"},
	}
	for _, sp := range specs {
		locales := copies()
		if sp.parent != "" || sp.name == "about" || sp.name == "news" {
			locales = []string{en, fr, "de-de"} // a child needs its parent's copy
		}
		for i, l := range locales {
			in := sp.in
			in.Title = ptr(fmt.Sprintf("%s %s", strings.ToUpper(sp.name[:1])+sp.name[1:], l))
			if i == 0 {
				in.PageModel = ptr(sp.model)
				if sp.channel != "" {
					in.Channel = ptr(sp.channel)
				}
				if sp.parent != "" {
					in.ParentPageID = f.parent(sp.parent)
				}
				f.newPage(sp.name, l, in)
			} else {
				in.Folder, in.Dynamic = nil, nil
				_, err := f.s.SavePage(f.ctx, f.inst, l, f.page[sp.name], in)
				f.check("SavePage "+sp.name+" "+l, err)
			}
			zones := []string{"Main"}
			if sp.model == "Two" {
				zones = append(zones, "Side")
			}
			for k := range rng.IntN(4) {
				zone := zones[rng.IntN(len(zones))]
				name := fmt.Sprintf("%s-%s-%d", sp.name, l, k)
				switch rng.IntN(3) {
				case 0:
					f.component(name, l, sp.name, zone, "Teaser", "article", article())
				case 1:
					sel := map[string]any{}
					if rng.IntN(2) == 0 {
						sel = map[string]any{"contentIDs": []int64{f.item[fmt.Sprintf("article%d", rng.IntN(seedArticles))],
							f.item[fmt.Sprintf("article%d", rng.IntN(seedArticles))]}}
						if ids := sel["contentIDs"].([]int64); ids[0] == ids[1] {
							sel = map[string]any{"contentIDs": ids[:1]}
						}
					}
					f.component(name, l, sp.name, zone, "Shelf", "heading", "Shelf "+name, "articles", sel)
				case 2:
					f.component(name, l, sp.name, zone, "Note", "html", "<p>"+name+"</p>")
				}
				if rng.IntN(4) > 0 {
					f.act(name, l, content.ActionPublish)
				}
			}
			if sp.parent != "" || rng.IntN(5) > 0 {
				f.publishPage(sp.name, l)
			}
		}
	}
}

// differentialURLs lists the requests of the differential test, with the
// ids of the seeded instance in them.
func differentialURLs(f *fixture) []string {
	var maxItem, maxPage int64
	for _, id := range f.item {
		maxItem = max(maxItem, id)
	}
	for _, id := range f.page {
		maxPage = max(maxPage, id)
	}
	var urls []string
	for _, fl := range []string{"fetch", "preview"} {
		for _, l := range seedLocales {
			base := "/" + fl + "/" + l.Code
			for d := 0; d <= 5; d++ {
				for _, all := range []bool{false, true} {
					q := fmt.Sprintf("?contentLinkDepth=%d&expandAllContentLinks=%t", d, all)
					for id := int64(1); id <= maxItem+1; id++ {
						urls = append(urls, fmt.Sprintf("%s/item/%d%s", base, id, q))
					}
					for id := int64(1); id <= maxPage+1; id++ {
						urls = append(urls, fmt.Sprintf("%s/page/%d%s", base, id, q))
					}
					for _, ref := range []string{"authors", "tags", "Articles", "nothing"} {
						for _, w := range []string{"", "&take=4&skip=3", "&take=1&skip=0", "&skip=100"} {
							urls = append(urls, base+"/list/"+ref+q+w)
						}
					}
					for _, path := range append(sitemapPaths(f, base), "/about-"+l.Code+"/team-"+l.Code, "/nowhere") {
						urls = append(urls, base+"/page/website"+q+"&path="+path)
					}
				}
			}
			for _, d := range []int{0, 1, 2} {
				q := fmt.Sprintf("&contentLinkDepth=%d", d)
				urls = append(urls,
					base+"/list/articles?sort=fields.views&direction=desc"+q,
					base+"/list/articles?sort=contentID&direction=asc&take=3&skip=2"+q,
					base+"/list/articles?filter=fields.live[eq]true&take=5"+q,
					base+"/list/articles?filter=fields.views[gt]300&fields=title,author,tags"+q+"&expandAllContentLinks=true",
					base+"/list/tags?sort=fields.label"+q)
			}
			for _, ch := range []string{"website", "footer", "nothing"} {
				urls = append(urls, base+"/sitemap/flat/"+ch, base+"/sitemap/nested/"+ch)
			}
		}
	}
	return urls
}

// sitemapPaths returns the paths of the nodes of the website sitemap at
// base (a flavour and locale).
func sitemapPaths(f *fixture, base string) []string {
	f.t.Helper()
	res, err := f.r.Render(f.ctx, f.site, f.requestOf(base+"/sitemap/flat/website"))
	f.check("sitemap of "+base, err)
	var nodes map[string]struct {
		Path string `json:"path"`
	}
	f.check("decode sitemap of "+base, json.Unmarshal(res.Body, &nodes))
	var paths []string
	for p := range nodes {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return paths
}

// differentialLine describes the answer to url in one line.
func differentialLine(url string, res Result, err error) string {
	if err != nil {
		return fmt.Sprintf("%s\terror\t%v", url, err)
	}
	sum := sha256.Sum256(res.Body)
	return fmt.Sprintf("%s\t%d\t%s\t%s", url, len(res.Body), fmt.Sprintf("%x", sum[:12]), strings.Join(res.Tags, " "))
}

func TestDifferential(t *testing.T) {
	t.Parallel()
	f := newSeededFixture(t, 18)
	urls, reqs := differentialRequests(f)
	// The renders are independent reads, as the origin's are: they run
	// side by side, each line kept at its request's place.
	lines := make([]string, len(urls))
	var ok atomic.Int64
	next := make(chan int)
	var wg sync.WaitGroup
	for range differentialWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				res, err := f.r.Render(f.ctx, f.site, reqs[i])
				if err == nil {
					ok.Add(1)
				}
				lines[i] = differentialLine(urls[i], res, err)
			}
		}()
	}
	for i := range urls {
		next <- i
	}
	close(next)
	wg.Wait()
	out := strings.Join(lines, "\n") + "\n"
	t.Logf("%d requests, %d answered", len(lines), ok.Load())
	golden(t, "differential.golden.txt", []byte(out))
}

// differentialWorkers is how many renders of the differential test run at
// once: enough to keep the cores busy while others wait for Postgres.
const differentialWorkers = 8

// differentialRequests returns the URLs of differentialURLs and their
// requests.
func differentialRequests(f *fixture) ([]string, []fetch.Request) {
	urls := differentialURLs(f)
	reqs := make([]fetch.Request, len(urls))
	for i, u := range urls {
		reqs[i] = f.requestOf(u)
	}
	return urls, reqs
}

// requestOf parses a Fetch API URL path of the instance with the ids in it.
func (f *fixture) requestOf(url string) fetch.Request {
	f.t.Helper()
	path, query, _ := strings.Cut(url, "?")
	req, err := fetch.Parse(fetch.Input{Path: "/acme" + path, RawQuery: query})
	f.check("fetch.Parse "+url, err)
	return req
}

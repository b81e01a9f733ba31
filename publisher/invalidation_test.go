package publisher

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/problem"
)

var (
	seedFlag  = flag.Uint64("seed", 0, "seed of the randomised invalidation tests (0: from the clock)")
	editsFlag = flag.Int("edits", 0, "edits of the randomised invalidation test on a folder store (0: 320, or 60 with -short)")
)

// TestInvalidationRandom makes hundreds of random edits (field edits, links
// added and removed, reorders, publish, unpublish and delete, page
// component and tree changes, locale copies, origin write-backs) and, after
// every few, lets the publisher catch up and checks that the store holds
// exactly the fresh answers (env.check).
func TestInvalidationRandom(t *testing.T) {
	t.Parallel()
	edits := *editsFlag
	if edits == 0 {
		edits = 320
		if testing.Short() {
			edits = 60
		}
	}
	runRandomEdits(t, folderStore, edits)
}

// TestInvalidationRandomMinIO is the same against a real MinIO server.
func TestInvalidationRandomMinIO(t *testing.T) {
	t.Parallel()
	edits := 100
	if testing.Short() {
		edits = 30
	}
	runRandomEdits(t, minioStore, edits)
}

func runRandomEdits(t *testing.T, kind storeKind, edits int) {
	r := newRandomEditor(t, kind)
	e, p, seed := r.e, r.p, r.seed
	e.check(t)
	if t.Failed() {
		t.FailNow()
	}
	done := 0
	for done < edits {
		group := 1 + r.rng.IntN(4)
		var names []string
		for range group {
			names = append(names, r.edit())
		}
		done += group
		e.must(p.Drain(e.ctx))
		e.check(t)
		if t.Failed() {
			t.Fatalf("after edits %d..%d %v (seed %d)", done-group+1, done, names, seed)
		}
	}
	// The store ends equal to a fresh render by the publisher's own
	// account too (edgecms verify).
	v, err := p.Verify(e.ctx, e.guid, nil)
	e.must(err)
	if len(v.Mismatches) != 0 {
		t.Errorf("Verify after %d edits (seed %d): %+v", done, seed, v.Mismatches)
	}
	t.Logf("%d edits: %v", done, r.counts)
}

// newRandomEditor builds the site on a store of kind, lets a publisher
// publish it and returns an editor of it whose choices follow testSeed.
func newRandomEditor(t *testing.T, kind storeKind) *randomEditor {
	seed := testSeed(t)
	e := newEnv(t, kind)
	s := e.buildSite()
	p := e.publisher(Config{})
	e.must(p.Drain(e.ctx))
	return &randomEditor{e: e, p: p, s: s, seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x5eed))}
}

// testSeed is the seed of a randomised test: -seed, or the clock. It is
// logged, to run a failure again.
func testSeed(t *testing.T) uint64 {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -seed=%d)", seed, seed)
	return seed
}

// randomEditor makes random edits of the test site.
type randomEditor struct {
	e      *env
	p      *Publisher
	s      *site
	seed   uint64
	rng    *rand.Rand
	pages  []int64 // created pages beyond the site's three
	counts map[string]int
}

var locales = []string{"en-us", "fr-CA"}

func (r *randomEditor) pick(ids []int64) int64 { return ids[r.rng.IntN(len(ids))] }
func (r *randomEditor) locale() string         { return locales[r.rng.IntN(2)] }
func (r *randomEditor) chance(p float64) bool  { return r.rng.Float64() < p }

func (r *randomEditor) allPages() []int64 {
	return append([]int64{r.s.home, r.s.blog, r.s.about}, r.pages...)
}

// ok ignores the errors an editor meets (a transition the workflow does not
// allow, a copy that does not exist) and fails the test on others.
func (r *randomEditor) ok(err error) bool {
	r.e.t.Helper()
	if err == nil {
		return true
	}
	switch problem.KindOf(err) {
	case problem.Conflict, problem.NotFound, problem.Invalid:
		return false
	}
	r.e.t.Fatal(err)
	return false
}

func (r *randomEditor) saveItem(locale string, id int64, fields map[string]any) bool {
	vals := map[string]json.RawMessage{}
	for k, v := range fields {
		vals[k] = raw(v)
	}
	_, err := r.e.cs.SaveItem(r.e.ctx, r.e.inst, locale, id, vals)
	return r.ok(err)
}

func (r *randomEditor) itemAction(locale string, id int64, a content.Action) {
	_, err := r.e.cs.ItemAction(r.e.ctx, r.e.inst, locale, id, a)
	r.ok(err)
}

func (r *randomEditor) maybePublishItem(locale string, id int64) {
	if r.chance(0.85) {
		r.itemAction(locale, id, content.ActionPublish)
	}
}

func (r *randomEditor) pageAction(locale string, id int64, a content.Action) {
	_, err := r.e.cs.PageAction(r.e.ctx, r.e.inst, locale, id, a)
	r.ok(err)
}

func (r *randomEditor) maybePublishPage(locale string, id int64) {
	if r.chance(0.85) {
		r.pageAction(locale, id, content.ActionPublish)
	}
}

// edit makes one random edit and returns its name.
func (r *randomEditor) edit() string {
	if r.counts == nil {
		r.counts = map[string]int{}
	}
	e, ctx, inst, s := r.e, r.e.ctx, r.e.inst, r.s
	ops := []struct {
		name   string
		weight int
		do     func()
	}{
		{"field", 10, func() {
			l := r.locale()
			switch r.rng.IntN(3) {
			case 0:
				id := r.pick(s.tags)
				r.saveItem(l, id, map[string]any{"Title": fmt.Sprintf("Tag %d", r.rng.IntN(1000))})
				r.maybePublishItem(l, id)
			case 1:
				id := r.pick(s.authors)
				r.saveItem(l, id, map[string]any{"Name": fmt.Sprintf("Author %d", r.rng.IntN(1000))})
				r.maybePublishItem(l, id)
			default:
				id := r.pick(s.posts)
				f := map[string]any{"Title": fmt.Sprintf("Post %d", r.rng.IntN(1000))}
				if r.chance(0.3) { // a new path on the dynamic page, sometimes a duplicate
					f["Slug"] = fmt.Sprintf("post-%d", r.rng.IntN(len(s.posts)+3))
				}
				r.saveItem(l, id, f)
				r.maybePublishItem(l, id)
			}
		}},
		{"shared field", 2, func() {
			l, id := r.locale(), r.pick(s.posts)
			r.saveItem(l, id, map[string]any{"Rank": r.rng.IntN(100)})
			r.maybePublishItem(l, id)
		}},
		{"link author", 5, func() {
			l, id := r.locale(), r.pick(s.posts)
			var v any = content.ItemLink{ContentID: r.pick(s.authors)}
			if r.chance(0.2) {
				v = nil
			}
			r.saveItem(l, id, map[string]any{"Author": v})
			r.maybePublishItem(l, id)
		}},
		{"link tags", 5, func() {
			l, id := r.locale(), r.pick(s.posts)
			var v any
			switch r.rng.IntN(4) {
			case 0:
				v = content.ListLink{} // the whole container
			case 1:
				v = nil
			default:
				var ids []int64
				for _, t := range s.tags {
					if r.chance(0.4) {
						ids = append(ids, t)
					}
				}
				r.rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
				v = content.ListLink{ContentIDs: ids}
			}
			r.saveItem(l, id, map[string]any{"Tags": v})
			r.maybePublishItem(l, id)
		}},
		{"reorder", 4, func() {
			ids := []([]int64){s.tags, s.authors, s.posts}[r.rng.IntN(3)]
			ref := map[int64]string{s.tags[0]: "tags", s.authors[0]: "authors", s.posts[0]: "posts"}[ids[0]]
			sub := append([]int64{}, ids...)
			r.rng.Shuffle(len(sub), func(i, j int) { sub[i], sub[j] = sub[j], sub[i] })
			sub = sub[:1+r.rng.IntN(len(sub))]
			r.ok(e.cs.ReorderContainer(ctx, inst, ref, sub))
		}},
		{"publish", 4, func() {
			all := append(append(append([]int64{}, s.tags...), s.authors...), s.posts...)
			r.itemAction(r.locale(), r.pick(all), content.ActionPublish)
		}},
		{"unpublish", 4, func() {
			all := append(append(append([]int64{}, s.tags...), s.authors...), s.posts...)
			r.itemAction(r.locale(), r.pick(all), content.ActionUnpublish)
		}},
		{"delete", 2, func() {
			all := append(append([]int64{}, s.tags...), s.posts...)
			r.itemAction(r.locale(), r.pick(all), content.ActionDelete)
		}},
		{"new item", 4, func() {
			l := r.locale()
			var st content.Status
			var err error
			switch r.rng.IntN(3) {
			case 0:
				st, err = e.cs.CreateItem(ctx, inst, l, "tags", map[string]json.RawMessage{"Title": raw("New tag")})
				if r.ok(err) {
					s.tags = append(s.tags, st.ContentID)
				}
			case 1:
				st, err = e.cs.CreateItem(ctx, inst, l, "authors", map[string]json.RawMessage{"Name": raw("New author")})
				if r.ok(err) {
					s.authors = append(s.authors, st.ContentID)
				}
			default:
				n := len(s.posts)
				st, err = e.cs.CreateItem(ctx, inst, l, "posts", map[string]json.RawMessage{
					"Title": raw(fmt.Sprintf("Post %d", n)), "Slug": raw(fmt.Sprintf("post-%d", n)),
					"Author": raw(content.ItemLink{ContentID: r.pick(s.authors)})})
				if r.ok(err) {
					s.posts = append(s.posts, st.ContentID)
				}
			}
			if err == nil {
				r.maybePublishItem(l, st.ContentID)
			}
		}},
		{"locale copy", 3, func() {
			// Copy a (new, one-locale) item or page into the other locale.
			l := r.locale()
			if r.chance(0.5) && len(r.pages) > 0 {
				id := r.pick(r.pages)
				title := "Copy " + l
				_, err := e.cs.SavePage(ctx, inst, l, id, content.PageInput{Title: &title})
				if r.ok(err) {
					r.maybePublishPage(l, id)
				}
				return
			}
			ids, field := s.tags, "Title"
			switch r.rng.IntN(3) {
			case 0:
				ids, field = s.authors, "Name"
			case 1:
				ids = s.posts
			}
			id := ids[len(ids)-1-r.rng.IntN(min(3, len(ids)))]
			if r.saveItem(l, id, map[string]any{field: "Copy " + l}) {
				r.maybePublishItem(l, id)
			}
		}},
		{"add component", 3, func() {
			l, pg := r.locale(), r.pick(r.allPages())
			var err error
			if r.chance(0.5) {
				_, _, err = e.cs.AddComponent(ctx, inst, l, pg, "side", "Text", map[string]json.RawMessage{
					"Body": raw("<p>more</p>"), "Author": raw(content.ItemLink{ContentID: r.pick(s.authors)})})
			} else {
				_, _, err = e.cs.AddComponent(ctx, inst, l, pg, "main", "Teaser", map[string]json.RawMessage{
					"Heading": raw("Picks"), "Posts": raw(content.ListLink{ContentIDs: []int64{r.pick(s.posts), r.pick(s.posts)}})})
			}
			if r.ok(err) {
				r.maybePublishPage(l, pg)
			}
		}},
		{"remove component", 2, func() {
			l, pg := r.locale(), r.pick(r.allPages())
			page, err := e.cs.Page(ctx, inst, l, pg)
			if !r.ok(err) {
				return
			}
			for zone, entries := range page.Zones {
				if len(entries) > 0 {
					if r.ok(e.cs.RemoveComponent(ctx, inst, l, pg, zone, entries[r.rng.IntN(len(entries))].ContentID)) {
						r.maybePublishPage(l, pg)
					}
					return
				}
			}
		}},
		{"edit component", 3, func() {
			l, pg := r.locale(), r.pick(r.allPages())
			page, err := e.cs.Page(ctx, inst, l, pg)
			if !r.ok(err) {
				return
			}
			for _, entries := range page.Zones {
				for _, en := range entries {
					f := map[string]any{"Body": fmt.Sprintf("<p>%d</p>", r.rng.IntN(1000))}
					if en.Module == "Teaser" {
						f = map[string]any{"Heading": fmt.Sprintf("Heading %d", r.rng.IntN(1000))}
					}
					if r.saveItem(l, en.ContentID, f) {
						if r.chance(0.5) {
							r.maybePublishPage(l, pg) // publishes its components
						} else {
							r.maybePublishItem(l, en.ContentID)
						}
					}
					return
				}
			}
		}},
		{"reorder zone", 2, func() {
			l, pg := r.locale(), r.pick(r.allPages())
			page, err := e.cs.Page(ctx, inst, l, pg)
			if !r.ok(err) {
				return
			}
			for zone, entries := range page.Zones {
				if len(entries) > 1 {
					ids := make([]int64, len(entries))
					for i, en := range entries {
						ids[i] = en.ContentID
					}
					r.rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
					if r.ok(e.cs.ReorderZone(ctx, inst, l, pg, zone, ids)) {
						r.maybePublishPage(l, pg)
					}
					return
				}
			}
		}},
		{"edit page", 3, func() {
			l, pg := r.locale(), r.pick(r.allPages())
			title := fmt.Sprintf("Title %d", r.rng.IntN(1000))
			in := content.PageInput{Title: &title}
			if r.chance(0.3) {
				in.Visible = &content.Visible{Menu: r.chance(0.5), Sitemap: r.chance(0.8)}
			}
			_, err := e.cs.SavePage(ctx, inst, l, pg, in)
			if r.ok(err) {
				r.maybePublishPage(l, pg)
			}
		}},
		{"move page", 2, func() {
			if len(r.pages) == 0 {
				return
			}
			pg := r.pick(r.pages)
			parents := []any{nil, s.home, s.about}
			_, err := e.cs.SavePage(ctx, inst, r.locale(), pg, content.PageInput{ParentPageID: raw(parents[r.rng.IntN(3)])})
			r.ok(err)
		}},
		{"new page", 2, func() {
			l := r.locale()
			parent := r.pick([]int64{s.home, s.about})
			title, model := fmt.Sprintf("Page %d", r.rng.IntN(1000)), "Main"
			pg, err := e.cs.CreatePage(ctx, inst, l, content.PageInput{Title: &title, PageModel: &model, ParentPageID: raw(parent)})
			if r.ok(err) {
				r.pages = append(r.pages, pg.PageID)
				r.maybePublishPage(l, pg.PageID)
			}
		}},
		{"page workflow", 3, func() {
			l, pg := r.locale(), r.pick(r.allPages())
			switch r.rng.IntN(3) {
			case 0:
				r.pageAction(l, pg, content.ActionPublish)
			case 1:
				r.pageAction(l, pg, content.ActionUnpublish)
			default:
				if len(r.pages) > 0 {
					r.pageAction(l, r.pick(r.pages), content.ActionDelete)
				}
			}
		}},
		{"page move", 2, func() {
			// Among its siblings, or under the other parent.
			l := r.locale()
			pg := r.pick(r.allPages())
			pos := content.Position{}
			if r.chance(0.5) {
				pos.ParentPageID = raw(r.pick([]int64{s.home, s.about}))
			}
			if r.chance(0.5) {
				pos.BeforePageID = raw(r.pick(r.allPages()))
			}
			if _, err := e.cs.MovePage(ctx, inst, l, pg, pos); r.ok(err) {
				r.maybePublishPage(l, pg)
			}
		}},
		{"restore", 2, func() {
			// An earlier version of a post or a page, as a new version.
			l := r.locale()
			if r.chance(0.5) {
				id := r.pick(s.posts)
				vs, err := e.cs.ItemVersions(ctx, inst, l, id, 10, 0)
				if !r.ok(err) || len(vs.Items) < 2 {
					return
				}
				if _, err := e.cs.RestoreItemVersion(ctx, inst, l, id, vs.Items[1+r.rng.IntN(len(vs.Items)-1)].VersionID); r.ok(err) {
					r.maybePublishItem(l, id)
				}
				return
			}
			pg := r.pick(r.allPages())
			vs, err := e.cs.PageVersions(ctx, inst, l, pg, 10, 0)
			if !r.ok(err) || len(vs.Items) < 2 {
				return
			}
			if _, err := e.cs.RestorePageVersion(ctx, inst, l, pg, vs.Items[1+r.rng.IntN(len(vs.Items)-1)].VersionID); r.ok(err) {
				r.maybePublishPage(l, pg)
			}
		}},
		{"model change", 1, func() {
			// Tag gains a field with values, or loses it (with force).
			m, err := e.cs.Model(ctx, inst, "Tag")
			if !r.ok(err) {
				return
			}
			if _, has := m.Field("Note"); has {
				_, err = e.cs.UpdateModel(ctx, inst, "Tag", content.Fields{{Name: "Title", Type: content.TypeText}}, true)
				if problem.Is(err, problem.Invalid) { // nothing held a value: no force
					_, err = e.cs.UpdateModel(ctx, inst, "Tag", content.Fields{{Name: "Title", Type: content.TypeText}}, false)
				}
				r.ok(err)
				return
			}
			if _, err := e.cs.UpdateModel(ctx, inst, "Tag", content.Fields{{Name: "Title", Type: content.TypeText}, {Name: "Note", Type: content.TypeText}}, false); r.ok(err) {
				l, id := r.locale(), r.pick(s.tags)
				if r.saveItem(l, id, map[string]any{"Note": "noted"}) {
					r.maybePublishItem(l, id)
				}
			}
		}},
		{"write-back", 3, func() {
			// A variant the origin rendered on a miss.
			l := r.locale()
			variants := []struct{ path, query string }{
				{fmt.Sprintf("/item/%d", r.pick(s.posts)), "contentLinkDepth=2"},
				{fmt.Sprintf("/item/%d", r.pick(s.posts)), "contentLinkDepth=0"},
				{"/list/posts", "take=5&skip=5"},
				{"/list/posts", "sort=fields.title&direction=desc"},
				{"/list/posts", "filter=fields.rank[gt]5"},
				{"/list/tags", "take=3&contentLinkDepth=0"},
				{"/list/posts", "take=4&expandAllContentLinks=true&contentLinkDepth=2"},
				{fmt.Sprintf("/page/%d", r.s.home), "contentLinkDepth=1"},
				{"/page/website", "path=/home/blog&contentLinkDepth=0"},
			}
			v := variants[r.rng.IntN(len(variants))]
			req, err := fetch.Parse(fetch.Input{Path: "/" + e.guid + "/fetch/" + l + v.path, RawQuery: v.query})
			if err != nil {
				e.t.Fatal(err)
			}
			if _, err := r.p.writeBack(ctx, e.guid, []fetch.Request{req}); err != nil {
				e.t.Fatal(err)
			}
		}},
	}
	total := 0
	for _, op := range ops {
		total += op.weight
	}
	n := r.rng.IntN(total)
	for _, op := range ops {
		if n < op.weight {
			op.do()
			r.counts[op.name]++
			return op.name
		}
		n -= op.weight
	}
	panic("unreachable")
}

package publisher

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/render"
)

// editPost publishes a new title of post id in en-us and lets p catch up,
// returning what p did meanwhile.
func (e *env) editPost(p *Publisher, id int64, title string) Stats {
	e.t.Helper()
	before := p.Stats()
	_, err := e.cs.SaveItem(e.ctx, e.inst, "en-us", id, map[string]json.RawMessage{"Title": raw(title)})
	e.must(err)
	_, err = e.cs.ItemAction(e.ctx, e.inst, "en-us", id, content.ActionPublish)
	e.must(err)
	e.must(p.Drain(e.ctx))
	after := p.Stats()
	return Stats{Rendered: after.Rendered - before.Rendered, Written: after.Written - before.Written,
		Deferred: after.Deferred - before.Deferred, Background: after.Background - before.Background,
		Dropped: after.Dropped - before.Dropped}
}

// filterVariants returns n distinct filter variants of the posts list in
// en-us, each of which shows every post.
func (e *env) filterVariants(n int) []fetch.Request {
	reqs := make([]fetch.Request, n)
	for i := range reqs {
		reqs[i] = mustParse("/"+e.guid+"/fetch/en-us/list/posts", fmt.Sprintf("filter=fields.rank[ne]%d", 1000+i))
	}
	return reqs
}

// liveVariants counts the instance's live variants.
func (e *env) liveVariants() int {
	e.t.Helper()
	return e.count(`SELECT count(*) FROM objects WHERE guid = $1 AND last_read IS NOT NULL AND etag IS NOT NULL`, e.guid)
}

// TestPublishDropsVariants: with 60 variants of a container written back, a
// publish of an item of it renders exactly what it renders with none, and
// drops the 60 objects instead; the next publish finds none to drop. On a
// publisher that kept variants up to date, the publish rendered all 60
// again, and every later one too.
func TestPublishDropsVariants(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	s := e.buildSite()
	p := e.publisher(Config{})
	e.must(p.Drain(e.ctx))
	post := s.posts[1]
	e.editPost(p, post, "Warm-up")
	base := e.editPost(p, post, "Without variants")

	reqs := e.filterVariants(60)
	_, err := p.writeBack(e.ctx, e.guid, reqs)
	e.must(err)
	for _, r := range reqs {
		if !e.has(r) {
			t.Fatalf("%s not written back", requestString(r))
		}
	}
	if n := e.liveVariants(); n != 60 {
		t.Fatalf("%d live variants recorded, want 60", n)
	}
	with := e.editPost(p, post, "With variants")
	if with.Rendered != base.Rendered || with.Dropped != 60 {
		t.Errorf("publish with 60 variants: rendered %d, dropped %d; without: rendered %d; want the same renders and 60 dropped",
			with.Rendered, with.Dropped, base.Rendered)
	}
	for _, r := range reqs {
		if e.has(r) {
			t.Fatalf("%s still in the store after a publish of a post it shows", requestString(r))
		}
	}
	if n := e.liveVariants(); n != 0 {
		t.Errorf("%d live variants left, want 0", n)
	}
	again := e.editPost(p, post, "Once more")
	if again.Rendered != base.Rendered || again.Dropped != 0 {
		t.Errorf("next publish: rendered %d, dropped %d; want %d rendered and none dropped", again.Rendered, again.Dropped, base.Rendered)
	}
	e.check(t)

	// Written back again, the variant shows the last title.
	_, err = p.writeBack(e.ctx, e.guid, reqs[:1])
	e.must(err)
	o, err := e.store.Get(e.ctx, reqs[0].Key())
	e.must(err)
	if !bytes.Contains(o.Body, []byte("Once more")) {
		t.Errorf("variant written back again: %s", clip(o.Body))
	}
	e.check(t)
}

// TestVariantsOfOtherContainersKept: a publish drops only the variants
// that show what changed.
func TestVariantsOfOtherContainersKept(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	s := e.buildSite()
	p := e.publisher(Config{})
	e.must(p.Drain(e.ctx))
	tags := mustParse("/"+e.guid+"/fetch/en-us/list/tags", "sort=fields.title&direction=desc")
	posts := mustParse("/"+e.guid+"/fetch/en-us/list/posts", "sort=fields.title&direction=desc&contentLinkDepth=0")
	_, err := p.writeBack(e.ctx, e.guid, []fetch.Request{tags, posts})
	e.must(err)
	st := e.editPost(p, s.posts[2], "Edited")
	if st.Dropped != 1 || e.has(posts) || !e.has(tags) {
		t.Errorf("dropped %d; posts variant stored %v, tags variant stored %v; want only the posts variant dropped", st.Dropped, e.has(posts), e.has(tags))
	}
	e.check(t)
}

// TestVariantCapEvictsLeastRecentlyRead: past Config.MaxVariants, a
// write-back evicts the variants read least recently (a read of a live
// variant counts), never an object the publisher maintains.
func TestVariantCapEvictsLeastRecentlyRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	e.buildSite()
	p := e.publisher(Config{MaxVariants: 3})
	p.variantTouch = 0
	e.must(p.Drain(e.ctx))
	maintained := e.count(`SELECT count(*) FROM objects WHERE guid = $1 AND etag IS NOT NULL`, e.guid)
	v := e.filterVariants(5)
	for _, r := range v[:3] {
		_, err := p.writeBack(e.ctx, e.guid, []fetch.Request{r})
		e.must(err)
	}
	// v[0] is read again while the store holds it (the origin handed it
	// over once more): v[1] is now the least recently read.
	_, err := p.writeBack(e.ctx, e.guid, v[:1])
	e.must(err)
	_, err = p.writeBack(e.ctx, e.guid, v[3:4])
	e.must(err)
	for i, want := range []bool{true, false, true, true, false} {
		if e.has(v[i]) != want {
			t.Errorf("variant %d stored: %v, want %v", i, !want, want)
		}
	}
	_, err = p.writeBack(e.ctx, e.guid, v[4:5])
	e.must(err)
	for i, want := range []bool{true, false, false, true, true} {
		if e.has(v[i]) != want {
			t.Errorf("after a fifth: variant %d stored: %v, want %v", i, !want, want)
		}
	}
	if n := e.liveVariants(); n != 3 {
		t.Errorf("%d live variants, want the cap, 3", n)
	}
	if n := e.count(`SELECT count(*) FROM objects WHERE guid = $1 AND etag IS NOT NULL`, e.guid); n != maintained+3 {
		t.Errorf("%d live objects, want the %d maintained ones and 3 variants", n, maintained)
	}
	// A burst of write-backs larger than the cap keeps the cap.
	_, err = p.writeBack(e.ctx, e.guid, e.filterVariants(12)[5:])
	e.must(err)
	if n := e.liveVariants(); n != 3 {
		t.Errorf("after a burst: %d live variants, want 3", n)
	}
	e.check(t)
}

// TestDeepListPagesDroppedWhenEmpty: a list page of the maintained form
// past the end of its container, which only a reader asked for, is
// dropped when the container changes, instead of being rendered again.
func TestDeepListPagesDroppedWhenEmpty(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	s := e.buildSite()
	p := e.publisher(Config{})
	e.must(p.Drain(e.ctx))
	var deep []fetch.Request
	for skip := 100; skip < 150; skip += 10 {
		deep = append(deep, listRequest(e.guid, "en-us", "posts", skip))
	}
	_, err := p.writeBack(e.ctx, e.guid, deep)
	e.must(err)
	_, err = e.cs.ItemAction(e.ctx, e.inst, "en-us", s.posts[0], content.ActionUnpublish)
	e.must(err)
	before := p.Stats()
	e.must(p.Drain(e.ctx))
	if d := p.Stats().Dropped - before.Dropped; d != int64(len(deep)) {
		t.Errorf("dropped %d objects, want the %d empty list pages", d, len(deep))
	}
	for _, r := range deep {
		if e.has(r) {
			t.Errorf("%s still stored", requestString(r))
		}
	}
	e.check(t)
}

// TestEquivalentSpellingsRenderAlike backs the spellings fetch.Parse
// folds into one key with renders: expandAllContentLinks at depth 0 (at
// depth 1 for pages), fields.<name> for <name>, a bare sort name for
// fields.<name>.
func TestEquivalentSpellingsRenderAlike(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	s := e.buildSite()
	site, err := render.LoadSite(e.ctx, e.cs, e.guid)
	e.must(err)
	base := "/" + e.guid + "/fetch/en-us"
	flat, err := e.fresh.Render(e.ctx, site, mustParse(base+"/sitemap/flat/website", ""))
	e.must(err)
	paths, err := sitemapPaths(flat.Body)
	e.must(err)
	if len(paths) < 2 {
		t.Fatalf("sitemap paths %v", paths)
	}
	tests := []struct {
		path, query string
		spell       func(*fetch.Request)
	}{
		{fmt.Sprintf("%s/item/%d", base, s.posts[0]), "contentLinkDepth=0", func(r *fetch.Request) { r.ExpandAll = true }},
		{base + "/list/posts", "contentLinkDepth=0", func(r *fetch.Request) { r.ExpandAll = true }},
		{fmt.Sprintf("%s/page/%d", base, s.home), "contentLinkDepth=0", func(r *fetch.Request) { r.ExpandAll = true }},
		{fmt.Sprintf("%s/page/%d", base, s.home), "contentLinkDepth=1", func(r *fetch.Request) { r.ExpandAll = true }},
		{fmt.Sprintf("%s/page/%d", base, s.about), "contentLinkDepth=1", func(r *fetch.Request) { r.ExpandAll = true }},
		{base + "/page/website", "path=" + paths[0] + "&contentLinkDepth=1", func(r *fetch.Request) { r.ExpandAll = true }},
		{base + "/page/website", "path=" + paths[len(paths)-1] + "&contentLinkDepth=1", func(r *fetch.Request) { r.ExpandAll = true }},
		{base + "/list/posts", "fields=title,author,tags", func(r *fetch.Request) {
			r.Fields = []string{"fields.author", "fields.tags", "fields.title"}
		}},
		{base + "/list/posts", "fields=fields.x.y", func(r *fetch.Request) { r.Fields = []string{"fields.x.y"} }},
		{base + "/list/posts", "sort=title&direction=desc", func(r *fetch.Request) { r.Sort = "title" }},
	}
	for _, tt := range tests {
		canon := mustParse(tt.path, tt.query)
		other := canon
		tt.spell(&other)
		a, errA := e.fresh.Render(e.ctx, site, canon)
		b, errB := e.fresh.Render(e.ctx, site, other)
		if errA != nil || errB != nil {
			t.Fatalf("%s?%s: %v, %v", tt.path, tt.query, errA, errB)
		}
		if !bytes.Equal(a.Body, b.Body) {
			t.Errorf("%s?%s renders\n%s\nand its other spelling\n%s", tt.path, tt.query, clip(a.Body), clip(b.Body))
		}
	}
}

package publisher

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/render"
)

// TestPageByPathBeforeHandOff checks that a batch writes the page by path
// of an item it publishes behind a dynamic page before its hand-off (the
// background lane, which builds the whole sitemap, not run yet), with the
// bytes and tags of a render from the whole sitemap: for a new post, a
// title edit and a slug edit, in a container of 3,000 posts. A path
// another post holds is left to the background lane, and so is, wrongly
// at first, a post whose path an earlier post in flight takes in the whole
// sitemap; both are right once the background lane is done, and Verify
// finds the store clean.
func TestPageByPathBeforeHandOff(t *testing.T) {
	t.Parallel()
	n := 3000
	if testing.Short() {
		n = 300
	}
	s := newScaleSite(t, n)
	e := s.e
	site, err := render.LoadSite(e.ctx, e.cs, e.guid)
	e.must(err)
	// served returns the item of the stored page by path at path, and
	// checks its bytes and tags against a render from the whole sitemap
	// when want is true (0 when the store lacks it).
	served := func(step, path string, want bool) int64 {
		t.Helper()
		req, err := pagePathRequest(e.guid, "en-us", "website", path)
		e.must(err)
		o, err := e.store.Get(e.ctx, req.Key())
		if problem.Is(err, problem.NotFound) {
			return 0
		}
		e.must(err)
		var body struct {
			Node struct {
				ContentID int64 `json:"contentID"`
			} `json:"sitemapNode"`
		}
		e.must(json.Unmarshal(o.Body, &body))
		if want {
			res, err := s.p.render.Render(e.ctx, site, req)
			e.must(err)
			if !bytes.Equal(o.Body, res.Body) {
				t.Errorf("%s: %s in the store differs from a render:\n%s\n%s", step, path, clip(o.Body), clip(res.Body))
			}
			if tags := qualify(e.guid, "en-us", res.Tags); !slices.Equal(o.Tags, tags) {
				t.Errorf("%s: %s has tags %v in the store, a render %v", step, path, o.Tags, tags)
			}
		}
		return body.Node.ContentID
	}
	publish := func(id int64, title, slug string) {
		t.Helper()
		_, err := e.cs.SaveItem(e.ctx, e.inst, "en-us", id, map[string]json.RawMessage{"Title": raw(title), "Slug": raw(slug)})
		e.must(err)
		_, err = e.cs.ItemAction(e.ctx, e.inst, "en-us", id, content.ActionPublish)
		e.must(err)
	}
	batch := func(step string, writes int64, background int) {
		t.Helper()
		before := s.p.Stats()
		e.must(s.p.drainEvents(e.ctx))
		if got := s.p.Stats().Rendered - before.Rendered; got != writes {
			t.Errorf("%s: the batch rendered %d objects, want %d", step, got, writes)
		}
		if got := e.count(`SELECT count(*) FROM publish_backlog WHERE request LIKE '%/page/website?%' OR request LIKE '%/sitemap/%'`); got != background {
			t.Errorf("%s: %d sitemaps and pages by path queued, want %d", step, got, background)
		}
	}

	// A new post: its object, list page 0 and its page by path; the
	// sitemaps and the page by path again in the background.
	fresh := s.newPost("brand-new")
	batch("new post", 3, 3)
	if got := served("new post", "/home/brand-new", true); got != fresh {
		t.Errorf("new post: /home/brand-new shows item %d before the background lane, want %d", got, fresh)
	}
	e.must(s.p.drainBacklog(e.ctx))

	// A title edit keeps the path.
	mid := s.posts[len(s.posts)/2]
	midPath := fmt.Sprintf("/home/post-%d", mid)
	publish(mid, "Renamed", fmt.Sprintf("post-%d", mid))
	batch("title edit", 2, 3)
	served("title edit", midPath, true)
	e.must(s.p.drainBacklog(e.ctx))

	// A slug edit moves it; the old path goes in the background.
	other := s.posts[len(s.posts)/3]
	oldPath := fmt.Sprintf("/home/post-%d", other)
	publish(other, "Moved", "moved-post")
	batch("slug edit", 2, 4)
	if got := served("slug edit", "/home/moved-post", true); got != other {
		t.Errorf("slug edit: /home/moved-post shows item %d before the background lane, want %d", got, other)
	}
	e.must(s.p.drainBacklog(e.ctx))
	if got := served("slug edit", oldPath, false); got != 0 {
		t.Errorf("slug edit: %s still shows item %d after the background lane", oldPath, got)
	}

	// A new post with the slug of another: the path is taken, so the batch
	// leaves it to the background lane, which gives it /home/brand-new-2.
	twin := s.newPost("brand-new")
	batch("same slug", 2, 2)
	if got := served("same slug", "/home/brand-new", true); got != fresh {
		t.Errorf("same slug: /home/brand-new shows item %d, want %d", got, fresh)
	}
	if got := served("same slug", "/home/brand-new-2", false); got != 0 {
		t.Errorf("same slug: /home/brand-new-2 is in the store before the background lane")
	}
	// A post whose slug is the path the twin gets in the whole sitemap,
	// published before the background lane wrote the twin's page by path:
	// the batch cannot tell, and writes it at /home/brand-new-2 for the
	// time being.
	late := s.newPost("brand-new-2")
	batch("race", 3, 3)
	if got := served("race", "/home/brand-new-2", false); got != late {
		t.Errorf("race: /home/brand-new-2 shows item %d before the background lane, want %d", got, late)
	}
	e.must(s.p.drainBacklog(e.ctx))
	for path, want := range map[string]int64{"/home/brand-new": fresh, "/home/brand-new-2": twin, "/home/brand-new-2-2": late} {
		if got := served("after the background lane", path, true); got != want {
			t.Errorf("after the background lane: %s shows item %d, want %d", path, got, want)
		}
	}

	v, err := s.p.Verify(e.ctx, e.guid, nil)
	e.must(err)
	if len(v.Mismatches) != 0 {
		t.Errorf("Verify: %d mismatches, first %+v", len(v.Mismatches), v.Mismatches[0])
	}
}

// TestSweptPagesByPath: an edit of a dynamic page hits the page by path of
// every item of its container. Past Publisher.sweepAbove of them the plan
// holds none and the hand-off queues them from the objects table: every
// one is queued all the same, the batch renders the page's own objects
// only, and once the background lane is done the store is what a fresh
// render gives.
func TestSweptPagesByPath(t *testing.T) {
	t.Parallel()
	s := newScaleSite(t, 40)
	e := s.e
	s.p.sweepAbove = 5
	var blog int64
	e.must(e.db.GetContext(e.ctx, &blog, `SELECT page_id FROM pages WHERE dynamic_container_id IS NOT NULL`))
	title := "Blog, renamed"
	_, err := e.cs.SavePage(e.ctx, e.inst, "en-us", blog, content.PageInput{Title: &title})
	e.must(err)
	_, err = e.cs.PageAction(e.ctx, e.inst, "en-us", blog, content.ActionPublish)
	e.must(err)
	// The pages by path that show the page: one per post.
	paths := e.count(`SELECT count(*) FROM objects WHERE guid = $1 AND split_part(key, '/', 4) = 'pagepath'
		AND EXISTS (SELECT 1 FROM unnest(tags) t WHERE t LIKE '%.' || $2)`, e.guid, render.PageTag(blog))
	if paths < 40 {
		t.Fatalf("%d pages by path show the dynamic page, want one per post at least", paths)
	}
	before := s.p.Stats()
	e.must(s.p.drainEvents(e.ctx))
	if got := e.count(`SELECT count(*) FROM publish_backlog WHERE split_part(key, '/', 4) = 'pagepath'`); got != paths {
		t.Errorf("%d pages by path queued, want all %d", got, paths)
	}
	if got := s.p.Stats().Rendered - before.Rendered; got > 10 {
		t.Errorf("the batch rendered %d objects, want the page's own objects only", got)
	}
	e.must(s.p.drainBacklog(e.ctx))
	e.check(t)
	v, err := s.p.Verify(e.ctx, e.guid, nil)
	e.must(err)
	if len(v.Mismatches) != 0 {
		t.Errorf("Verify after the sweep: %d mismatches, first %+v", len(v.Mismatches), v.Mismatches[0])
	}
}

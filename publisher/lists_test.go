package publisher

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/lib/pq"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/render"
)

// TestListHeads checks that a container's membership holds its head (the
// ids its maintained list pages show) and its count, not every visible
// id, and that the list pages stay exact through changes the head alone
// cannot tell apart: a new item, a new item and an unpublish in one batch
// (the count unchanged), an edit deep in the container, a delete, an
// unpublish and reorders. The container of 250 posts is much larger than
// the head of a publisher with ListPages 2 (20 ids), whose first batch
// also finds the memberships of a republish with the default head (100
// ids): the list pages from 20 to 90 are then deeper than its head, and
// are rendered again whenever the container changes but by an edit.
func TestListHeads(t *testing.T) {
	t.Parallel()
	s := newScaleSite(t, 250)
	e := s.e
	p := e.publisher(Config{ListPages: 2})
	const head = 20
	item := func(id int64, action content.Action) {
		_, err := e.cs.ItemAction(e.ctx, e.inst, "en-us", id, action)
		e.must(err)
	}
	var renders *renderCache
	step := func(name string, change func()) {
		t.Helper()
		change()
		e.must(p.Drain(e.ctx))
		var row struct {
			Head  pq.Int64Array `db:"head_ids"`
			Total int           `db:"total"`
		}
		e.must(e.db.GetContext(e.ctx, &row, `SELECT head_ids, total FROM list_members WHERE guid = $1 AND reference_name = 'posts'`, e.guid))
		var ids []int64
		e.must(e.db.SelectContext(e.ctx, &ids, `SELECT content_id FROM item_copies ic JOIN containers c ON c.id = ic.container_id
			WHERE c.instance_id = $1 AND c.reference_name = 'posts' AND ic.published_version_id IS NOT NULL
			ORDER BY ic.item_order, ic.content_id`, e.inst.ID))
		if len(row.Head) > head {
			t.Errorf("%s: the membership holds %d ids, want at most the head of %d", name, len(row.Head), head)
		}
		if row.Total != len(ids) || fmt.Sprint([]int64(row.Head)) != fmt.Sprint(ids[:min(head, len(ids))]) {
			t.Errorf("%s: membership %v of %d, want %v of %d", name, row.Head, row.Total, ids[:min(head, len(ids))], len(ids))
		}
		site, err := render.LoadSite(e.ctx, e.cs, e.guid)
		e.must(err)
		renders = &renderCache{e: e, site: site, m: map[string]renderResult{}}
		for skip := 0; skip < 10*DefaultListPages; skip += 10 {
			req := listRequest(e.guid, "en-us", "posts", skip)
			want, err := renders.get(req)
			e.must(err)
			o, err := e.store.Get(e.ctx, req.Key())
			e.must(err)
			if string(o.Body) != string(want.Body) {
				t.Errorf("%s: list page %d is stale:\n got %s\nwant %s", name, skip, clip(o.Body), clip(want.Body))
			}
			var page struct{ TotalCount int }
			e.must(json.Unmarshal(o.Body, &page))
			if page.TotalCount != len(ids) {
				t.Errorf("%s: list page %d: totalCount %d, want %d", name, skip, page.TotalCount, len(ids))
			}
		}
	}
	step("new post", func() { s.newPost("new-1") })
	step("new post and an unpublish", func() {
		s.newPost("new-2")
		item(s.posts[150], content.ActionUnpublish)
	})
	step("edit deep in the container", func() {
		id := s.posts[200]
		_, err := e.cs.SaveItem(e.ctx, e.inst, "en-us", id, map[string]json.RawMessage{
			"Title": raw("Edited"), "Slug": raw(fmt.Sprintf("post-%d", id))})
		e.must(err)
		item(id, content.ActionPublish)
	})
	step("republish of an unpublished post", func() { item(s.posts[150], content.ActionPublish) })
	step("delete in the head", func() { e.must(e.cs.DeleteItem(e.ctx, e.inst, "en-us", s.posts[3])) })
	step("unpublish in the head", func() { item(s.posts[0], content.ActionUnpublish) })
	step("reorder: a deep post first", func() {
		e.must(e.cs.ReorderContainer(e.ctx, e.inst, "posts", []int64{s.posts[240]}))
	})
	step("reorder and a new post", func() {
		e.must(e.cs.ReorderContainer(e.ctx, e.inst, "posts", []int64{s.posts[5], s.posts[1]}))
		s.newPost("new-3")
	})
	e.check(t)
}

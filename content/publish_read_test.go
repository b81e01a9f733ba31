package content

import (
	"fmt"
	"slices"
	"testing"
)

// TestVisibleHead checks that VisibleHead answers the first items of what
// VisibleItems lists, and their count, through publishes, an unpublish, a
// delete and a reorder, and nothing for an unknown container.
func TestVisibleHead(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.articles()
	var ids []int64
	for i := range 6 {
		id := f.createItem("en-us", "Articles", map[string]any{"title": fmt.Sprint("a", i), "price": i}).ContentID
		ids = append(ids, id)
	}
	check := func(when string) {
		t.Helper()
		all, found, err := f.s.VisibleItems(f.ctx, f.inst, "en-us", "articles")
		if err != nil || !found {
			t.Fatalf("%s: VisibleItems = %v, %v", when, found, err)
		}
		for _, limit := range []int{0, 2, 10} {
			head, total, found, err := f.s.VisibleHead(f.ctx, f.inst, "en-us", "Articles", limit)
			if err != nil || !found {
				t.Fatalf("%s: VisibleHead(%d) = %v, %v", when, limit, found, err)
			}
			if want := all[:min(limit, len(all))]; !slices.Equal(head, want) || total != len(all) {
				t.Errorf("%s: VisibleHead(%d) = %v of %d, want %v of %d", when, limit, head, total, want, len(all))
			}
		}
	}
	check("nothing published")
	for _, id := range ids[1:] {
		f.itemAction("en-us", id, ActionPublish)
	}
	check("published")
	f.itemAction("en-us", ids[2], ActionUnpublish)
	check("unpublished")
	if err := f.s.DeleteItem(f.ctx, f.inst, "en-us", ids[3]); err != nil {
		t.Fatal(err)
	}
	check("deleted")
	if err := f.s.ReorderContainer(f.ctx, f.inst, "articles", []int64{ids[5], ids[0]}); err != nil {
		t.Fatal(err)
	}
	check("reordered")
	if _, _, found, err := f.s.VisibleHead(f.ctx, f.inst, "en-us", "nothing", 5); found || err != nil {
		t.Errorf("VisibleHead of an unknown container = %v, %v, want false, nil", found, err)
	}
}

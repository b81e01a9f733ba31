package content_test

import (
	"fmt"
	"testing"

	"github.com/lib/pq"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/internal/contenttest"
	"github.com/edgecms/edgecms/internal/plancheck"
)

// TestPlansAreIndexDriven checks that the management writes read rows by
// key (render/source and syncstamp check their reads likewise): on an instance
// of 100,000 items in two locales (and of 1,000: the planner's choices
// change with size), without table statistics and after ANALYZE, in the
// generic plan prepared statements settle on and in custom plans, every
// statement reads at most plancheck.MaxRowsRead rows of items and item_copies
// (EXPLAIN ANALYZE, summed over the plan's nodes). A plan that reads the
// items of a locale or an instance for one item fails, whatever made the
// planner choose it.
func TestPlansAreIndexDriven(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1_000, 100_000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			f, ids := contenttest.PlanInstance(t, n)
			inst, en, mid := f.Inst.ID, "en-us", ids.Mid
			heads := pq.Array([]int64{mid, mid + 1, ids.Author})
			t0 := contenttest.T0
			plancheck.Check(t, f.Ctx, f.DB, n, []plancheck.Case{
				{Name: "container by name", SQL: content.SelectContainerHeadSQL, Args: []any{inst, "Posts"}},
				{Name: "lock item", SQL: content.LockItemSQL, Args: []any{inst, mid}, Write: true},
				{Name: "item copies", SQL: content.SelectCopiesSQL, Args: []any{mid}},
				{Name: "link check", SQL: content.LinkedInContainerSQL, Args: []any{inst, "posts", heads}},
				{Name: "create item", SQL: content.InsertItemSQL, Args: []any{inst, int64(3), ids.Posts}, Write: true},
				{Name: "create copy", SQL: content.InsertCopySQL, Args: []any{ids.First, inst, "fr-ca", int(content.Staging), int64(1), `{"title": "x"}`, t0}, Write: true},
				{Name: "save copy", SQL: content.UpdateCopySQL, Args: []any{mid, en, int(content.Published), int64(9), `{"title": "y"}`, t0, int64(9), `{"title": "y"}`, t0, nil, nil}, Write: true},
				{Name: "unpublish copy", SQL: content.UpdateCopySQL, Args: []any{mid, en, int(content.Unpublished), int64(9), `{"title": "y"}`, t0, nil, nil, nil, nil, nil}, Write: true},
			})
		})
	}
}

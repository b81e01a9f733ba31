package syncstamp

import (
	"fmt"
	"testing"

	"github.com/lib/pq"

	"github.com/edgecms/edgecms/internal/contenttest"
	"github.com/edgecms/edgecms/internal/plancheck"
)

// TestPlansAreIndexDriven checks that the stamper reads item states and
// finds the copies that show an item by key, on an instance of 1,000 and of
// 100,000 items (see package plancheck).
func TestPlansAreIndexDriven(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1_000, 100_000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			f, ids := contenttest.PlanInstance(t, n)
			inst, en, changed := f.Inst.ID, "en-us", pq.Array([]int64{ids.Mid, ids.Tags[2]})
			plancheck.Check(t, f.Ctx, f.DB, n, []plancheck.Case{
				{Name: "fetch items linking", SQL: fetchLinkingItemsSQL, Args: []any{inst, en, changed}},
				{Name: "fetch pages holding", SQL: fetchHoldingPagesSQL, Args: []any{inst, en, changed}},
				{Name: "preview items linking", SQL: previewLinkingItemsSQL, Args: []any{inst, en, changed}},
				{Name: "preview pages holding", SQL: previewHoldingPagesSQL, Args: []any{inst, en, changed}},
				{Name: "item states", SQL: itemStatesSQL, Args: []any{pq.Array([]int64{inst, inst}), pq.Array([]string{en, "fr-ca"}), pq.Array([]int64{ids.Mid, ids.Mid})}},
			})
		})
	}
}

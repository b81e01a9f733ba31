package source

import (
	"fmt"
	"math"
	"testing"

	"github.com/lib/pq"

	"github.com/edgecms/edgecms/internal/contenttest"
	"github.com/edgecms/edgecms/internal/plancheck"
)

// TestPlansAreIndexDriven checks that the Fetch API's reads of items, list
// windows and dynamic pages read rows by key, on an instance of 1,000 and
// of 100,000 items (see package plancheck): a plan that reads the items of
// a locale or an instance for one item fails, whatever made the planner
// choose it.
func TestPlansAreIndexDriven(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1_000, 100_000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			f, ids := contenttest.PlanInstance(t, n)
			inst, en, heads := f.Inst.ID, "en-us", pq.Array([]int64{ids.Mid, ids.Mid + 1, ids.Author})
			var cases []plancheck.Case
			for _, fl := range []struct {
				name                               string
				root, roots                        string
				graph, heads, contents, containers string
				versions, dynamic, dynamicOf       string
			}{
				{"fetch", fetchItemRootSQL, fetchItemRootsSQL, fetchItemGraphSQL, fetchItemHeadsSQL, fetchContainerContentsSQL,
					fetchContainerIDsSQL, fetchContainerVersionsSQL, fetchDynamicItemsSQL, fetchDynamicItemsOfSQL},
				{"preview", previewItemRootSQL, previewItemRootsSQL, previewItemGraphSQL, previewItemHeadsSQL, previewContainerContentsSQL,
					previewContainerIDsSQL, previewContainerVersionsSQL, previewDynamicItemsSQL, previewDynamicItemsOfSQL},
			} {
				cases = append(cases,
					plancheck.Case{Name: fl.name + " item root", SQL: fl.root, Args: []any{inst, en, ids.Mid}},
					plancheck.Case{Name: fl.name + " 10 item roots", SQL: fl.roots, Args: []any{inst, en, pq.Array(contenttest.IDRange(ids.Mid, 10))}},
					plancheck.Case{Name: fl.name + " item depth 1", SQL: fl.graph, Args: []any{inst, en, pq.Array([]int64{ids.Mid}), 2}},
					plancheck.Case{Name: fl.name + " item depth 5", SQL: fl.graph, Args: []any{inst, en, pq.Array([]int64{ids.Mid}), 6}},
					plancheck.Case{Name: fl.name + " 10 items depth 1", SQL: fl.graph, Args: []any{inst, en, pq.Array(contenttest.IDRange(ids.Mid, 10)), 2}},
					plancheck.Case{Name: fl.name + " item heads", SQL: fl.heads, Args: []any{inst, en, heads}},
					plancheck.Case{Name: fl.name + " list window", SQL: fl.contents, Args: []any{inst, en, "posts", 10, 20}},
					plancheck.Case{Name: fl.name + " whole small list", SQL: fl.containers, Args: []any{inst, en, pq.Array([]string{"tags"})}},
					plancheck.Case{Name: fl.name + " small list versions", SQL: fl.versions, Args: []any{inst, en, pq.Array([]string{"tags", "authors"})}},
					plancheck.Case{Name: fl.name + " small dynamic list", SQL: fl.dynamic, Args: []any{inst, en, ids.TagsContainer, "label", "label", math.MinInt32, 0, nil}},
					plancheck.Case{Name: fl.name + " first page of a large dynamic list", SQL: fl.dynamic, Args: []any{inst, en, ids.Posts, "title", "title", math.MinInt32, 0, 100}},
					plancheck.Case{Name: fl.name + " later page of a large dynamic list", SQL: fl.dynamic, Args: []any{inst, en, ids.Posts, "title", "title", 0, ids.Mid, 100}},
					plancheck.Case{Name: fl.name + " two items of a large dynamic list", SQL: fl.dynamicOf, Args: []any{inst, en, ids.Posts, "title", "title", pq.Array([]int64{ids.Mid, ids.Mid + 1})}},
				)
			}
			plancheck.Check(t, f.Ctx, f.DB, n, cases)
		})
	}
}

package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/fetch"
)

// TestRenderMany renders every request of the differential test (items,
// pages, list windows, paths and sitemaps, every locale, both flavours,
// depths 0 to 5) in one RenderMany call, and wants each answer as Render
// gives it: testdata/differential.golden.txt. Then it checks that the item
// requests load their items a level at a time (renderManyLoads).
func TestRenderMany(t *testing.T) {
	t.Parallel()
	f := newSeededFixture(t, 18)
	urls, reqs := differentialRequests(f)
	results, errs := f.r.RenderMany(f.ctx, f.site, reqs)
	var out strings.Builder
	for i, u := range urls {
		out.WriteString(differentialLine(u, results[i], errs[i]))
		out.WriteByte('\n')
	}
	if !*update {
		golden(t, "differential.golden.txt", []byte(out.String()))
	}
	renderManyLoads(t, f)
}

// renderManyLoads checks that RenderMany loads the items of many item
// requests a level at a time: at depth d, d+1 queries of items and one of
// heads, whatever the number of requests, and nothing more while rendering
// them, which answer as Render does.
func renderManyLoads(t *testing.T, f *fixture) {
	var maxItem int64
	for _, id := range f.item {
		maxItem = max(maxItem, id)
	}
	for _, fl := range []string{"fetch", "preview"} {
		for d := 0; d <= 5; d++ {
			var reqs []fetch.Request
			for id := int64(1); id <= maxItem; id++ {
				reqs = append(reqs, f.requestOf(fmt.Sprintf("/%s/en-us/item/%d?contentLinkDepth=%d", fl, id, d)))
			}
			groups := f.r.batches(f.ctx, f.site, reqs)
			if len(groups) != 1 {
				t.Fatalf("%d groups for one locale and flavour", len(groups))
			}
			src := groups[0].src
			loaded := src.loads
			if loaded > d+2 {
				t.Errorf("%s depth %d: %d item requests took %d queries, want at most %d", fl, d, len(reqs), loaded, d+2)
			}
			for _, i := range groups[0].reqs {
				got, gotErr := f.r.render(f.ctx, f.site, reqs[i], src, nil)
				want, wantErr := f.r.Render(f.ctx, f.site, reqs[i])
				if a, b := differentialLine("", got, gotErr), differentialLine("", want, wantErr); a != b {
					t.Errorf("%s depth %d item %d: in a batch %s, by Render %s", fl, d, reqs[i].ContentID, a, b)
				}
				// Alone in its batch, the items one level past its depth
				// are loaded as heads.
				one, oneErr := f.r.RenderMany(f.ctx, f.site, reqs[i:i+1])
				if a, b := differentialLine("", one[0], oneErr[0]), differentialLine("", want, wantErr); a != b {
					t.Errorf("%s depth %d item %d: alone in a batch %s, by Render %s", fl, d, reqs[i].ContentID, a, b)
				}
			}
			if src.loads != loaded {
				t.Errorf("%s depth %d: rendering the requests took %d more queries, want none", fl, d, src.loads-loaded)
			}
		}
	}
}

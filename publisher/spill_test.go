package publisher

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/edgecms/edgecms/content"
)

func TestSpilledSitemapsFolder(t *testing.T) { testSpilledSitemaps(t, folderStore) }
func TestSpilledSitemapsMinIO(t *testing.T)  { testSpilledSitemaps(t, minioStore) }

// testSpilledSitemaps publishes sitemaps much larger than the memory a
// render may hold of them (spillBytes), so that they go through temporary
// files in several pieces: the store must hold the bytes a fresh render
// gives, contested paths (-2, -3: posts sharing a slug, a static page at a
// post's path) included, the pages by path must follow edits that move
// those suffixes, verify must find nothing, and no file may be left.
func testSpilledSitemaps(t *testing.T, kind storeKind) {
	t.Parallel()
	e := newEnv(t, kind)
	s := e.buildSite()
	for i := range 250 {
		s.posts = append(s.posts, e.newItem("posts", map[string]any{"Title": fmt.Sprintf("More %d", i), "Slug": fmt.Sprintf("more-%d", i%200)}))
	}
	static := e.newPage(&s.home, "more-7", nil) // after Blog: at /home/more-7-3
	for _, l := range []string{"en-us", "fr-CA"} {
		_, err := e.cs.PageAction(e.ctx, e.inst, l, static, content.ActionPublish)
		e.must(err)
	}
	p := e.publisher(Config{})
	p.spillBytes, p.spillDir = 4<<10, t.TempDir()
	var spilled atomic.Int64
	p.beforeWrite = func(rs []*rendered) {
		for _, r := range rs {
			if r.file != nil && r.size > 40<<10 { // more than one piece of RenderTo's 32 KB
				spilled.Add(1)
			}
		}
	}
	e.must(p.Drain(e.ctx))
	e.check(t)
	if spilled.Load() == 0 {
		t.Fatal("no sitemap was spilled in pieces")
	}

	// A post that took more-3 moves to more-7: every more-7 after it
	// shifts its suffix, and so does the static page.
	for _, l := range []string{"en-us", "fr-CA"} {
		_, err := e.cs.SaveItem(e.ctx, e.inst, l, s.posts[14+3], map[string]json.RawMessage{"Title": raw("Moved"), "Slug": raw("more-7")})
		e.must(err)
		_, err = e.cs.ItemAction(e.ctx, e.inst, l, s.posts[14+3], content.ActionPublish)
		e.must(err)
	}
	e.newItem("posts", map[string]any{"Title": "Newest", "Slug": "more-3"})
	e.must(p.Drain(e.ctx))
	e.check(t)

	v, err := p.Verify(e.ctx, e.guid, nil)
	e.must(err)
	if len(v.Mismatches) > 0 {
		t.Errorf("verify: %+v", v.Mismatches)
	}
	left, err := os.ReadDir(p.spillDir)
	e.must(err)
	for _, f := range left {
		t.Errorf("left in the temporary folder: %s", f.Name())
	}
}

// TestCompareNodes checks the side-by-side comparison of two flat
// sitemaps against the plain one (a map of every stored node) on random
// edits: nodes added, removed, changed, moved, and a new order.
func TestCompareNodes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	body := func(paths []string, val map[string]int) string {
		var b strings.Builder
		b.WriteByte('{')
		for i, p := range paths {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `%q:{"v":%d}`, p, val[p])
		}
		b.WriteByte('}')
		return b.String()
	}
	plain := func(old, cur string, all bool) []string {
		oldPaths, oldNodes, err := sitemapNodes([]byte(old))
		if err != nil {
			t.Fatal(err)
		}
		at := map[string]int{}
		for i, p := range oldPaths {
			at[p] = i
		}
		var out []string
		e := scanSitemapBytes([]byte(cur), func(path string, node []byte) error {
			if prev, ok := oldNodes[path]; all || !ok || string(prev) != string(node) {
				out = append(out, path)
			}
			delete(oldNodes, path)
			return nil
		})
		if e != nil {
			t.Fatal(e)
		}
		var removed []string
		for p := range oldNodes {
			removed = append(removed, p)
		}
		slices.SortFunc(removed, func(a, b string) int { return at[a] - at[b] })
		return append(out, removed...)
	}
	seed := maphash.MakeSeed()
	for round := range 300 {
		n := rng.IntN(60)
		var oldPaths []string
		val := map[string]int{}
		for i := range n {
			p := fmt.Sprintf("/p%d", i)
			oldPaths = append(oldPaths, p)
			val[p] = rng.IntN(3)
		}
		newPaths := slices.Clone(oldPaths)
		newVal := maps.Clone(val)
		switch round % 4 {
		case 0: // some added and removed
			for range rng.IntN(4) {
				if len(newPaths) > 0 {
					i := rng.IntN(len(newPaths))
					newPaths = slices.Delete(newPaths, i, i+1)
				}
				p := fmt.Sprintf("/new%d", rng.IntN(1000))
				if !slices.Contains(newPaths, p) {
					newPaths = slices.Insert(newPaths, rng.IntN(len(newPaths)+1), p)
				}
			}
		case 1: // some changed
			for p := range newVal {
				if rng.IntN(5) == 0 {
					newVal[p]++
				}
			}
		case 2: // one moved
			if len(newPaths) > 1 {
				i := rng.IntN(len(newPaths))
				p := newPaths[i]
				newPaths = slices.Delete(newPaths, i, i+1)
				newPaths = slices.Insert(newPaths, rng.IntN(len(newPaths)+1), p)
			}
		case 3: // a new order
			rng.Shuffle(len(newPaths), func(i, j int) { newPaths[i], newPaths[j] = newPaths[j], newPaths[i] })
		}
		old, cur := body(oldPaths, val), body(newPaths, newVal)
		all := rng.IntN(10) == 0
		stored, fresh := newNodeStream(strings.NewReader(old), seed), newNodeStream(strings.NewReader(cur), seed)
		got, err := compareNodes(stored, fresh, all)
		stored.stop()
		fresh.stop()
		if err != nil {
			t.Fatal(err)
		}
		if want := plain(old, cur, all); !slices.Equal(got, want) {
			t.Fatalf("round %d:\nold %s\nnew %s\ngot  %v\nwant %v", round, old, cur, got, want)
		}
	}
	// A stored body that is not a sitemap is told apart.
	stored, fresh := newNodeStream(strings.NewReader(`{"/a":{},"/b"`), seed), newNodeStream(strings.NewReader(`{"/a":{}}`), seed)
	defer stored.stop()
	defer fresh.stop()
	if _, err := compareNodes(stored, fresh, false); !errors.Is(err, errStoredNotSitemap) {
		t.Errorf("a broken stored sitemap: %v, want errStoredNotSitemap", err)
	}
}

package publisher

import (
	"encoding/json"
	"fmt"
	"os"
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

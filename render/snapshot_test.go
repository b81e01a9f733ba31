package render

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/render/source"
)

// TestSnapshotRendersAlike renders every fetch answer of the golden cases,
// and many more (every item, page, list window, path and sitemap of the
// fixture in both locales, at depths 0 to 3, with and without
// expandAllContentLinks, sorted, filtered, and requests that answer 404),
// from Postgres and from a source.Snapshot, and wants the same bytes,
// tags and errors.
func TestSnapshotRendersAlike(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	snaps := map[string]*source.Snapshot{}
	for _, l := range f.site.Locales {
		s, err := source.LoadSnapshot(f.ctx, f.s, f.inst, l.Code, 1<<30)
		f.check("LoadSnapshot "+l.Code, err)
		snaps[strings.ToLower(l.Code)] = s
	}

	var urls []string
	for _, c := range goldenCases() {
		if strings.HasPrefix(c.url, "/fetch/") {
			urls = append(urls, c.url)
		}
	}
	var items []int64
	for _, id := range f.item {
		items = append(items, id)
	}
	slices.Sort(items)
	items = append(items, items[len(items)-1]+1000) // never existed
	for _, loc := range []string{en, fr} {
		base := "/fetch/" + loc
		for d := 0; d <= 3; d++ {
			for _, all := range []bool{false, true} {
				q := fmt.Sprintf("?contentLinkDepth=%d&expandAllContentLinks=%t", d, all)
				for _, id := range items {
					urls = append(urls, fmt.Sprintf("%s/item/%d%s", base, id, q))
				}
				for _, id := range f.page {
					urls = append(urls, fmt.Sprintf("%s/page/%d%s", base, id, q))
				}
				for _, ref := range []string{"posts", "categories", "nothing"} {
					for _, w := range []string{"", "&take=2&skip=1", "&take=1&skip=3", "&skip=50"} {
						urls = append(urls, base+"/list/"+ref+q+w)
					}
				}
				for _, path := range []string{"/home", "/about-us", "/about-us/our-team", "/blog", "/blog/hello-world",
					"/blog/second-post", "/blog/third", "/blog/gone", "/external", "/nowhere"} {
					urls = append(urls, base+"/page/website"+q+"&path="+path)
				}
			}
		}
		urls = append(urls,
			base+"/page/999999",
			base+"/list/posts?sort=fields.views&direction=desc",
			base+"/list/posts?sort=contentID&direction=asc&take=2",
			base+"/list/posts?sort=fields.nothing",
			base+"/list/posts?filter=fields.featured[eq]true",
			base+"/list/posts?filter=fields.views[gt]5&fields=title,category&contentLinkDepth=2&expandAllContentLinks=true",
			base+"/list/Categories?fields=title",
		)
		for _, ch := range []string{"website", "footer", "nothing"} {
			urls = append(urls, base+"/sitemap/flat/"+ch, base+"/sitemap/nested/"+ch)
		}
	}

	answers := 0
	for _, u := range urls {
		req := f.request(u)
		want, wantErr := f.r.Render(f.ctx, f.site, req)
		got, gotErr := f.r.RenderFrom(f.ctx, f.site, req, snaps[strings.ToLower(req.Locale)])
		switch {
		case wantErr != nil || gotErr != nil:
			if problem.KindOf(wantErr) != problem.KindOf(gotErr) || fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
				t.Errorf("%s: error %v from a snapshot, %v from Postgres", u, gotErr, wantErr)
			}
		case !bytes.Equal(got.Body, want.Body):
			t.Errorf("%s: from a snapshot\n%s\nfrom Postgres\n%s", u, got.Body, want.Body)
		case !slices.Equal(got.Tags, want.Tags):
			t.Errorf("%s: tags %v from a snapshot, %v from Postgres", u, got.Tags, want.Tags)
		default:
			answers++
		}
	}
	t.Logf("%d requests, %d answered 200", len(urls), answers)
}

// TestSnapshotRefuses checks that a snapshot answers only for its own
// instance, locale and flavour, and only the kinds it holds everything for.
func TestSnapshotRefuses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s, err := source.LoadSnapshot(f.ctx, f.s, f.inst, en, 1<<30)
	f.check("LoadSnapshot", err)
	for _, u := range []string{
		"/fetch/fr-ca/item/{hello}",
		"/preview/en-us/item/{hello}",
		"/fetch/en-us/sync/items",
		"/fetch/gallery/7",
	} {
		if _, err := f.r.RenderFrom(f.ctx, f.site, f.request(u), s); err == nil || problem.KindOf(err) == problem.NotFound {
			t.Errorf("%s from an en-us fetch snapshot: err = %v, want an internal error", u, err)
		}
	}
	if _, err := source.LoadSnapshot(f.ctx, f.s, f.inst, en, 100); err != source.ErrSnapshotTooLarge {
		t.Errorf("LoadSnapshot with a bound of 100 bytes: err = %v, want ErrSnapshotTooLarge", err)
	}
}

// TestSnapshotCurrent checks that a snapshot knows when an event of its
// instance was committed after it was read.
func TestSnapshotCurrent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s, err := source.LoadSnapshot(f.ctx, f.s, f.inst, en, 1<<30)
	f.check("LoadSnapshot", err)
	cur, err := s.Current(f.ctx, f.db)
	f.check("Current", err)
	if !cur {
		t.Fatal("Current = false right after LoadSnapshot")
	}
	other, err := f.s.CreateInstance(f.ctx, "other", []content.Locale{{Code: en, Name: "English"}})
	f.check("CreateInstance", err)
	_, err = f.s.CreateModel(f.ctx, other, content.Model{Name: "Note", Kind: "content",
		Fields: content.Fields{{Name: "title", Type: content.TypeText}}})
	f.check("CreateModel", err)
	_, err = f.s.CreateContainer(f.ctx, other, "notes", "Note")
	f.check("CreateContainer", err)
	_, err = f.s.CreateItem(f.ctx, other, en, "notes", vals("title", "x"))
	f.check("CreateItem", err)
	if cur, err = s.Current(f.ctx, f.db); err != nil || !cur {
		t.Fatalf("Current after an event of another instance = %v, %v; want true", cur, err)
	}
	f.save("hello", fr, "title", "Salut")
	if cur, err = s.Current(f.ctx, f.db); err != nil || cur {
		t.Fatalf("Current after an event of the instance = %v, %v; want false", cur, err)
	}
}

package render

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/render/source"
)

// TestSitemapWalkNames renders the sitemaps and pages by path of a channel
// whose dynamic pages name their items from a few colliding slugs (post,
// post-2, post-1, a-2-2, ...) next to static pages of the same names, and
// wants the paths a sitemap held whole gives (referencePaths: one set of
// every path taken, in sitemap order), whether the walk holds the items or
// reads them a page at a time, and whether the counting namer's filters
// are large or so small that every name looks contested. The bytes of
// every answer are the same in each case, and pages by path found in one
// walk for many (SitemapMemo) are those found one at a time.
func TestSitemapWalkNames(t *testing.T) {
	// A name is taken again (post, c, e), after the name its second
	// would get (post-2, c-2) or before it (b-2, post-3, e-2: see page
	// "a2" too).
	slugs := []string{"post", "post-2", "x-1", "post", "a-2-2", "a", "a-2", "", "b-2", "b", "b", "post-3",
		"Post", "a-02", "c", "c-2", "c", "d-2", "d-2", "d", "e", "e-1", "e", "e-2"}
	for i := range 20 {
		slugs = append(slugs, fmt.Sprint("u-", i))
	}
	f := newFixtureOf(t, []content.Locale{{Code: en, Name: "English"}}, func(f *fixture) {
		f.model("Post", "content", content.Field{Name: "slug", Type: content.TypeText}, content.Field{Name: "Title", Type: content.TypeText})
		_, err := f.s.CreateContainer(f.ctx, f.inst, "posts", "Post")
		f.check("CreateContainer", err)
		for i, slug := range slugs {
			name := fmt.Sprint("p", i)
			f.newItem(name, en, "posts", "slug", slug, "Title", name)
			f.act(name, en, content.ActionPublish)
		}
		_, err = f.s.CreatePageModel(f.ctx, f.inst, "OneColumn", []string{"Main"})
		f.check("CreatePageModel", err)
		page := func(name, title, parent string, d *content.Dynamic) {
			in := content.PageInput{Title: ptr(title), PageModel: ptr("OneColumn"), Dynamic: d}
			if parent != "" {
				in.ParentPageID = f.parent(parent)
			}
			f.newPage(name, en, in)
			f.publishPage(name, en)
		}
		page("post", "Post", "", nil)
		page("first", "First", "", &content.Dynamic{ReferenceName: "posts", PathField: "slug"})
		page("detail", "Detail", "first", nil)
		page("a2", "A 2", "", nil)
		page("more", "More", "", nil)
		page("second", "Second", "more", &content.Dynamic{ReferenceName: "posts", PathField: "slug"})
	})
	want := referencePaths(t, f, "website")
	if len(want) < 130 {
		t.Fatalf("the reference sitemap has %d nodes, want more than 130", len(want))
	}

	defer func(size, counters int) { dynamicPageSize, filterCounters = size, counters }(dynamicPageSize, filterCounters)
	var flat0, nested0 []byte
	pages0 := map[string][]byte{}
	for _, c := range []struct{ size, counters int }{{1000, 1 << 20}, {3, 1 << 20}, {3, 2}, {1, 2}, {7, 64}} {
		dynamicPageSize, filterCounters = c.size, c.counters
		name := fmt.Sprintf("%d items a read, %d counters", c.size, c.counters)
		flat, _ := f.mustRender("/fetch/en-us/sitemap/flat/website")
		nested, _ := f.mustRender("/fetch/en-us/sitemap/nested/website")
		var got []string
		dec := json.NewDecoder(bytes.NewReader(flat.Body))
		_, _ = dec.Token()
		for dec.More() {
			tok, err := dec.Token()
			f.check("decode", err)
			got = append(got, tok.(string))
			var skip json.RawMessage
			f.check("decode", dec.Decode(&skip))
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("%s: flat sitemap paths\n%v\nwant\n%v", name, got, want)
		}
		if flat0 == nil {
			flat0, nested0 = flat.Body, nested.Body
		} else if !bytes.Equal(flat.Body, flat0) || !bytes.Equal(nested.Body, nested0) {
			t.Errorf("%s: the sitemaps differ from the first case's", name)
		}
		// Pages by path one at a time, then all from one walk.
		memo := &memoSource{Reader: f.r.reads}
		var reqs []fetch.Request
		for _, p := range want {
			reqs = append(reqs, f.request("/fetch/en-us/page/website?path="+p))
		}
		memo.Want(reqs)
		for _, p := range want {
			res, err := f.render("/fetch/en-us/page/website?path=" + p)
			f.check("page "+p, err)
			var v struct {
				SitemapNode struct{ Path string } `json:"sitemapNode"`
			}
			f.check("decode", json.Unmarshal(res.Body, &v))
			if v.SitemapNode.Path != p {
				t.Errorf("%s: the page by path %s has the node of %s", name, p, v.SitemapNode.Path)
			}
			if b, ok := pages0[p]; ok && !bytes.Equal(b, res.Body) {
				t.Errorf("%s: the page by path %s differs from the first case's", name, p)
			}
			pages0[p] = res.Body
			shared, err := f.r.RenderFrom(f.ctx, f.site, f.request("/fetch/en-us/page/website?path="+p), memo)
			f.check("page from the memo "+p, err)
			if !bytes.Equal(shared.Body, res.Body) || strings.Join(shared.Tags, " ") != strings.Join(res.Tags, " ") {
				t.Errorf("%s: the page by path %s from one walk differs from its own walk's", name, p)
			}
		}
		// One walk: each of the two dynamic pages' first read, then its
		// items twice (counted, then named).
		if n, most := memo.reads.Load(), int64(2*(1+2*(len(slugs)/c.size+1))); n > most {
			t.Errorf("%s: %d pages by path read dynamic items %d times, want at most %d (one walk)", name, len(want), n, most)
		}
	}
}

type memoSource struct {
	*source.Reader
	SitemapMemo
	reads atomic.Int64 // calls of DynamicItems
}

func (s *memoSource) DynamicItems(ctx context.Context, inst content.Instance, locale string, fl source.Flavour, b source.DynamicBinding, after *source.DynamicItem, limit int) ([]source.DynamicItem, error) {
	s.reads.Add(1)
	return s.Reader.DynamicItems(ctx, inst, locale, fl, b, after, limit)
}

// referencePaths is the paths of a channel's flat sitemap, in order, as a
// sitemap held whole names them: one set of every path taken.
func referencePaths(t *testing.T, f *fixture, channel string) []string {
	_, pages, err := f.r.reads.ChannelPages(f.ctx, f.inst, en, source.FlavourFetch, channel)
	f.check("ChannelPages", err)
	children := map[int64][]*source.PageVersion{}
	var roots []*source.PageVersion
	for i := range pages {
		if p := &pages[i]; p.ParentID == nil {
			roots = append(roots, p)
		} else {
			children[*p.ParentID] = append(children[*p.ParentID], p)
		}
	}
	taken := map[string]bool{}
	unique := func(path string) string {
		p := path
		for n := 2; taken[p]; n++ {
			p = path + "-" + strconv.Itoa(n)
		}
		taken[p] = true
		return p
	}
	var out []string
	var build func(ps []*source.PageVersion, prefix string)
	build = func(ps []*source.PageVersion, prefix string) {
		for _, p := range ps {
			if p.PageType != content.PageDynamic {
				path := unique(prefix + "/" + p.Name)
				out = append(out, path)
				build(children[p.PageID], path)
				continue
			}
			items, err := f.r.reads.DynamicItems(f.ctx, f.inst, en, source.FlavourFetch,
				source.DynamicBinding{ContainerID: p.DynamicContainerID, PathField: p.DynamicPathField}, nil, -1)
			f.check("DynamicItems", err)
			for _, it := range items {
				path := unique(prefix + "/" + itemName(it))
				out = append(out, path)
				build(children[p.PageID], path)
			}
		}
	}
	build(roots, "")
	return out
}

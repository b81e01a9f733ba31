package render

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/render/source"
)

// smNode is a node of a sitemap: a page, or one item of a dynamic page.
type smNode struct {
	page      *source.PageVersion
	path      string
	name      string
	title     string
	menuText  string
	contentID int64 // the item a dynamic page's node stands for
	children  []*smNode
}

// sitemapTree is the sitemap of a channel in one locale and flavour. It is
// never changed once built, so renders may share it (SitemapMemo).
type sitemapTree struct {
	channel string
	roots   []*smNode

	indexOnce sync.Once
	byPath    map[string][]*smNode // lower-case path -> nodes, in sitemap order
}

// find returns the first node, in sitemap order, whose path equals path
// ignoring case, or nil.
func (t *sitemapTree) find(path string) *smNode {
	t.indexOnce.Do(func() {
		t.byPath = map[string][]*smNode{}
		t.walk(func(n *smNode) bool {
			k := strings.ToLower(n.path)
			t.byPath[k] = append(t.byPath[k], n)
			return true
		})
	})
	for _, n := range t.byPath[strings.ToLower(path)] {
		if strings.EqualFold(n.path, path) {
			return n
		}
	}
	// EqualFold folds a few characters that ToLower does not (the Kelvin
	// sign, ...): look through every node before saying no.
	var hit *smNode
	t.walk(func(n *smNode) bool {
		if strings.EqualFold(n.path, path) {
			hit = n
			return false
		}
		return true
	})
	return hit
}

// SitemapMemo, embedded in a Source, lets the renders that read that
// source share the sitemap trees they build, one per locale, flavour and
// channel: a page by path otherwise builds its channel's whole sitemap,
// which for a dynamic page over N items makes N pages by path cost N²
// nodes. The Source must then answer for one instance and not change
// while the renders run (the publisher's per-batch sources, a snapshot).
// The zero value is ready to use.
type SitemapMemo struct {
	mu    sync.Mutex
	trees map[string]*memoTree
}

type memoTree struct {
	once sync.Once
	tree *sitemapTree
	tags []string
	err  error
}

func (m *SitemapMemo) sitemapMemo() *SitemapMemo { return m }

func (m *SitemapMemo) entry(key string) *memoTree {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.trees == nil {
		m.trees = map[string]*memoTree{}
	}
	e := m.trees[key]
	if e == nil {
		e = &memoTree{}
		m.trees[key] = e
	}
	return e
}

// loadSitemap returns the sitemap of a channel (buildSitemap), from the
// source's SitemapMemo when it has one, and tags the job with what it is
// made from.
func (j *job) loadSitemap(channel string) (*sitemapTree, error) {
	memo, ok := j.src.(interface{ sitemapMemo() *SitemapMemo })
	if !ok {
		t, tags, err := j.buildSitemap(channel)
		for _, tag := range tags {
			j.tag(tag)
		}
		return t, err
	}
	e := memo.sitemapMemo().entry(j.locale + "\x00" + string(j.fl) + "\x00" + strings.ToLower(channel))
	e.once.Do(func() { e.tree, e.tags, e.err = j.buildSitemap(channel) })
	for _, tag := range e.tags {
		j.tag(tag)
	}
	return e.tree, e.err
}

// walk visits the nodes in sitemap order (a parent before its children)
// until visit returns false.
func (t *sitemapTree) walk(visit func(*smNode) bool) {
	var rec func([]*smNode) bool
	rec = func(ns []*smNode) bool {
		for _, n := range ns {
			if !visit(n) || !rec(n.children) {
				return false
			}
		}
		return true
	}
	rec(t.roots)
}

// buildSitemap builds the sitemap of a channel: its visible pages, a parent
// before its children and siblings in order. A page whose parent is not
// visible is left out with its subtree, since its path would lead nowhere.
// A dynamic page has no node of its own but one node per visible item of
// its container, at the parent's path and the page name made from the
// item's path field; pages below a dynamic page repeat below each item.
// A path already taken gets -2, -3, ... appended, in sitemap order.
func (j *job) buildSitemap(channel string) (*sitemapTree, []string, error) {
	ch, pages, err := j.src.ChannelPages(j.ctx, j.inst, j.locale, j.fl, channel)
	if err != nil {
		return nil, nil, err
	}
	tags := []string{ChannelTag(ch.Name)}

	children := map[int64][]*source.PageVersion{}
	var roots []*source.PageVersion
	var bindings []source.DynamicBinding
	binding := map[int64]int{} // pageID -> index in bindings
	for i := range pages {
		p := &pages[i]
		if p.ParentID == nil {
			roots = append(roots, p)
		} else {
			children[*p.ParentID] = append(children[*p.ParentID], p)
		}
		if p.PageType == content.PageDynamic && p.DynamicContainerID != 0 {
			binding[p.PageID] = len(bindings)
			bindings = append(bindings, source.DynamicBinding{ContainerID: p.DynamicContainerID, PathField: p.DynamicPathField, TitleField: p.DynamicTitleField})
			tags = append(tags, ContainerTag(p.DynamicReferenceName))
		}
	}
	items := make([][]source.DynamicItem, len(bindings))
	if len(bindings) > 0 {
		ds, err := j.src.DynamicItems(j.ctx, j.inst, j.locale, j.fl, bindings)
		if err != nil {
			return nil, nil, err
		}
		groupDynamic(items, ds)
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
	var build func(ps []*source.PageVersion, prefix string) []*smNode
	build = func(ps []*source.PageVersion, prefix string) []*smNode {
		var out []*smNode
		for _, p := range ps {
			if b, ok := binding[p.PageID]; ok {
				for _, it := range items[b] {
					slug := strconv.FormatInt(it.ContentID, 10)
					if strings.TrimSpace(it.PathValue) != "" {
						slug = content.PageName(it.PathValue)
					}
					// Named after the item, as Agility does: its title
					// field, else the path value.
					title := it.TitleValue
					if strings.TrimSpace(title) == "" {
						title = it.PathValue
					}
					n := &smNode{page: p, title: title, menuText: title, contentID: it.ContentID}
					n.path = unique(prefix + "/" + slug)
					n.name = n.path[strings.LastIndexByte(n.path, '/')+1:]
					n.children = build(children[p.PageID], n.path)
					out = append(out, n)
				}
				continue
			}
			n := &smNode{page: p, name: p.Name, title: p.Doc.Title, menuText: p.Doc.MenuText}
			n.path = unique(prefix + "/" + p.Name)
			n.children = build(children[p.PageID], n.path)
			out = append(out, n)
		}
		return out
	}
	return &sitemapTree{channel: ch.Name, roots: build(roots, "")}, tags, nil
}

// groupDynamic puts the items of each binding in items, in the order of
// ds. Sources answer them grouped by binding, in order: then each is a
// slice of ds, not a copy (a dynamic page over N items would hold its
// items twice while its tree is built, some 50 bytes a node).
func groupDynamic(items [][]source.DynamicItem, ds []source.DynamicItem) {
	if slices.IsSortedFunc(ds, func(a, b source.DynamicItem) int { return cmp.Compare(a.Binding, b.Binding) }) {
		for start := 0; start < len(ds); {
			end := start + 1
			for end < len(ds) && ds[end].Binding == ds[start].Binding {
				end++
			}
			items[ds[start].Binding] = ds[start:end:end]
			start = end
		}
		return
	}
	for _, d := range ds {
		items[d.Binding] = append(items[d.Binding], d)
	}
}

// sitemap renders GET /{locale}/sitemap/flat/{channel} (an object keyed by
// path, in sitemap order) or .../sitemap/nested/{channel} (an array of root
// nodes with their children).
func (j *job) sitemap(nested bool) error {
	sm, err := j.loadSitemap(j.req.Channel)
	if err != nil {
		return err
	}
	w := &j.w
	if nested {
		j.writeNested(sm.roots)
		return w.err
	}
	w.open('{')
	sm.walk(func(n *smNode) bool {
		w.key(n.path)
		j.writeNode(n, false)
		w.flush()
		return w.err == nil
	})
	w.close('}')
	return w.err
}

func (j *job) writeNested(ns []*smNode) {
	w := &j.w
	w.open('[')
	for _, n := range ns {
		if w.err != nil {
			return
		}
		j.writeNode(n, true)
		w.flush()
	}
	w.close(']')
}

// writeNode writes a sitemap node; nested adds its children (null on a
// leaf).
func (j *job) writeNode(n *smNode, nested bool) {
	p := n.page
	w := &j.w
	w.open('{')
	w.key("title")
	w.str(n.title)
	w.key("name")
	w.str(n.name)
	w.key("pageID")
	w.int(p.PageID)
	w.key("menuText")
	w.str(n.menuText)
	w.key("visible")
	writeVisible(w, p.Doc.Visible)
	w.key("path")
	w.str(n.path)
	w.key("redirect")
	if p.Doc.RedirectURL != "" && n.contentID == 0 {
		w.open('{')
		w.key("url")
		w.str(p.Doc.RedirectURL)
		w.key("target")
		w.str("_self")
		w.close('}')
	} else {
		w.null()
	}
	w.key("isFolder")
	w.bool(p.PageType == content.PageFolder)
	if n.contentID != 0 {
		w.key("contentID")
		w.int(n.contentID)
	}
	if nested {
		w.key("children")
		if len(n.children) == 0 {
			w.null()
		} else {
			j.writeNested(n.children)
		}
	}
	w.close('}')
}

package render

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/render/source"
)

// A channel's sitemap is never held whole: a dynamic page over N items has
// N nodes, and a render that held them (a sitemap, or the page by path that
// looks up one of them) would need memory in proportion to the container.
// Instead a render walks the sitemap (sitemapWalk): the channel's pages are
// read whole, the items of a dynamic page a page at a time
// (dynamicPageSize), and each node is handed to the render, which writes it
// out (sitemap) or keeps it when its path is one it looks for (find,
// SitemapMemo). The memory of a walk is that of the pages, one page of
// items per level and the names of one sibling group (namer), whatever the
// size of the containers.

// smNode is a node of a sitemap: a page, or one item of a dynamic page.
type smNode struct {
	page      *source.PageVersion
	path      string
	name      string
	title     string
	menuText  string
	contentID int64 // the item a dynamic page's node stands for
}

// dynamicPageSize is how many items of a dynamic page a walk reads at a
// time. A dynamic page with fewer is read once per walk and held; its
// sibling group is then named from memory. (A variable for tests.)
var dynamicPageSize = 1000

// sitemapWalk walks the sitemap of a channel in one locale and flavour.
type sitemapWalk struct {
	j        *job
	channel  string
	roots    []*source.PageVersion
	children map[int64][]*source.PageVersion
	bindings map[int64]source.DynamicBinding // by dynamic page
	// small holds the items of the dynamic pages found to have fewer than
	// dynamicPageSize: pages below a dynamic page repeat below each of its
	// items, and are read once.
	small map[source.DynamicBinding][]source.DynamicItem
}

// errStop ends a walk early, without error.
var errStop = errors.New("stop")

// openSitemap reads the pages of a channel for walks of its sitemap, and
// tags the job with what the sitemap is made from.
func (j *job) openSitemap(channel string) (*sitemapWalk, error) {
	ch, pages, err := j.src.ChannelPages(j.ctx, j.inst, j.locale, j.fl, channel)
	if err != nil {
		return nil, err
	}
	w := &sitemapWalk{j: j, channel: ch.Name, children: map[int64][]*source.PageVersion{},
		bindings: map[int64]source.DynamicBinding{}, small: map[source.DynamicBinding][]source.DynamicItem{}}
	j.tag(ChannelTag(ch.Name))
	for i := range pages {
		p := &pages[i]
		if p.ParentID == nil {
			w.roots = append(w.roots, p)
		} else {
			w.children[*p.ParentID] = append(w.children[*p.ParentID], p)
		}
		if p.PageType == content.PageDynamic && p.DynamicContainerID != 0 {
			w.bindings[p.PageID] = source.DynamicBinding{ContainerID: p.DynamicContainerID, PathField: p.DynamicPathField, TitleField: p.DynamicTitleField}
			j.tag(ContainerTag(p.DynamicReferenceName))
		}
	}
	return w, nil
}

// walk visits the sitemap's nodes: its visible pages, a parent before its
// children and siblings in order. A page whose parent is not visible is
// left out with its subtree, since its path would lead nowhere. A dynamic
// page has no node of its own but one node per visible item of its
// container, at the parent's path and the page name made from the item's
// path field; pages below a dynamic page repeat below each item. A path
// already taken gets -2, -3, ... appended, in sitemap order.
//
// enter is called with each node and says whether to walk its subtree;
// leave, when not nil, is called after the subtree (walked or not). Either
// may return errStop to end the walk.
func (w *sitemapWalk) walk(enter func(*smNode) (bool, error), leave func(*smNode) error) error {
	err := w.group(w.roots, "", enter, leave)
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// group walks a sibling group: the nodes of pages ps, below prefix. Only
// siblings' paths can be equal (names hold no '/', and parents' paths are
// unique), so the names taken are a group's.
func (w *sitemapWalk) group(ps []*source.PageVersion, prefix string, enter func(*smNode) (bool, error), leave func(*smNode) error) error {
	if len(ps) == 0 {
		return nil
	}
	names, err := w.namer(ps, prefix)
	if err != nil {
		return err
	}
	// A static page's node keeps the page's name where its path has a
	// -2, ...; an item's node is named after its path.
	visit := func(n *smNode) error {
		name := names.take(n.name)
		n.path = prefix + "/" + name
		if n.contentID != 0 {
			n.name = name
		}
		down, err := enter(n)
		if err != nil {
			return err
		}
		if down {
			if err := w.group(w.children[n.page.PageID], n.path, enter, leave); err != nil {
				return err
			}
		}
		if leave != nil {
			return leave(n)
		}
		return nil
	}
	for _, p := range ps {
		b, dynamic := w.bindings[p.PageID]
		if !dynamic {
			if err := visit(&smNode{page: p, name: p.Name, title: p.Doc.Title, menuText: p.Doc.MenuText}); err != nil {
				return err
			}
			continue
		}
		err := w.items(b, func(it source.DynamicItem) error {
			// Named after the item, as Agility does: its title field,
			// else the path value.
			title := it.TitleValue
			if strings.TrimSpace(title) == "" {
				title = it.PathValue
			}
			return visit(&smNode{page: p, name: itemName(it), title: title, menuText: title, contentID: it.ContentID})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// itemName is the page name of a dynamic page's item: made from its path
// value, else its content ID.
func itemName(it source.DynamicItem) string {
	if strings.TrimSpace(it.PathValue) == "" {
		return strconv.FormatInt(it.ContentID, 10)
	}
	return content.PageName(it.PathValue)
}

// namer returns the namer of the sibling group of pages ps below prefix:
// exact when every dynamic page among them is small, else one that first
// counts the group's names, a pass over its items (or takes the counts
// from the source's SitemapMemo, when a walk of the same source counted
// them).
func (w *sitemapWalk) namer(ps []*source.PageVersion, prefix string) (*namer, error) {
	large := false
	for _, p := range ps {
		if b, ok := w.bindings[p.PageID]; ok {
			small, err := w.isSmall(b)
			if err != nil {
				return nil, err
			}
			large = large || !small
		}
	}
	if !large {
		return newNamer(nil), nil
	}
	j := w.j
	memo, _ := j.src.(interface{ sitemapMemo() *SitemapMemo })
	key := memoKey(j.locale, j.fl, w.channel) + prefix
	if memo != nil {
		if f := memo.sitemapMemo().counts(key); f != nil {
			return newNamer(f), nil
		}
	}
	f := newCountFilter(filterCounters)
	for _, p := range ps {
		b, ok := w.bindings[p.PageID]
		if !ok {
			f.add(p.Name)
			continue
		}
		if err := w.items(b, func(it source.DynamicItem) error { f.add(itemName(it)); return nil }); err != nil {
			return nil, err
		}
	}
	if memo != nil {
		memo.sitemapMemo().keepCounts(key, f)
	}
	return newNamer(f), nil
}

// isSmall reads the first page of b's items, and holds them when they are
// all.
func (w *sitemapWalk) isSmall(b source.DynamicBinding) (bool, error) {
	if _, ok := w.small[b]; ok {
		return true, nil
	}
	j := w.j
	items, err := j.src.DynamicItems(j.ctx, j.inst, j.locale, j.fl, b, nil, dynamicPageSize)
	if err != nil {
		return false, err
	}
	if len(items) < dynamicPageSize {
		w.small[b] = items
		return true, nil
	}
	return false, nil
}

// items calls fn with each item of b, in container order, a page at a
// time.
func (w *sitemapWalk) items(b source.DynamicBinding, fn func(source.DynamicItem) error) error {
	if items, ok := w.small[b]; ok {
		for _, it := range items {
			if err := fn(it); err != nil {
				return err
			}
		}
		return nil
	}
	j := w.j
	var after *source.DynamicItem
	for {
		items, err := j.src.DynamicItems(j.ctx, j.inst, j.locale, j.fl, b, after, dynamicPageSize)
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := fn(it); err != nil {
				return err
			}
		}
		if len(items) < dynamicPageSize {
			return nil
		}
		after = &items[len(items)-1]
	}
}

// find returns the first node, in sitemap order, whose path equals path
// ignoring case (strings.EqualFold), or nil. It walks only the subtrees
// on the way to path.
func (w *sitemapWalk) find(path string) (*smNode, error) {
	found, err := w.findAll([]string{path})
	return found[foldKey(path)], err
}

// findAll returns the first node, in sitemap order, of each of paths
// (ignoring case), by foldKey of its path. It walks the sitemap once, and
// only the subtrees on the way to paths.
func (w *sitemapWalk) findAll(paths []string) (map[string]*smNode, error) {
	want := map[string]bool{}  // foldKey of each path
	above := map[string]bool{} // and of each of their ancestors
	for _, p := range paths {
		k := foldKey(p)
		want[k] = true
		for i := strings.LastIndexByte(k, '/'); i > 0; i = strings.LastIndexByte(k[:i], '/') {
			above[k[:i]] = true
		}
	}
	found := map[string]*smNode{}
	err := w.walk(func(n *smNode) (bool, error) {
		k := foldKey(n.path)
		if want[k] && found[k] == nil {
			found[k] = n
			if len(found) == len(want) {
				return false, errStop
			}
		}
		return above[k], nil
	}, nil)
	return found, err
}

// foldKey maps s to a string that is equal for two strings exactly when
// strings.EqualFold says they are: each rune becomes the smallest of its
// case-folding orbit.
func foldKey(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		// The smallest rune of an ASCII letter's orbit is its upper
		// case (k and s fold with the Kelvin and long s signs too, which
		// are larger).
		return strings.ToUpper(s)
	}
	return strings.Map(func(r rune) rune {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		return m
	}, s)
}

// SitemapMemo, embedded in a Source, lets the renders of pages by path that
// read that source share walks of their channels' sitemaps: a page by path
// otherwise walks to its node alone, which for N pages by path below a
// dynamic page over N items reads N² items. The publisher tells it the
// paths it is about to render (Want); the first render that looks for one
// of them finds them all in one walk. The Source must then answer for one
// instance and not change while the renders run (the publisher's
// per-publish sources). The zero value is ready to use.
type SitemapMemo struct {
	mu    sync.Mutex
	paths map[string]*memoWalk // by channel key (memoKey) and foldKey of path
	// filters are the counts of the names of sibling groups (namer), by
	// channel key and the group's path, so that the sitemaps and the pages
	// by path of one publish count a group once; at most memoFilters.
	filters map[string]*countFilter
}

// memoFilters is how many groups' counts a SitemapMemo holds.
const memoFilters = 4

func (m *SitemapMemo) counts(key string) *countFilter {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.filters[key]
}

func (m *SitemapMemo) keepCounts(key string, f *countFilter) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.filters == nil {
		m.filters = map[string]*countFilter{}
	}
	if len(m.filters) < memoFilters {
		m.filters[key] = f
	}
}

// memoWalk is one walk for the paths wanted together.
type memoWalk struct {
	paths []string
	once  sync.Once
	found map[string]*smNode
	err   error
}

func (m *SitemapMemo) sitemapMemo() *SitemapMemo { return m }

func memoKey(locale string, fl source.Flavour, channel string) string {
	return strings.ToLower(locale) + "\x00" + string(fl) + "\x00" + strings.ToLower(channel) + "\x00"
}

// Want says that the pages by path among reqs are about to be rendered
// from the source: those of a channel, locale and flavour are found in one
// walk, the first time one is looked for. Paths wanted before are not
// walked for again.
func (m *SitemapMemo) Want(reqs []fetch.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.paths == nil {
		m.paths = map[string]*memoWalk{}
	}
	walks := map[string]*memoWalk{}
	for _, r := range reqs {
		fl, ok := flavours[r.APIType]
		if r.Kind != fetch.PageByPath || !ok {
			continue
		}
		ck := memoKey(r.Locale, fl, r.Channel)
		k := ck + foldKey(r.Path)
		if m.paths[k] != nil {
			continue
		}
		mw := walks[ck]
		if mw == nil {
			mw = &memoWalk{}
			walks[ck] = mw
		}
		m.paths[k] = mw
		mw.paths = append(mw.paths, r.Path)
	}
}

// walkFor returns the walk that finds path, or nil when it was not
// wanted.
func (m *SitemapMemo) walkFor(locale string, fl source.Flavour, channel, path string) *memoWalk {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.paths[memoKey(locale, fl, channel)+foldKey(path)]
}

// findNode returns the node at path of the channel's sitemap, from the
// source's SitemapMemo when it wants the path, and the sitemap's channel
// name.
func (j *job) findNode(channel, path string) (*smNode, string, error) {
	w, err := j.openSitemap(channel)
	if err != nil {
		return nil, "", err
	}
	if memo, ok := j.src.(interface{ sitemapMemo() *SitemapMemo }); ok {
		if mw := memo.sitemapMemo().walkFor(j.locale, j.fl, channel, path); mw != nil {
			mw.once.Do(func() { mw.found, mw.err = w.findAll(mw.paths) })
			return mw.found[foldKey(path)], w.channel, mw.err
		}
	}
	n, err := w.find(path)
	return n, w.channel, err
}

// sitemap renders GET /{locale}/sitemap/flat/{channel} (an object keyed by
// path, in sitemap order) or .../sitemap/nested/{channel} (an array of root
// nodes with their children), as the walk goes.
func (j *job) sitemap(nested bool) error {
	sm, err := j.openSitemap(j.req.Channel)
	if err != nil {
		return err
	}
	w := &j.w
	if !nested {
		w.open('{')
		err = sm.walk(func(n *smNode) (bool, error) {
			w.key(n.path)
			j.writeNode(n)
			w.close('}')
			w.flush()
			return true, w.err
		}, nil)
		w.close('}')
		if err != nil {
			return err
		}
		return w.err
	}
	// A node's children are written as they come: "children" is an
	// array from the first child, and null when a node has none.
	var hasChildren []bool // of the nodes being written, outermost first
	w.open('[')
	err = sm.walk(func(n *smNode) (bool, error) {
		if d := len(hasChildren); d > 0 && !hasChildren[d-1] {
			hasChildren[d-1] = true
			w.key("children")
			w.open('[')
		}
		j.writeNode(n)
		hasChildren = append(hasChildren, false)
		w.flush()
		return true, w.err
	}, func(*smNode) error {
		d := len(hasChildren) - 1
		if hasChildren[d] {
			w.close(']')
		} else {
			w.key("children")
			w.null()
		}
		hasChildren = hasChildren[:d]
		w.close('}')
		w.flush()
		return w.err
	})
	w.close(']')
	if err != nil {
		return err
	}
	return w.err
}

// writeNode opens a sitemap node's object and writes its members but the
// children of a nested sitemap; the caller closes it.
func (j *job) writeNode(n *smNode) {
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
}

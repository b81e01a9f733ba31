package publisher

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/lib/pq"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/render"
	"github.com/edgecms/edgecms/render/source"
)

// Pages by path of published items, before the hand-off.
//
// The page by path of an item behind a dynamic page (the object a site
// reads for a blog post) is its page and its sitemap node, and that node
// is made of the channel's static pages (its parent's path) and of the
// item's own path and title values, except for the -2, -3, ... that make
// a path unique: a path taken earlier in sitemap order by another node.
// So the batch renders it from the sitemap the channel would have if its
// dynamic pages showed only the items the batch published (nodeSource: the
// static pages and those items, read by key), which is a few nodes where
// the whole sitemap is one per item of the container; and where the item's
// path is not contested, the bytes and tags are those of the whole
// sitemap's render.
//
// Contested is decided from the objects table, which holds a row for
// every path of the flat sitemaps in the store (freeNodes): the item's
// path must be free (no live object) or hold the item's own node, and
// each ancestor of its node must be a static page, whose object is that
// page's. Otherwise another node may come first at that path (an item of
// the same slug, a dynamic item at a static page's path), and the
// channel's items (each of its candidates) are left to the background lane,
// as the sitemaps are.
//
// The background lane still renders the sitemaps the batch queued, and
// these pages by path again with them (publishEvents queues them), from
// the whole sitemap: a node the restricted sitemap got wrong (two items of
// the same slug in flight at once, the second before the first's page by
// path is written) is right once the background lane is done, as it is
// for every other node the new flat sitemap changed. It costs no more
// renders than before: the stored flat sitemap does not show the item's
// new node, so its comparison (changedPaths) would have rendered that
// path anyway.

// nodeSource is a render.Source whose dynamic pages show only the items
// ids: the sitemaps it gives hold the channels' static pages and those
// items' nodes, built once per channel for the renders that share it.
type nodeSource struct {
	render.Source
	render.SitemapMemo
	reads *source.Reader
	ids   []int64
}

// DynamicItems answers as the Reader does, for the items ids only.
func (s *nodeSource) DynamicItems(ctx context.Context, inst content.Instance, locale string, fl source.Flavour, b source.DynamicBinding, after *source.DynamicItem, limit int) ([]source.DynamicItem, error) {
	items, err := s.reads.DynamicItemsOf(ctx, inst, locale, fl, b, s.ids)
	return source.PageOfItems(items, after, limit), err
}

// publishNodes renders and writes the pages by path of the items evs
// publish behind a dynamic page, where their path is theirs (freeNodes),
// but those of kept (an edit that left their node as it was). It returns
// what it did and the requests it rendered, which the background lane
// renders again with the whole sitemap.
func (p *Publisher) publishNodes(ctx context.Context, site render.Site, evs []eventlog.Event, kept []nodePath, version int64) (outcome, []fetch.Request, error) {
	byLocale := map[string][]int64{}
	var locales, refs []string
	var all []int64
	for _, e := range evs {
		if e.Subject != eventlog.SubjectItem || e.State != eventlog.Published || e.Locale == nil || e.ContentID == nil || e.ReferenceName == nil {
			continue
		}
		if _, ok := byLocale[*e.Locale]; !ok {
			locales = append(locales, *e.Locale)
		}
		byLocale[*e.Locale] = append(byLocale[*e.Locale], *e.ContentID)
		all = append(all, *e.ContentID)
		if ref := strings.ToLower(*e.ReferenceName); !slices.Contains(refs, ref) {
			refs = append(refs, ref)
		}
	}
	if len(all) == 0 {
		return outcome{}, nil, nil
	}
	channels, err := p.content.DynamicChannels(ctx, site.Instance, refs)
	if err != nil || len(channels) == 0 {
		return outcome{}, nil, err
	}
	slices.Sort(all)
	src := &nodeSource{Source: p.reads, reads: p.reads, ids: slices.Compact(all)}
	var reqs []fetch.Request
	for _, loc := range locales {
		for _, ch := range channels {
			rs, err := p.freeNodes(ctx, site, src, loc, ch, byLocale[loc], kept)
			if err != nil {
				return outcome{}, nil, err
			}
			reqs = append(reqs, rs...)
		}
	}
	if len(reqs) == 0 {
		return outcome{}, nil, nil
	}
	out, err := p.publish(ctx, site, reqs, writeOpts{version: version, src: src}, nil)
	return out, reqs, err
}

// nodeID is what freeNodes reads of a flat sitemap's node.
type nodeID struct {
	PageID    int64 `json:"pageID"`
	ContentID int64 `json:"contentID"`
}

// nodeRowsSQL reads the state of the objects at some keys.
const nodeRowsSQL = `SELECT key, etag IS NOT NULL AS live, tags FROM objects WHERE key = ANY($1)`

// freeNodes returns the pages by path, in channel ch and locale loc, of
// the items ids but those of kept, whose path in the sitemap of src is
// theirs in the whole sitemap as far as the objects table tells: each
// ancestor of the node is a static page whose object at that path is the
// page's, and the node's path has no live object or the item's own. When
// one of them is contested, it returns none: a contested path moves the
// nodes after it.
func (p *Publisher) freeNodes(ctx context.Context, site render.Site, src *nodeSource, loc, ch string, ids []int64, kept []nodePath) ([]fetch.Request, error) {
	guid := site.Instance.Guid
	res, err := p.render.RenderFrom(ctx, site, sitemapRequest(guid, loc, ch, false), src)
	if s := problem.KindOf(err).Status(); err != nil && s >= 400 && s < 500 {
		return nil, nil // no such channel or locale any more: the plan has it
	}
	if err != nil {
		return nil, fmt.Errorf("sitemap of %s: %w", ch, err)
	}
	paths, raw, err := sitemapNodes(res.Body)
	if err != nil {
		return nil, fmt.Errorf("sitemap of %s: %w", ch, err)
	}
	nodes := make(map[string]nodeID, len(paths))
	for _, path := range paths {
		var n nodeID
		if err := json.Unmarshal(raw[path], &n); err != nil {
			return nil, fmt.Errorf("sitemap of %s: node %s: %w", ch, path, err)
		}
		nodes[path] = n
	}
	want := map[int64]bool{}
	for _, id := range ids {
		want[id] = !slices.ContainsFunc(kept, func(k nodePath) bool {
			return k.item == id && strings.EqualFold(k.locale, loc) && strings.EqualFold(k.channel, ch)
		})
	}
	type cand struct {
		path string
		req  fetch.Request
	}
	var cands []cand
	keyOf := map[string]string{} // path -> key of its page by path
	for _, path := range paths {
		if !want[nodes[path].ContentID] {
			continue
		}
		req, err := pagePathRequest(guid, loc, ch, path)
		if err != nil {
			return nil, nil // not addressable: the background lane says so
		}
		cands = append(cands, cand{path: path, req: req})
		for a := path; a != ""; a = a[:strings.LastIndexByte(a, '/')] {
			if keyOf[a] != "" {
				continue
			}
			r, err := pagePathRequest(guid, loc, ch, a)
			if err != nil {
				return nil, nil
			}
			keyOf[a] = r.Key()
		}
	}
	if len(cands) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(keyOf))
	for _, k := range keyOf {
		keys = append(keys, k)
	}
	var rows []struct {
		Key  string         `db:"key"`
		Live bool           `db:"live"`
		Tags pq.StringArray `db:"tags"`
	}
	if err := p.db.SelectContext(ctx, &rows, nodeRowsSQL, pq.Array(keys)); err != nil {
		return nil, fmt.Errorf("objects of sitemap nodes: %w", err)
	}
	live := map[string][]string{}
	for _, r := range rows {
		if r.Live {
			live[r.Key] = r.Tags
		}
	}
	var out []fetch.Request
	for _, c := range cands {
		n := nodes[c.path]
		for a := c.path[:strings.LastIndexByte(c.path, '/')]; a != ""; a = a[:strings.LastIndexByte(a, '/')] {
			up, ok := nodes[a]
			tags, isLive := live[keyOf[a]]
			if !ok || up.ContentID != 0 || !isLive || !slices.Contains(tags, qualified(guid, loc, render.PageTag(up.PageID))) {
				p.log.Debug("publisher: page by path left to the background lane", "key", c.req.Key(), "ancestor", a)
				return nil, nil
			}
		}
		if _, taken := live[c.req.Key()]; taken {
			own, err := p.ownNode(ctx, c.req.Key(), n)
			if err != nil {
				return nil, err
			}
			if !own {
				p.log.Debug("publisher: page by path left to the background lane", "key", c.req.Key(), "item", n.ContentID)
				return nil, nil
			}
		}
		out = append(out, c.req)
	}
	return out, nil
}

// ownNode reports whether the stored page by path at key shows the node n
// (the same page and item).
func (p *Publisher) ownNode(ctx context.Context, key string, n nodeID) (bool, error) {
	o, err := p.store.Get(ctx, key)
	if problem.Is(err, problem.NotFound) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", key, err)
	}
	var body struct {
		Node nodeID `json:"sitemapNode"`
	}
	if err := json.Unmarshal(o.Body, &body); err != nil {
		return false, nil
	}
	return body.Node == n, nil
}

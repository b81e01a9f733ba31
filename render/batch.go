package render

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/render/source"
)

// RenderMany renders the answers to reqs as Render renders each, with the
// same bytes and tags, and returns them with their errors in the order of
// reqs. The item graphs of all the item requests of one locale and flavour
// are loaded together, a level of links at a time: one query per level
// whatever the number of items (source.Reader.ItemsByID), where Render
// costs a query per item. Other requests read what they need as Render
// does, but share the items loaded. The publisher renders the objects a
// change touches this way when it renders from Postgres.
//
// The items loaded are held for the call: callers with very many requests
// pass them in chunks (a thousand item requests of depth 1 hold a few
// thousand item copies).
func (r *Renderer) RenderMany(ctx context.Context, site Site, reqs []fetch.Request) ([]Result, []error) {
	results, errs := make([]Result, len(reqs)), make([]error, len(reqs))
	for _, g := range r.batches(ctx, site, reqs) {
		for _, i := range g.reqs {
			results[i], errs[i] = r.render(ctx, site, reqs[i], g.src, nil)
		}
	}
	return results, errs
}

// batchGroup is the requests of one locale and flavour (indexes into the
// requests), and the source they read from; bad is set for the requests
// whose locale or flavour is not one of the site's, which render to their
// error.
type batchGroup struct {
	reqs []int
	src  *batchSource
	bad  bool
}

// batches groups reqs by locale and flavour and loads the item graphs of
// the item requests of each group. A group whose load fails still renders:
// its requests read from Postgres as Render's do, and fail alike.
func (r *Renderer) batches(ctx context.Context, site Site, reqs []fetch.Request) []*batchGroup {
	var groups []*batchGroup
	byKey := map[string]*batchGroup{}
	for i, req := range reqs {
		loc, err := content.ResolveLocale(site.Locales, req.Locale)
		fl := source.Flavour(req.APIType)
		key := loc.Code + "\x00" + string(fl)
		bad := err != nil || (fl != source.FlavourFetch && fl != source.FlavourPreview)
		if bad {
			key = ""
		}
		g, ok := byKey[key]
		if !ok {
			g = &batchGroup{src: newBatchSource(r.reads, site.Instance, loc.Code, fl), bad: bad}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.reqs = append(g.reqs, i)
	}
	for _, g := range groups {
		if g.bad {
			continue
		}
		var roots []int64
		depth := 0
		for _, i := range g.reqs {
			if reqs[i].Kind == fetch.Item {
				roots = append(roots, reqs[i].ContentID)
				depth = max(depth, reqs[i].Depth)
			}
		}
		if len(roots) > 0 {
			// Errors are left to the renders, which load again what they
			// miss.
			g.src.ItemGraph(ctx, g.src.inst, g.src.locale, g.src.fl, roots, depth)
		}
	}
	return groups
}

// batchSource is a Source that answers item graphs and heads from the
// items it loaded, loading what it lacks a level at a time, and the other
// reads from Postgres. It serves the renders of one RenderMany call, one
// after the other.
type batchSource struct {
	Source // the Reader, for the reads other than items
	reads  *source.Reader
	inst   content.Instance
	locale string
	fl     source.Flavour

	items  map[int64]*source.LinkedItem // visible, in full
	heads  map[int64]string             // visible, with their model names
	hidden map[int64]bool               // not visible
	// loads counts the queries the source ran for items and heads.
	loads int
}

func newBatchSource(reads *source.Reader, inst content.Instance, locale string, fl source.Flavour) *batchSource {
	return &batchSource{Source: reads, reads: reads, inst: inst, locale: locale, fl: fl,
		items: map[int64]*source.LinkedItem{}, heads: map[int64]string{}, hidden: map[int64]bool{}}
}

// check refuses reads of another instance, locale or flavour than the
// source's (a render never asks them).
func (b *batchSource) check(inst content.Instance, locale string, fl source.Flavour) error {
	if inst.ID != b.inst.ID || !strings.EqualFold(locale, b.locale) || fl != b.fl {
		return fmt.Errorf("render: a batch of %s/%s/%s read for %s/%s/%s", b.inst.Guid, b.locale, b.fl, inst.Guid, locale, fl)
	}
	return nil
}

// load loads in full those of ids that are not loaded in full and not
// known hidden: one query.
func (b *batchSource) load(ctx context.Context, ids []int64) error {
	var missing []int64
	for _, id := range ids {
		if b.items[id] == nil && !b.hidden[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	b.loads++
	got, err := b.reads.ItemsByID(ctx, b.inst, b.locale, b.fl, missing)
	if err != nil {
		return err
	}
	for i := range got {
		b.items[got[i].Version.ContentID] = &got[i]
	}
	for _, id := range missing {
		if b.items[id] == nil {
			b.hidden[id] = true
		}
	}
	return nil
}

// loadHeads learns which of ids, not known yet, are visible: one query.
func (b *batchSource) loadHeads(ctx context.Context, ids []int64) error {
	var missing []int64
	for _, id := range ids {
		if _, ok := b.heads[id]; !ok && b.items[id] == nil && !b.hidden[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	b.loads++
	got, err := b.reads.ItemHeads(ctx, b.inst, b.locale, b.fl, missing)
	if err != nil {
		return err
	}
	for _, h := range got {
		b.heads[h.ContentID] = h.Model
	}
	for _, id := range missing {
		if _, ok := b.heads[id]; !ok {
			b.hidden[id] = true
		}
	}
	return nil
}

// ItemGraph answers as source.Reader.ItemGraph does, walking the loaded
// items with source.WalkItemGraph and loading each level's unknown items
// in one query.
func (b *batchSource) ItemGraph(ctx context.Context, inst content.Instance, locale string, fl source.Flavour, roots []int64, levels int) ([]source.ItemNode, error) {
	if err := b.check(inst, locale, fl); err != nil || len(roots) == 0 {
		return nil, err
	}
	depth, err := source.WalkItemGraph(roots, levels, func(d int, ids []int64) error {
		if d <= levels {
			return b.load(ctx, ids)
		}
		return b.loadHeads(ctx, ids)
	}, func(id int64) ([]int64, bool) {
		if it := b.items[id]; it != nil {
			return it.Links, true
		}
		return nil, false
	})
	if err != nil {
		return nil, err
	}
	out := make([]source.ItemNode, 0, len(depth))
	for id, d := range depth {
		n := source.ItemNode{Depth: d, Head: d > levels}
		if it := b.items[id]; it != nil {
			n.Version = it.Version
			if n.Head {
				n.Version.ModelFields, n.Version.Fields = nil, nil
			}
		} else if model, ok := b.heads[id]; ok && n.Head {
			n.Version = source.ItemVersion{ContentID: id, Model: model}
		} else {
			continue
		}
		out = append(out, n)
	}
	source.SortItemNodes(out)
	return out, nil
}

// ItemHeads answers as source.Reader.ItemHeads does, from the items and
// heads known, loading the others in one query.
func (b *batchSource) ItemHeads(ctx context.Context, inst content.Instance, locale string, fl source.Flavour, contentIDs []int64) ([]source.ItemHead, error) {
	if err := b.check(inst, locale, fl); err != nil || len(contentIDs) == 0 {
		return nil, err
	}
	if err := b.loadHeads(ctx, contentIDs); err != nil {
		return nil, err
	}
	ids := slices.Clone(contentIDs)
	slices.Sort(ids)
	var out []source.ItemHead
	for _, id := range slices.Compact(ids) {
		if it := b.items[id]; it != nil {
			out = append(out, source.ItemHead{ContentID: id, Model: it.Version.Model})
		} else if model, ok := b.heads[id]; ok {
			out = append(out, source.ItemHead{ContentID: id, Model: model})
		}
	}
	return out, nil
}

package publisher

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/edgecms/edgecms/fetch"
)

// Variants are the objects of requests the publisher does not maintain for
// every instance (requests.go): other depths, page sizes, sorts, filters
// and field selections, which exist in the store only because readers
// asked for them and the origin wrote them back (WriteBack). Anyone with a
// fetch key can make up as many as they like, so what they cost is
// bounded:
//
//   - the origin hands a variant over only from its second read
//     (origin renderCache.handOver);
//   - a batch never renders a variant again: when something it shows
//     changes, its object is deleted and the feed lists its key, like an
//     object whose request now answers 404, so edges drop it and the next
//     read renders it on the origin (and the reads after that write it
//     back). A batch then costs a delete per variant the change touches,
//     once: the next batches find tombstones;
//   - an instance keeps at most Config.MaxVariants live variants; past it,
//     a write-back evicts the least recently read (objects.last_read,
//     migration 018: when a read of the variant last reached the origin).
//
// Republish still renders every live variant, like every other object.

// DefaultMaxVariants is Config.MaxVariants's default.
const DefaultMaxVariants = 1000

// variantTouch is how stale objects.last_read may grow for a variant the
// origin sees read again while the store holds it: the write-back updates
// it at most this often, so reads never cost a write each.
const variantTouch = time.Minute

// variant reports whether r is a variant: a request outside the set the
// publisher maintains for every instance (requests.go).
func variant(r fetch.Request) bool {
	switch r.Kind {
	case fetch.Item:
		return r.Depth != fetch.DefaultDepth || r.ExpandAll
	case fetch.Page:
		return r.Depth != fetch.DefaultPageDepth
	case fetch.PageByPath:
		return r.Depth != fetch.DefaultPageDepth || !r.ExpandAll
	case fetch.List:
		return r.Depth != fetch.DefaultDepth || r.ExpandAll || r.Take != listTake || r.Skip%listTake != 0 ||
			r.Sort != "" || r.Filter != nil || r.Fields != nil
	}
	return false
}

// splitVariants removes from the plan's lanes the variants, and the list
// pages of the maintained form past the end of their container's new
// membership (pages the publisher keeps only while they show an item), and
// returns them: the batch drops their objects instead of rendering them.
func splitVariants(pl *plan) []fetch.Request {
	sizes := map[[2]string]int{}
	for _, m := range pl.members {
		if !m.gone {
			sizes[[2]string{strings.ToLower(m.locale), m.referenceName}] = len(m.ids)
		}
	}
	var drop []fetch.Request
	keep := func(r fetch.Request) bool {
		if variant(r) {
			drop = append(drop, r)
			return false
		}
		if r.Kind == fetch.List && r.Skip > 0 {
			if n, ok := sizes[[2]string{strings.ToLower(r.Locale), r.ReferenceName}]; ok && r.Skip >= n {
				drop = append(drop, r)
				return false
			}
		}
		return true
	}
	pl.reqs = slices.DeleteFunc(pl.reqs, func(r fetch.Request) bool { return !keep(r) })
	pl.later = slices.DeleteFunc(pl.later, func(r fetch.Request) bool { return !keep(r) })
	return drop
}

// dropVariants deletes the objects of reqs of instance guid as render
// number version: each leaves a tombstone, so that no older render brings
// it back, and a change the feed lists, so that edges drop it. It is what
// writing reqs would do if they all answered 404 now.
func (p *Publisher) dropVariants(ctx context.Context, guid string, reqs []fetch.Request, version int64) (outcome, error) {
	var out outcome
	if len(reqs) == 0 {
		return out, nil
	}
	seen := make(map[string]bool, len(reqs))
	rs := make([]*rendered, 0, len(reqs))
	for _, r := range reqs {
		k := r.Key()
		if !seen[k] {
			seen[k] = true
			rs = append(rs, &rendered{req: r, key: k, gone: true})
		}
	}
	err := p.writeAll(ctx, guid, rs, writeOpts{version: version}, &out)
	p.stats.dropped.Add(int64(out.deleted))
	return out, err
}

const (
	// markVariantsSQL makes written-back objects variants, read now.
	markVariantsSQL = `UPDATE objects SET last_read = now() WHERE key = ANY($1) AND etag IS NOT NULL`
	// touchVariantsSQL records a read of live variants, unless one was
	// recorded less than $2 seconds ago.
	touchVariantsSQL = `UPDATE objects SET last_read = now()
		WHERE key = ANY($1) AND last_read IS NOT NULL AND last_read < now() - make_interval(secs => $2)`
	// excessVariantsSQL lists the live variants of an instance past the
	// $2 most recently read.
	excessVariantsSQL = `SELECT request FROM objects
		WHERE guid = $1 AND last_read IS NOT NULL AND etag IS NOT NULL
		ORDER BY last_read DESC, key DESC OFFSET $2`
)

// touchVariants records that the origin saw keys read again while the
// store held them (the write-back's keys that are live already).
func (p *Publisher) touchVariants(ctx context.Context, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	if _, err := p.db.ExecContext(ctx, touchVariantsSQL, pq.Array(keys), p.variantTouch.Seconds()); err != nil {
		return fmt.Errorf("record variant reads: %w", err)
	}
	return nil
}

// keepVariants runs after a write-back of reqs of instance guid, under the
// instance lock: it marks the variants among them read now, and evicts the
// least recently read live variants past Config.MaxVariants. It returns
// how many objects it deleted.
func (p *Publisher) keepVariants(ctx context.Context, guid string, reqs []fetch.Request) (int, error) {
	var keys []string
	for _, r := range reqs {
		if variant(r) {
			keys = append(keys, r.Key())
		}
	}
	if len(keys) == 0 {
		return 0, nil
	}
	if _, err := p.db.ExecContext(ctx, markVariantsSQL, pq.Array(keys)); err != nil {
		return 0, fmt.Errorf("mark variants: %w", err)
	}
	if p.cfg.MaxVariants < 0 {
		return 0, nil
	}
	var excess []string
	if err := p.db.SelectContext(ctx, &excess, excessVariantsSQL, guid, p.cfg.MaxVariants); err != nil {
		return 0, fmt.Errorf("list variants past the cap: %w", err)
	}
	if len(excess) == 0 {
		return 0, nil
	}
	evict := make([]fetch.Request, 0, len(excess))
	for _, s := range excess {
		req, err := parseRequestString(s)
		if err != nil {
			p.log.Warn("publisher: unreadable request in objects table", "request", s, "err", err)
			continue
		}
		evict = append(evict, req)
	}
	// A number of its own: the variants just written carry the
	// write-back's, and a drop must be newer than what it deletes.
	version, err := p.nextVersion(ctx)
	if err != nil {
		return 0, err
	}
	out, err := p.dropVariants(ctx, guid, evict, version)
	if err == nil && out.deleted > 0 {
		p.log.Debug("publisher: variants evicted", "guid", guid, "objects", out.deleted, "max", p.cfg.MaxVariants)
	}
	return out.deleted, err
}

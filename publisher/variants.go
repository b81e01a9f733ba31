package publisher

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/internal/pg"
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
//     changes, its object and its row are deleted and the feed lists its
//     key, so edges drop it and the next read renders it on the origin
//     (and the reads after that write it back). The batch's plan never
//     reads variants (its queries skip rows with a last_read): one
//     statement finds them by tag (dropTouched). A batch then costs a
//     delete per variant the change touches, once: the next batches find
//     none;
//   - an instance keeps at most Config.MaxVariants live variants; past it,
//     a write-back evicts the least recently read (objects.last_read,
//     migration 018: when a read of the variant last reached the origin).
//
// Republish still renders every live variant, like every other object.

// DefaultMaxVariants is Config.MaxVariants's default. The cap bounds what
// one publish pays for variants when every one of them shows what it
// changed: a delete of an object and of a row each, about 0.2 ms of CPU
// in all on the development machine (BenchmarkPublishVariants), so that 200
// keep such a publish within twice its cost without variants.
const DefaultMaxVariants = 200

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
			sizes[[2]string{strings.ToLower(m.locale), m.referenceName}] = m.total
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

const (
	// dropKeysSQL deletes the rows of the live objects of keys $1 older
	// than render number $2, returning their keys and those of their
	// tags among $3 (what a CDN purge needs). No tombstone is left: every
	// writer of a variant renders under the instance's lock with a render
	// number taken then, so none can write what it rendered before this.
	dropKeysSQL = `DELETE FROM objects WHERE key IN (
			SELECT key FROM objects WHERE key = ANY($1) AND etag IS NOT NULL AND rendered_version < $2
			ORDER BY key FOR UPDATE)
		RETURNING key, ARRAY(SELECT unnest(tags) INTERSECT SELECT unnest($3::text[])) AS tags`
	// dropTaggedSQL does the same to the live variants of instance $1
	// that carry any of the qualified tags $3.
	dropTaggedSQL = `DELETE FROM objects WHERE key IN (
			SELECT key FROM objects
			WHERE guid = $1 AND tags && $3::text[] AND last_read IS NOT NULL AND etag IS NOT NULL AND rendered_version < $2
			ORDER BY key FOR UPDATE)
		RETURNING key, ARRAY(SELECT unnest(tags) INTERSECT SELECT unnest($3::text[])) AS tags`
)

// dropVariants deletes the objects of reqs of instance guid, older than
// render number version, from the store and the objects table, and lists
// them in the feed, so that edges drop them.
//
// The changes it returns carry, as their old tags, those among affected:
// what a CDN purge of them needs.
func (p *Publisher) dropVariants(ctx context.Context, guid string, reqs []fetch.Request, version int64, affected map[string]bool) (outcome, error) {
	if len(reqs) == 0 {
		return outcome{}, nil
	}
	keys := make([]string, len(reqs))
	for i, r := range reqs {
		keys[i] = r.Key()
	}
	slices.Sort(keys)
	return p.drop(ctx, guid, dropKeysSQL, pq.Array(slices.Compact(keys)), version, pq.Array(tagList(affected)))
}

func tagList(tags map[string]bool) []string {
	out := make([]string, 0, len(tags))
	for t := range tags {
		out = append(out, t)
	}
	return out
}

// dropTouched deletes, as dropVariants does, the live variants of
// instance guid that show anything of affected (qualified tags): what a
// batch's changes touch. The plan never sees them (its queries skip
// variants), so a batch costs one statement, the deletes and one feed
// entry each, whatever the number of variants.
func (p *Publisher) dropTouched(ctx context.Context, guid string, affected map[string]bool, version int64) (outcome, error) {
	if len(affected) == 0 {
		return outcome{}, nil
	}
	return p.drop(ctx, guid, dropTaggedSQL, guid, version, pq.Array(tagList(affected)))
}

// drop runs a drop statement (dropKeysSQL, dropTaggedSQL: the render
// number is its second parameter, the tags to return its third) and, in
// the same transaction, deletes the objects of the rows it deleted from
// the store and records the changes; a failed delete undoes it all, so
// the next batch tries again.
func (p *Publisher) drop(ctx context.Context, guid, query string, args ...any) (outcome, error) {
	var out outcome
	err := pg.Transact(ctx, p.db, func(tx *sqlx.Tx) error {
		out = outcome{}
		var rows []struct {
			Key  string         `db:"key"`
			Tags pq.StringArray `db:"tags"`
		}
		if err := tx.SelectContext(ctx, &rows, query, args...); err != nil {
			return fmt.Errorf("drop variants: %w", err)
		}
		if len(rows) == 0 {
			return nil
		}
		errs := make([]error, len(rows))
		if err := p.storeEach(ctx, len(rows), func(i int) { errs[i] = p.store.Delete(ctx, rows[i].Key) }); err != nil {
			return err
		}
		keys := make([]string, len(rows))
		for i, r := range rows {
			if errs[i] != nil {
				return fmt.Errorf("store: %w", errs[i])
			}
			keys[i] = r.Key
			out.changed = append(out.changed, change{key: r.Key, oldTags: r.Tags})
		}
		if _, err := tx.ExecContext(ctx, insertChangesSQL, pq.Array(keys)); err != nil {
			return fmt.Errorf("record changes: %w", err)
		}
		out.deleted = len(rows)
		return nil
	})
	if err != nil {
		return outcome{}, fmt.Errorf("drop variants of %s: %w", guid, err)
	}
	p.stats.written.Add(int64(out.deleted))
	p.stats.dropped.Add(int64(out.deleted))
	return out, nil
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
	out, err := p.dropVariants(ctx, guid, evict, version, nil)
	if err == nil && out.deleted > 0 {
		p.log.Debug("publisher: variants evicted", "guid", guid, "objects", out.deleted, "max", p.cfg.MaxVariants)
	}
	return out.deleted, err
}

package publisher

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/edgecms/edgecms/metrics"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/internal/pg"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/render"
	"github.com/edgecms/edgecms/store"
)

// chunkSize is how many objects one transaction locks and writes, and
// chunkWriters how many such transactions run at once.
const (
	chunkSize    = 64
	chunkWriters = 4
)

// rendered is an object rendered for the store, or found gone (the Fetch
// API answers 4xx: unpublished, deleted, never existed).
type rendered struct {
	req  fetch.Request
	key  string
	body []byte
	// file, when set, holds the body instead (spillBody: a large
	// sitemap), size bytes of it.
	file *os.File
	size int64
	etag string
	tags []string // qualified, sorted: the object's tags in the store
	// deps are the tags the objects table records, which find the object
	// when something changes: tags, with a page by path's node tags
	// (render.Result.NodeTags) marked so that no change matches them.
	// The sitemap comparison (sitemap.go) covers those instead.
	deps []string
	// item is render.Result.Item: for a page by path at a dynamic page's
	// node, the item of the node.
	item int64
	gone bool
}

// rowTags returns the tags the objects table records of r.
func (r *rendered) rowTags() []string {
	if r.deps == nil {
		return r.tags
	}
	return r.deps
}

// nodeTagMark marks, in the objects table, a tag a page by path carries
// only through its sitemap node.
const nodeTagMark = "~"

// depsOf returns the deps of a page by path rendered as res: its tags, the
// node tags marked. Only the maintained variant of a path is left to the
// sitemap comparison, which renders exactly those requests; other variants
// (written back) keep every tag.
func depsOf(guid string, req fetch.Request, res render.Result, tags []string) []string {
	if len(res.NodeTags) == 0 || req.Kind != fetch.PageByPath {
		return tags
	}
	if canon, err := pagePathRequest(guid, req.Locale, req.Channel, req.Path); err != nil || canon.Key() != req.Key() {
		return tags
	}
	deps := make([]string, 0, len(res.Tags))
	for _, t := range res.Tags {
		if slices.Contains(res.NodeTags, t) {
			t = nodeTagMark + t
		}
		deps = append(deps, qualified(guid, req.Locale, t))
	}
	slices.Sort(deps)
	return deps
}

// renderOne renders req for the store, reading content from src (nil:
// Postgres).
func (p *Publisher) renderOne(ctx context.Context, site render.Site, req fetch.Request, src render.Source) (*rendered, error) {
	return p.renderWith(ctx, site, req, func(ctx context.Context) (render.Result, *spillBody, error) {
		if src != nil {
			res, err := p.render.RenderFrom(ctx, site, req, src)
			return res, nil, err
		}
		res, err := p.render.Render(ctx, site, req)
		return res, nil, err
	})
}

// wantPaths tells src, when it has a render.SitemapMemo, the pages by path
// among reqs about to be rendered from it: they are then found in one walk
// of their sitemap, where each would walk to its node alone.
func wantPaths(src render.Source, reqs []fetch.Request) {
	if m, ok := src.(interface{ Want([]fetch.Request) }); ok {
		m.Want(reqs)
	}
}

// renderWith makes the rendered object of req from what render gives:
// a result with its body, or a result without and the body spilled.
func (p *Publisher) renderWith(ctx context.Context, site render.Site, req fetch.Request,
	render func(context.Context) (render.Result, *spillBody, error)) (*rendered, error) {
	r := &rendered{req: req, key: req.Key()}
	p.stats.rendered.Add(1)
	res, spilled, err := render(ctx)
	if err != nil {
		if s := problem.KindOf(err).Status(); s >= 400 && s < 500 && ctx.Err() == nil {
			r.gone = true
			return r, nil
		}
		return nil, fmt.Errorf("render %s: %w", r.key, err)
	}
	if spilled != nil {
		r.body, r.file, r.size, r.etag = spilled.buf, spilled.file, spilled.size, store.ETagOf(spilled.hash)
	} else {
		r.body, r.size, r.etag = res.Body, int64(len(res.Body)), store.ETag(res.Body)
	}
	r.tags = qualify(site.Instance.Guid, req.Locale, res.Tags)
	r.deps = depsOf(site.Instance.Guid, req, res, r.tags)
	r.item = res.Item
	return r, nil
}

// writeOpts say how a set of objects is written.
type writeOpts struct {
	// version is the render number, taken before any of the renders read
	// content: a write never replaces a row of a larger version.
	version int64
	// force Puts every rendered object (the store still skips unchanged
	// bytes) and deletes every gone one, even when the objects table says
	// the store holds them already: republish and write-back repair.
	force bool
	// expand adds the page paths of every flat sitemap rendered.
	expand bool
	// src, when set, is what renders read content from instead of
	// Postgres (a snapshot, taken after version).
	src render.Source
	// listing, when set, is what the store held under the instance's
	// fetch prefix before the writes began (a missing key: nothing), so
	// that writes need not ask the store first (store.PutListed). It is
	// trusted only where the objects table agrees with it or knows
	// nothing of the key.
	listing map[string]*store.Info
	// maybe, with expand, are sitemaps to render only if the pages by
	// path of their items, rendered among the requests or kept, changed.
	maybe []maybeSitemap
	kept  []nodePath
	// members, when src is not set, are memberships the renders take list
	// windows from (treeSource).
	members []membership
	// queueFound queues in publish_backlog, in the transaction that
	// writes them, the objects a plan finds now and would not have found
	// before (change.found): a background chunk deletes them from the
	// backlog once it knows no batch planned meanwhile (publishLater),
	// and a crash before that leaves them queued.
	queueFound bool
}

// change is an object whose stored state changed.
type change struct {
	key              string
	req              fetch.Request
	oldTags, newTags []string
	// found is set when a plan looking for the object by tag would find
	// it now where it would not have before the write: the object is new
	// (no live row before), or its row gained a tag.
	found bool
	// queued is, with writeOpts.queueFound, the queue number of a found
	// object in publish_backlog.
	queued int64
}

// gained reports whether now holds a tag that before lacks.
func gained(before, now []string) bool {
	had := make(map[string]bool, len(before))
	for _, t := range before {
		had[t] = true
	}
	for _, t := range now {
		if !had[t] {
			return true
		}
	}
	return false
}

// outcome is what a publish did.
type outcome struct {
	changed []change
	// same are the keys rendered and left as they were, when the write
	// has maybe sitemaps to decide.
	same []string
	// Counts of objects: rendered, Put or deleted in the store, left as
	// they were, and left because a newer render had written them.
	rendered, written, deleted, unchanged, superseded int
}

func (o *outcome) add(x outcome) {
	o.changed = append(o.changed, x.changed...)
	o.same = append(o.same, x.same...)
	o.rendered += x.rendered
	o.written += x.written
	o.deleted += x.deleted
	o.unchanged += x.unchanged
	o.superseded += x.superseded
}

// publish renders reqs and writes them. With expand, the sitemaps among
// them come last, with the pages by path whose node they changed
// (sitemap.go). progress, when not nil, is called with the number of
// objects done after each chunk.
func (p *Publisher) publish(ctx context.Context, site render.Site, reqs []fetch.Request, opts writeOpts, progress func(int)) (outcome, error) {
	seen := make(map[string]bool, len(reqs))
	var todo, maps []fetch.Request
	for _, r := range reqs {
		k := r.Key()
		if seen[k] {
			continue
		}
		seen[k] = true
		if opts.expand && (r.Kind == fetch.SitemapFlat || r.Kind == fetch.SitemapNested) {
			maps = append(maps, r)
		} else {
			todo = append(todo, r)
		}
	}
	if opts.src == nil {
		opts.src = newTreeSource(p.reads, opts.members)
	}
	var out outcome
	paths := slices.Clone(opts.kept) // pages by path at dynamic nodes, when maybe needs them
	var keep func(*rendered)
	if len(opts.maybe) > 0 {
		keep = func(r *rendered) {
			if r.item != 0 {
				paths = append(paths, nodePath{key: r.key, locale: r.req.Locale, channel: r.req.Channel, item: r.item})
			}
		}
	}
	if err := p.renderWrite(ctx, site, todo, opts, &out, keep, progress); err != nil {
		return out, err
	}
	for _, m := range opts.maybe {
		if k := m.req.Key(); !seen[k] && !nodesKept(m, paths, out.same, opts.kept) {
			seen[k] = true
			maps = append(maps, m.req)
		}
	}
	err := p.publishSitemaps(ctx, site, maps, opts, &out, seen, progress)
	return out, err
}

// nodePath is a page by path at a dynamic page's node, rendered.
type nodePath struct {
	key, locale, channel string
	item                 int64
}

// nodesKept reports whether every item of m has a page by path in m's
// locale and channel among paths, and all of them were left as they were
// (same) or not rendered because their node was kept (unrendered).
func nodesKept(m maybeSitemap, paths []nodePath, same []string, unrendered []nodePath) bool {
	kept := make(map[string]bool, len(same)+len(unrendered))
	for _, k := range same {
		kept[k] = true
	}
	for _, n := range unrendered {
		kept[n.key] = true
	}
	for _, id := range m.items {
		found := false
		for _, r := range paths {
			if r.item != id || !strings.EqualFold(r.locale, m.req.Locale) || !strings.EqualFold(r.channel, m.req.Channel) {
				continue
			}
			if !kept[r.key] {
				return false
			}
			found = true
		}
		if !found {
			return false
		}
	}
	return true
}

// pagePaths returns the page-by-path requests of every path in a rendered
// flat sitemap.
func (p *Publisher) pagePaths(site render.Site, flat *rendered) []fetch.Request {
	var paths []string
	err := scanSitemap(flat.bodyReader(), func(path string, _ []byte) error {
		paths = append(paths, path)
		return nil
	})
	if err != nil {
		p.log.Warn("publisher: read sitemap paths", "key", flat.key, "err", err)
		return nil
	}
	var out []fetch.Request
	for _, path := range paths {
		req, err := pagePathRequest(site.Instance.Guid, flat.req.Locale, flat.req.Channel, path)
		if err != nil {
			p.log.Warn("publisher: page path not addressable", "key", flat.key, "path", path, "err", err)
			continue
		}
		out = append(out, req)
	}
	return out
}

// writeAll writes objects already rendered, chunk by chunk.
func (p *Publisher) writeAll(ctx context.Context, guid string, rs []*rendered, opts writeOpts, out *outcome) error {
	for len(rs) > 0 {
		n := min(chunkSize, len(rs))
		o, err := p.writeChunk(ctx, guid, rs[:n], opts)
		if err != nil {
			return err
		}
		out.add(o)
		rs = rs[n:]
	}
	return nil
}

// renderWrite renders reqs with Workers goroutines and writes the results
// in chunks as they come, chunkWriters chunks at a time. It stops at the
// first error.
func (p *Publisher) renderWrite(ctx context.Context, site render.Site, reqs []fetch.Request, opts writeOpts,
	out *outcome, seen func(*rendered), progress func(int)) error {
	if len(reqs) == 0 {
		return nil
	}
	wantPaths(opts.src, reqs)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	jobs := make(chan fetch.Request)
	go func() {
		defer close(jobs)
		for _, r := range reqs {
			select {
			case jobs <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	results := make(chan *rendered, chunkSize)
	var renderers sync.WaitGroup
	for range min(p.cfg.Workers, len(reqs)) {
		renderers.Add(1)
		go func() {
			defer renderers.Done()
			for req := range jobs {
				r, err := p.renderOne(ctx, site, req, opts.src)
				if err != nil {
					cancel(err)
					continue
				}
				select {
				case results <- r:
				case <-ctx.Done():
				}
			}
		}()
	}
	go func() { renderers.Wait(); close(results) }()

	chunks := make(chan []*rendered)
	var mu sync.Mutex
	var writers sync.WaitGroup
	for range chunkWriters {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for c := range chunks {
				if ctx.Err() != nil {
					continue
				}
				o, err := p.writeChunk(ctx, site.Instance.Guid, c, opts)
				if err != nil {
					cancel(err)
					continue
				}
				mu.Lock()
				out.add(o)
				done := out.rendered
				mu.Unlock()
				if progress != nil {
					progress(done)
				}
				if p.afterChunk != nil {
					p.afterChunk()
				}
			}
		}()
	}
	var buf []*rendered
	for r := range results {
		if seen != nil {
			seen(r)
		}
		buf = append(buf, r)
		if len(buf) == chunkSize {
			chunks <- buf
			buf = nil
		}
	}
	if len(buf) > 0 {
		chunks <- buf
	}
	close(chunks)
	writers.Wait()
	return context.Cause(ctx)
}

// rowState is what the objects table says of a key, locked for a write.
type rowState struct {
	Key     string         `db:"key"`
	ETag    sql.NullString `db:"etag"`
	Tags    pq.StringArray `db:"tags"`
	Version int64          `db:"rendered_version"`
}

const (
	// lockRowsSQL locks the rows of a chunk's keys that exist, in key
	// order. Writers of one instance are serialised by the instance lock
	// already; the row locks and the render numbers keep the rows right
	// even for a writer that lost that lock.
	takeXIDSQL  = `SELECT pg_current_xact_id()`
	lockRowsSQL = `SELECT key, etag, tags, rendered_version FROM objects WHERE key = ANY($1) ORDER BY key FOR UPDATE`
	// upsertRowsSQL records the new state of changed objects, unless a
	// newer render recorded its own meanwhile.
	upsertRowsSQL = `INSERT INTO objects (key, guid, locale, request, list_of, etag, tags, rendered_version)
		SELECT t.key, $1, t.locale, t.request, nullif(t.list_of, ''), nullif(t.etag, ''), string_to_array(t.tags, ' '), $2
		FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
			AS t(key, locale, request, list_of, etag, tags)
		ORDER BY t.key
		ON CONFLICT (key) DO UPDATE SET etag = excluded.etag, tags = excluded.tags, request = excluded.request,
			list_of = excluded.list_of, rendered_version = excluded.rendered_version, updated_at = now()
		WHERE objects.rendered_version < excluded.rendered_version`
	// bumpRowsSQL records the render number of unchanged objects: an
	// update of an unindexed column, which Postgres makes without
	// touching the indexes.
	bumpRowsSQL      = `UPDATE objects SET rendered_version = $1 WHERE key = ANY($2) AND rendered_version < $1`
	insertChangesSQL = `INSERT INTO object_changes (key) SELECT unnest($1::text[])`
)

// writeChunk writes a chunk of rendered objects of instance guid: in one
// transaction it locks their rows, skips those a newer render wrote, Puts
// or deletes those whose stored state differs (all of them with force),
// and records the new state and the changed keys.
func (p *Publisher) writeChunk(ctx context.Context, guid string, rs []*rendered, opts writeOpts) (outcome, error) {
	if p.beforeWrite != nil {
		p.beforeWrite(rs)
	}
	rs = slices.Clone(rs)
	sort.Slice(rs, func(i, j int) bool { return rs[i].key < rs[j].key })
	var out outcome
	err := pg.Transact(ctx, p.db, func(tx *sqlx.Tx) error {
		out = outcome{rendered: len(rs)}
		keys := make([]string, len(rs))
		for i, r := range rs {
			keys[i] = r.key
		}
		// The transaction has an id before it Puts anything, so that a
		// republish listing the store meanwhile knows to wait for it
		// (deleteUnknown).
		if _, err := tx.ExecContext(ctx, takeXIDSQL); err != nil {
			return fmt.Errorf("write objects: %w", err)
		}
		var locked []rowState
		if err := tx.SelectContext(ctx, &locked, lockRowsSQL, pq.Array(keys)); err != nil {
			return fmt.Errorf("lock objects: %w", err)
		}
		rows := make(map[string]rowState, len(locked))
		for _, row := range locked {
			rows[row.Key] = row
		}

		type op struct {
			r       *rendered
			row     rowState
			store   bool // Put or Delete
			changed bool
			err     error
		}
		ops := make([]*op, 0, len(rs))
		for _, r := range rs {
			row := rows[r.key]
			if row.Version >= opts.version {
				out.superseded++
				continue
			}
			o := &op{r: r, row: row}
			if r.gone {
				o.changed = row.ETag.Valid
				o.store = o.changed || opts.force
			} else {
				same := row.ETag.Valid && row.ETag.String == r.etag && slices.Equal([]string(row.Tags), r.rowTags())
				o.changed = !same
				o.store = !same || opts.force
			}
			ops = append(ops, o)
		}
		var stored []*op
		for _, o := range ops {
			if o.store {
				stored = append(stored, o)
			}
		}
		err := p.storeEach(ctx, len(stored), func(i int) {
			o := stored[i]
			if o.r.gone {
				o.err = p.store.Delete(ctx, o.r.key)
				return
			}
			obj := store.Object{Key: o.r.key, ContentType: delivery.ContentType, CacheControl: delivery.FetchCacheControl, Tags: o.r.tags}
			// When the table knows nothing of the key, or agrees
			// with the render, what the listing says stands.
			useListing := opts.listing != nil && (o.row.Key == "" || !o.changed)
			written, err := o.r.put(ctx, p.store, obj, opts.listing[o.r.key], useListing)
			o.err = err
			o.changed = o.changed || written
			if written {
				metrics.PublisherObjectsWritten.Inc()
			}
		})
		if err != nil {
			return err
		}

		var u struct{ keys, locales, requests, lists, etags, tags []string }
		var changed, same []string
		for _, o := range ops {
			if o.err != nil {
				return fmt.Errorf("store: %w", o.err)
			}
			if !o.changed {
				same = append(same, o.r.key)
				out.unchanged++
				if len(opts.maybe) > 0 {
					out.same = append(out.same, o.r.key)
				}
				continue
			}
			u.keys = append(u.keys, o.r.key)
			u.locales = append(u.locales, strings.ToLower(o.r.req.Locale))
			u.requests = append(u.requests, requestString(o.r.req))
			u.lists = append(u.lists, listOf(o.r.req))
			u.etags = append(u.etags, o.r.etag)
			u.tags = append(u.tags, strings.Join(o.r.rowTags(), " "))
			changed = append(changed, o.r.key)
			out.changed = append(out.changed, change{key: o.r.key, req: o.r.req, oldTags: o.row.Tags, newTags: o.r.rowTags(),
				found: !o.r.gone && (!o.row.ETag.Valid || gained(o.row.Tags, o.r.rowTags()))})
			if o.r.gone {
				out.deleted++
			} else {
				out.written++
			}
		}
		if len(u.keys) > 0 {
			if _, err := tx.ExecContext(ctx, upsertRowsSQL, guid, opts.version, pq.Array(u.keys), pq.Array(u.locales),
				pq.Array(u.requests), pq.Array(u.lists), pq.Array(u.etags), pq.Array(u.tags)); err != nil {
				return fmt.Errorf("record objects: %w", err)
			}
		}
		if len(same) > 0 {
			if _, err := tx.ExecContext(ctx, bumpRowsSQL, opts.version, pq.Array(same)); err != nil {
				return fmt.Errorf("record objects: %w", err)
			}
		}
		if len(changed) > 0 {
			if _, err := tx.ExecContext(ctx, insertChangesSQL, pq.Array(changed)); err != nil {
				return fmt.Errorf("record changes: %w", err)
			}
		}
		if opts.queueFound {
			return queueFound(ctx, tx, guid, out.changed)
		}
		return nil
	})
	if err != nil {
		return outcome{}, fmt.Errorf("write objects of %s: %w", guid, err)
	}
	p.stats.written.Add(int64(out.written + out.deleted))
	return out, nil
}

// queueFoundSQL is queueBacklogSQL, giving the queue numbers.
const queueFoundSQL = queueBacklogSQL + ` RETURNING key, queued`

// queueFound queues the found changes of a chunk of instance guid in the
// backlog, in key order (as handOff does, so that the two never wait for
// each other's rows in a cycle), and records their queue numbers.
func queueFound(ctx context.Context, tx *sqlx.Tx, guid string, changes []change) error {
	var keys, guids, reqs []string
	at := map[string]int{}
	for i, c := range changes {
		if c.found {
			keys, guids, reqs = append(keys, c.key), append(guids, guid), append(reqs, requestString(c.req))
			at[c.key] = i
		}
	}
	if len(keys) == 0 {
		return nil
	}
	var rows []struct {
		Key    string `db:"key"`
		Queued int64  `db:"queued"`
	}
	if err := tx.SelectContext(ctx, &rows, queueFoundSQL, pq.Array(keys), pq.Array(guids), pq.Array(reqs)); err != nil {
		return fmt.Errorf("queue backlog: %w", err)
	}
	for _, r := range rows {
		changes[at[r.Key]].queued = r.Queued
	}
	return nil
}

// nextVersion takes a render number.
func (p *Publisher) nextVersion(ctx context.Context) (int64, error) {
	var v int64
	if err := p.db.GetContext(ctx, &v, `SELECT nextval('publisher_renders')`); err != nil {
		return 0, fmt.Errorf("render number: %w", err)
	}
	return v, nil
}

// storeEach calls do(i) for each i below n, concurrently, with no more
// store calls in flight across the publisher than sem holds, and waits for
// every call it started. It returns ctx's error when ctx ends before all
// have started.
func (p *Publisher) storeEach(ctx context.Context, n int, do func(i int)) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := range n {
		select {
		case p.sem <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer func() { <-p.sem; wg.Done() }()
			do(i)
		}()
	}
	return nil
}

package publisher

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
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
	etag string
	tags []string // qualified, sorted
	gone bool
}

// renderOne renders req for the store, reading content from src (nil:
// Postgres).
func (p *Publisher) renderOne(ctx context.Context, site render.Site, req fetch.Request, src render.Source) (*rendered, error) {
	r := &rendered{req: req, key: req.Key()}
	var res render.Result
	var err error
	if src != nil {
		res, err = p.render.RenderFrom(ctx, site, req, src)
	} else {
		res, err = p.render.Render(ctx, site, req)
	}
	if err != nil {
		if s := problem.KindOf(err).Status(); s >= 400 && s < 500 && ctx.Err() == nil {
			r.gone = true
			return r, nil
		}
		return nil, fmt.Errorf("render %s: %w", r.key, err)
	}
	r.body = res.Body
	r.etag = store.ETag(res.Body)
	r.tags = qualify(site.Instance.Guid, req.Locale, res.Tags)
	return r, nil
}

// writeOpts say how a set of objects is written.
type writeOpts struct {
	// seq is the render number, taken before any of the renders read
	// content.
	seq int64
	// force Puts every rendered object (the store still skips unchanged
	// bytes) and deletes every gone one, even when the objects table says
	// the store holds them already: republish and write-back repair.
	force bool
	// expand adds the page paths of every flat sitemap rendered.
	expand bool
	// src, when set, is what renders read content from instead of
	// Postgres (a snapshot, taken after seq).
	src render.Source
	// listing, when set, is what the store held under the instance's
	// fetch prefix before the writes began (a missing key: nothing), so
	// that writes need not ask the store first (store.PutListed). It is
	// trusted only where the objects table agrees with it or knows
	// nothing of the key.
	listing map[string]*store.Info
}

// change is an object whose stored state changed.
type change struct {
	key              string
	oldTags, newTags []string
}

// outcome is what a publish did.
type outcome struct {
	changed []change
	// Counts of objects: rendered, Put or deleted in the store, left as
	// they were, and left because a newer render had written them.
	rendered, written, deleted, unchanged, superseded int
}

func (o *outcome) add(x outcome) {
	o.changed = append(o.changed, x.changed...)
	o.rendered += x.rendered
	o.written += x.written
	o.deleted += x.deleted
	o.unchanged += x.unchanged
	o.superseded += x.superseded
}

// publish renders reqs and writes them, then (with expand) the page paths
// of the flat sitemaps among them. progress, when not nil, is called with
// the number of objects done after each chunk.
func (p *Publisher) publish(ctx context.Context, site render.Site, reqs []fetch.Request, opts writeOpts, progress func(int)) (outcome, error) {
	seen := make(map[string]bool, len(reqs))
	var todo []fetch.Request
	for _, r := range reqs {
		if k := r.Key(); !seen[k] {
			seen[k] = true
			todo = append(todo, r)
		}
	}
	var out outcome
	var flats []*rendered
	keepFlat := func(r *rendered) {
		if opts.expand && r.req.Kind == fetch.SitemapFlat && !r.gone {
			flats = append(flats, r)
		}
	}
	if err := p.renderWrite(ctx, site, todo, opts, &out, keepFlat, progress); err != nil {
		return out, err
	}
	if len(flats) == 0 {
		return out, nil
	}
	var more []fetch.Request
	for _, f := range flats {
		for _, req := range p.pagePaths(site, f) {
			if k := req.Key(); !seen[k] {
				seen[k] = true
				more = append(more, req)
			}
		}
	}
	err := p.renderWrite(ctx, site, more, opts, &out, nil, progress)
	return out, err
}

// pagePaths returns the page-by-path requests of every path in a rendered
// flat sitemap.
func (p *Publisher) pagePaths(site render.Site, flat *rendered) []fetch.Request {
	paths, err := sitemapPaths(flat.body)
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

// sitemapPaths returns the keys of a flat sitemap object, in order.
func sitemapPaths(body []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("flat sitemap is not an object")
	}
	var paths []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		paths = append(paths, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return paths, nil
}

// renderWrite renders reqs with Workers goroutines and writes the results
// in chunks as they come, chunkWriters chunks at a time. It stops at the
// first error.
func (p *Publisher) renderWrite(ctx context.Context, site render.Site, reqs []fetch.Request, opts writeOpts,
	out *outcome, seen func(*rendered), progress func(int)) error {
	if len(reqs) == 0 {
		return nil
	}
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
	rs = slices.Clone(rs)
	sort.Slice(rs, func(i, j int) bool { return rs[i].key < rs[j].key })
	var out outcome
	err := pg.Transact(ctx, p.db, func(tx *sqlx.Tx) error {
		out = outcome{rendered: len(rs)}
		keys := make([]string, len(rs))
		for i, r := range rs {
			keys[i] = r.key
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
			if row.Version >= opts.seq {
				out.superseded++
				continue
			}
			o := &op{r: r, row: row}
			if r.gone {
				o.changed = row.ETag.Valid
				o.store = o.changed || opts.force
			} else {
				same := row.ETag.Valid && row.ETag.String == r.etag && slices.Equal([]string(row.Tags), r.tags)
				o.changed = !same
				o.store = !same || opts.force
			}
			ops = append(ops, o)
		}
		var wg sync.WaitGroup
		for _, o := range ops {
			if !o.store {
				continue
			}
			select {
			case p.sem <- struct{}{}:
			case <-ctx.Done():
				wg.Wait()
				return ctx.Err()
			}
			wg.Add(1)
			go func() {
				defer func() { <-p.sem; wg.Done() }()
				if o.r.gone {
					o.err = p.store.Delete(ctx, o.r.key)
					return
				}
				obj := store.Object{Key: o.r.key, Body: o.r.body, ContentType: delivery.ContentType, CacheControl: delivery.FetchCacheControl, Tags: o.r.tags}
				var written bool
				var err error
				if opts.listing != nil && (o.row.Key == "" || !o.changed) {
					// The table knows nothing of the key, or agrees
					// with the render: what the listing says stands.
					written, err = p.store.PutListed(ctx, obj, opts.listing[o.r.key])
				} else {
					written, err = p.store.Put(ctx, obj)
				}
				o.err = err
				o.changed = o.changed || written
			}()
		}
		wg.Wait()

		var u struct{ keys, locales, requests, lists, etags, tags []string }
		var changed, same []string
		for _, o := range ops {
			if o.err != nil {
				return fmt.Errorf("store: %w", o.err)
			}
			if !o.changed {
				same = append(same, o.r.key)
				out.unchanged++
				continue
			}
			u.keys = append(u.keys, o.r.key)
			u.locales = append(u.locales, strings.ToLower(o.r.req.Locale))
			u.requests = append(u.requests, requestString(o.r.req))
			u.lists = append(u.lists, listOf(o.r.req))
			u.etags = append(u.etags, o.r.etag)
			u.tags = append(u.tags, strings.Join(o.r.tags, " "))
			changed = append(changed, o.r.key)
			out.changed = append(out.changed, change{key: o.r.key, oldTags: o.row.Tags, newTags: o.r.tags})
			if o.r.gone {
				out.deleted++
			} else {
				out.written++
			}
		}
		if len(u.keys) > 0 {
			if _, err := tx.ExecContext(ctx, upsertRowsSQL, guid, opts.seq, pq.Array(u.keys), pq.Array(u.locales),
				pq.Array(u.requests), pq.Array(u.lists), pq.Array(u.etags), pq.Array(u.tags)); err != nil {
				return fmt.Errorf("record objects: %w", err)
			}
		}
		if len(same) > 0 {
			if _, err := tx.ExecContext(ctx, bumpRowsSQL, opts.seq, pq.Array(same)); err != nil {
				return fmt.Errorf("record objects: %w", err)
			}
		}
		if len(changed) > 0 {
			if _, err := tx.ExecContext(ctx, insertChangesSQL, pq.Array(changed)); err != nil {
				return fmt.Errorf("record changes: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return outcome{}, fmt.Errorf("write objects of %s: %w", guid, err)
	}
	return out, nil
}

// nextSeq takes a render number.
func (p *Publisher) nextSeq(ctx context.Context) (int64, error) {
	var seq int64
	if err := p.db.GetContext(ctx, &seq, `SELECT nextval('publisher_renders')`); err != nil {
		return 0, fmt.Errorf("render number: %w", err)
	}
	return seq, nil
}

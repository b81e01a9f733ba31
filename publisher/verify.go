package publisher

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/render"
	"github.com/edgecms/edgecms/render/source"
	"github.com/edgecms/edgecms/store"
)

// The problems Verify finds with an object.
const (
	// Differs: the store holds the object with other bytes or metadata
	// (content type, cache control, tags) than a fresh render.
	Differs = "differs"
	// Missing: a fresh render answers the request, and the store lacks it.
	Missing = "missing"
	// Extra: the store holds an object that no render would write (its
	// request answers 4xx now, or the publisher knows no request for it).
	Extra = "extra"
)

// Mismatch is one object on which the store and a fresh render disagree.
type Mismatch struct {
	// Key is the object's key in the store.
	Key string `json:"key"`
	// Problem is Differs, Missing or Extra.
	Problem string `json:"problem"`
	// Request is the Fetch API request the object answers; empty for an
	// extra object whose request nothing knows.
	Request string `json:"request,omitempty"`
	// Detail says what differs, or why the object is extra.
	Detail string `json:"detail,omitempty"`
}

// Verification is what Verify found for one instance.
type Verification struct {
	// Guid is the instance's guid.
	Guid string `json:"guid"`
	// Rendered is how many requests were rendered; Stored how many objects
	// the store holds under the instance's fetch prefix.
	Rendered int `json:"rendered"`
	Stored   int `json:"stored"`
	// Mismatches lists the objects that differ, are missing or are extra,
	// by key.
	Mismatches []Mismatch `json:"mismatches"`
}

// Count returns how many mismatches have problem.
func (v Verification) Count(problem string) int {
	n := 0
	for _, m := range v.Mismatches {
		if m.Problem == problem {
			n++
		}
	}
	return n
}

// Verify compares every object of instance guid in the store with what the
// publisher would write now, and changes nothing. The requests are those a
// Republish renders: the objects the publisher maintains for the published
// content, the variants the objects table knows (written back by the
// origin), and the page paths of the sitemaps. Each is rendered afresh,
// from a snapshot of each locale's published content where it fits in
// memory, and compared with the store's listing of the instance's fetch
// prefix: body hash and size, content type, cache control and tags. A
// stored object that no request renders is extra.
//
// The answer is exact only at a quiescent point: while the publisher has
// events to handle, the objects they affect show as differences. progress,
// when not nil, is called with the requests rendered and the total.
func (p *Publisher) Verify(ctx context.Context, guid string, progress func(done, total int)) (Verification, error) {
	site, err := render.LoadSite(ctx, p.content, guid)
	if err != nil {
		return Verification{}, fmt.Errorf("verify %s: %w", guid, err)
	}
	guid = site.Instance.Guid
	v := Verification{Guid: guid, Mismatches: []Mismatch{}}
	reqs, _, err := p.maintained(ctx, site)
	if err != nil {
		return v, fmt.Errorf("verify %s: %w", guid, err)
	}
	var known []string
	if err := p.db.SelectContext(ctx, &known, instanceObjectsSQL, guid); err != nil {
		return v, fmt.Errorf("verify %s: %w", guid, err)
	}
	for _, s := range known {
		req, err := parseRequestString(s)
		if err != nil {
			return v, fmt.Errorf("verify %s: objects table: %w", guid, err)
		}
		reqs = append(reqs, req)
	}
	for _, r := range reqs {
		if r.Kind != fetch.SitemapFlat {
			continue
		}
		flat, err := p.renderSpilled(ctx, site, r, nil)
		if err != nil {
			return v, fmt.Errorf("verify %s: %w", guid, err)
		}
		if !flat.gone {
			reqs = append(reqs, p.pagePaths(site, flat)...)
		}
		flat.drop()
	}
	seen := map[string]bool{}
	todo := reqs[:0]
	for _, r := range reqs {
		if k := r.Key(); !seen[k] {
			seen[k] = true
			todo = append(todo, r)
		}
	}
	listing := map[string]store.Info{}
	err = p.store.List(ctx, guid+"/"+fetch.Fetch+"/", func(info store.Info) error {
		listing[info.Key] = info
		return nil
	})
	if err != nil {
		return v, fmt.Errorf("verify %s: list the store: %w", guid, err)
	}
	v.Rendered, v.Stored = len(todo), len(listing)

	var mu sync.Mutex
	done := 0
	report := func(ms ...Mismatch) {
		mu.Lock()
		defer mu.Unlock()
		v.Mismatches = append(v.Mismatches, ms...)
		done++
		if progress != nil {
			progress(done, len(todo))
		}
	}
	if progress != nil {
		progress(0, len(todo))
	}
	for _, group := range byLocale(site, todo) {
		if err := p.verifyLocale(ctx, site, group, listing, report); err != nil {
			return v, fmt.Errorf("verify %s: %w", guid, err)
		}
	}
	for key := range listing {
		if !seen[key] {
			v.Mismatches = append(v.Mismatches, Mismatch{Key: key, Problem: Extra, Detail: "no request of the instance renders this key"})
		}
	}
	slices.SortFunc(v.Mismatches, func(a, b Mismatch) int { return strings.Compare(a.Key, b.Key) })
	return v, nil
}

// verifyChunk is how many requests verify renders from one tree source.
const verifyChunk = 4096

// verifyLocale renders the requests of one locale with the publisher's
// workers and reports each through report (with the mismatch it found, if
// any).
func (p *Publisher) verifyLocale(ctx context.Context, site render.Site, group localeRequests,
	listing map[string]store.Info, report func(...Mismatch)) error {
	if len(group.reqs) == 0 {
		return nil
	}
	var base render.Source = p.reads
	if group.locale != "" {
		snap, err := source.LoadSnapshot(ctx, p.content, site.Instance, group.locale, p.cfg.SnapshotBytes)
		switch {
		case errors.Is(err, source.ErrSnapshotTooLarge): // render from Postgres
		case err != nil:
			return err
		default:
			base = snap
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// A tree source finds the nodes of the pages by path it is told of in
	// one walk of their sitemap, and holds them: one per chunk of
	// requests, so that N pages by path walk N/verifyChunk times, holding
	// a chunk's nodes.
	type job struct {
		req fetch.Request
		src *treeSource
	}
	jobs := make(chan job)
	var wg sync.WaitGroup
	for range min(p.cfg.Workers, len(group.reqs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				r, err := p.renderOne(ctx, site, j.req, j.src)
				if err != nil {
					cancel(err)
					continue
				}
				if m, ok := compareListed(r, listing); ok {
					report(m)
				} else {
					report()
				}
			}
		}()
	}
	var src *treeSource
feed:
	for i, r := range group.reqs {
		if i%verifyChunk == 0 {
			src = newTreeSource(base, nil)
			src.Want(group.reqs[i:min(i+verifyChunk, len(group.reqs))])
		}
		select {
		case jobs <- job{r, src}:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	return context.Cause(ctx)
}

// compareListed compares a fresh render with the store's listing, and
// returns the mismatch if there is one.
func compareListed(r *rendered, listing map[string]store.Info) (Mismatch, bool) {
	m := Mismatch{Key: r.key, Request: requestString(r.req)}
	stored, ok := listing[r.key]
	switch {
	case r.gone && ok:
		m.Problem, m.Detail = Extra, "the Fetch API answers this request with an error now"
		return m, true
	case r.gone:
		return m, false
	case !ok:
		m.Problem = Missing
		return m, true
	}
	var diff []string
	if stored.ETag != r.etag || stored.Size != int64(len(r.body)) {
		diff = append(diff, fmt.Sprintf("body (stored %s, %d bytes; rendered %s, %d bytes)", stored.ETag, stored.Size, r.etag, len(r.body)))
	}
	if stored.ContentType != delivery.ContentType {
		diff = append(diff, fmt.Sprintf("content type %q", stored.ContentType))
	}
	if stored.CacheControl != delivery.FetchCacheControl {
		diff = append(diff, fmt.Sprintf("cache control %q", stored.CacheControl))
	}
	want := slices.Compact(slices.Sorted(slices.Values(r.tags)))
	if !slices.Equal(stored.Tags, want) {
		diff = append(diff, fmt.Sprintf("tags (stored %v; rendered %v)", stored.Tags, want))
	}
	if len(diff) == 0 {
		return m, false
	}
	m.Problem, m.Detail = Differs, strings.Join(diff, "; ")
	return m, true
}

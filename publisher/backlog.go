package publisher

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/render"
)

// The background lane renders what batches queued in publish_backlog
// (handoff.go): list pages past the first whose only change is their
// totalCount, sitemaps and pages by path. It takes backlogChunk requests
// at a time, oldest first, each chunk with a render number of its own,
// and renders and writes them without the instance's lock (publishLater),
// so that no batch of events waits for a chunk. One publisher at a time
// works the backlog (a session lock), so two never render the same chunk.

// backlogChunk is how many requests one background chunk renders, and
// treeChunk how many sitemaps and pages by path it may render besides:
// those share one build of their channel's sitemap per chunk (treeSource),
// which behind a dynamic page of N items reads the N items, so a change of
// the dynamic page itself (N pages by path) costs N/treeChunk reads of it,
// not N/backlogChunk.
const (
	backlogChunk = 64
	treeChunk    = 2048
)

const (
	nextBacklogSQL = `SELECT key, guid, request, queued FROM publish_backlog ORDER BY queued LIMIT $1`
	doneBacklogSQL = `DELETE FROM publish_backlog b USING unnest($1::text[], $2::bigint[]) AS t(key, queued)
		WHERE b.key = t.key AND b.queued = t.queued`
	backlogWaitingSQL = `SELECT EXISTS (SELECT 1 FROM publish_backlog)`
)

// backlogRow is a request queued in publish_backlog, by key and queue
// number: deleted by those, so that one queued again meanwhile stays.
type backlogRow struct {
	Key    string `db:"key"`
	Queued int64  `db:"queued"`
}

// runBacklog renders the next chunk of the backlog, if this publisher can
// take the backlog (with wait, it waits for it), and returns how many
// requests it took. Without wait, it leaves sitemaps and pages by path
// (treeWork) queued while Config.SitemapEvery has not passed since it last
// rendered some, and then says how long to wait for them (after).
func (p *Publisher) runBacklog(ctx context.Context, wait bool) (n int, after time.Duration, _ error) {
	l, err := p.acquire(ctx, wait, lockSpace, backlogLock, "")
	if err != nil || l == nil {
		return 0, 0, err
	}
	defer l.release()
	var rows []struct {
		backlogRow
		Guid    string `db:"guid"`
		Request string `db:"request"`
	}
	if err := p.db.SelectContext(ctx, &rows, nextBacklogSQL, treeChunk); err != nil || len(rows) == 0 {
		if err != nil {
			err = fmt.Errorf("read backlog: %w", err)
		}
		return 0, 0, err
	}
	var order []string
	byInstance := map[string][]fetch.Request{}
	taken, tree, others := rows[:0], false, 0
	start := time.Now()
	since := start.Sub(time.Unix(0, p.lastTreeWork.Load()))
	every := p.treeEvery()
	treeDue := wait || since >= every
	for _, r := range rows {
		req, err := parseRequestString(r.Request)
		switch {
		case err == nil && treeWork(req):
			if !treeDue {
				after = every - since
				continue
			}
			tree = true
		case others == backlogChunk:
			continue
		default:
			others++
		}
		taken = append(taken, r)
		if err != nil {
			p.log.Warn("publisher: unreadable request in backlog", "request", r.Request, "err", err)
			continue
		}
		if _, ok := byInstance[r.Guid]; !ok {
			order = append(order, r.Guid)
		}
		byInstance[r.Guid] = append(byInstance[r.Guid], req)
	}
	changed := 0
	var purge []string
	done := make([]backlogRow, len(taken))
	for i, r := range taken {
		done[i] = r.backlogRow
	}
	for _, guid := range order {
		out, found, err := p.publishLater(ctx, guid, byInstance[guid])
		if err != nil {
			return 0, 0, err
		}
		done = append(done, found...)
		changed += len(out.changed)
		for _, c := range out.changed {
			purge = append(purge, p.backlogPurge(guid, c)...)
		}
	}
	if tree {
		end := time.Now()
		p.lastTreeBuild.Store(int64(end.Sub(start)))
		p.lastTreeWork.Store(end.UnixNano())
	}
	keys, queued := make([]string, len(done)), make([]int64, len(done))
	for i, r := range done {
		keys[i], queued[i] = r.Key, r.Queued
	}
	if _, err := p.db.ExecContext(ctx, doneBacklogSQL, pq.Array(keys), pq.Array(queued)); err != nil {
		return 0, 0, fmt.Errorf("backlog done: %w", err)
	}
	if changed > 0 {
		p.requestFlush()
		p.purges.add(purge)
	}
	return len(taken), after, nil
}

// treeEvery is how long the background lane waits, after a chunk that
// rendered sitemaps or pages by path, before it renders such work again:
// Config.SitemapEvery, or as long as that chunk took if it took longer.
// So at most half of the lane's time goes to building sitemaps, whatever
// their size: behind a dynamic page of 100,000 items a build takes
// seconds of CPU that the renders of the next batches share.
func (p *Publisher) treeEvery() time.Duration {
	return max(p.cfg.SitemapEvery, time.Duration(p.lastTreeBuild.Load()))
}

// treeWork tells whether req builds its channel's whole sitemap: a
// sitemap, or a page by path. Behind a dynamic page of N items that is a
// read of N items and seconds of CPU, which the renders of the next
// batches share; so the background lane does such work at most once per
// treeEvery, for everything queued by then (a key is queued once,
// however many batches ask for it).
func treeWork(req fetch.Request) bool {
	switch req.Kind {
	case fetch.SitemapFlat, fetch.SitemapNested, fetch.PageByPath:
		return true
	}
	return false
}

// backlogPurge returns the tags to purge from a CDN for an object the
// background lane changed: those the batch that queued it found it by
// (laterPurges, its event's tags it carried), and for a list page its
// container. A sitemap or a page by path queued by a publisher that has
// gone since is purged by its channel, which a CDN holds them under, when
// it existed before.
func (p *Publisher) backlogPurge(guid string, c change) []string {
	out := p.laterPurges.take(c.key)
	if ref := listOf(c.req); ref != "" {
		out = append(out, qualified(guid, c.req.Locale, render.ContainerTag(ref)))
	} else if out == nil && len(c.oldTags) > 0 {
		switch c.req.Kind {
		case fetch.SitemapFlat, fetch.SitemapNested, fetch.PageByPath:
			out = append(out, qualified(guid, c.req.Locale, render.ChannelTag(c.req.Channel)))
		}
	}
	return out
}

// laterPurges holds, by key, the CDN purge of objects a batch left to the
// background lane, until the lane writes them: purging them with the
// batch would let a CDN fetch the old object again from an edge. It lives
// in memory: a lost one (the publisher stopped) leaves the fallback of
// backlogPurge, and a CDN copy expires after s-maxage anyway.
type laterPurges struct {
	mu   sync.Mutex
	tags map[string][]string
}

func (q *laterPurges) add(key string, tags []string) {
	if len(tags) == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.tags == nil {
		q.tags = map[string][]string{}
	}
	q.tags[key] = append(q.tags[key], tags...)
}

func (q *laterPurges) take(key string) []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	t := q.tags[key]
	delete(q.tags, key)
	return t
}

// publishLater renders and writes reqs of instance guid. The renders and
// the store writes (behind a dynamic page of 100,000 items: a read of the
// items and two sitemaps of some 22 MB) run without the instance lock, so
// that batches never wait for them; the lock is held only to take the
// render number (lockedVersion) and, when the chunk made objects a plan
// finds by tag that it would not have found before, to ask whether a batch
// planned meanwhile (plannedSince). Such a batch may have looked for those
// objects before their rows existed, and changed what they show after
// this chunk read it. So they are queued in the backlog as they are
// written (writeOpts.queueFound), and left there, for the next chunk to
// render with a number larger than that batch's; otherwise publishLater
// returns them (found) for runBacklog to delete with the chunk's rows.
// Every other write of this chunk is ordered by render numbers alone
// (README, "Concurrency and crashes").
func (p *Publisher) publishLater(ctx context.Context, guid string, reqs []fetch.Request) (_ outcome, found []backlogRow, _ error) {
	site, err := render.LoadSite(ctx, p.content, guid)
	if problem.Is(err, problem.NotFound) {
		return outcome{}, nil, nil // the instance is gone, and its objects with it
	}
	if err != nil {
		return outcome{}, nil, err
	}
	version, err := p.lockedVersion(ctx, guid)
	if err != nil {
		return outcome{}, nil, err
	}
	// The list windows come from the memberships the batches saved, read
	// after the render number was taken under the lock: the state of the
	// latest batch that held the lock before it, or newer. A batch that
	// changes them later renders with a larger number and queues again
	// whatever it left to this lane.
	members, err := p.recordedMembers(ctx, guid, reqs)
	if err != nil {
		return outcome{}, nil, err
	}
	out, err := p.publish(ctx, site, reqs, writeOpts{version: version, expand: true, members: members, queueFound: true}, nil)
	p.stats.background.Add(int64(out.rendered))
	if err != nil {
		return out, nil, err
	}
	for _, c := range out.changed {
		if c.found {
			found = append(found, backlogRow{Key: c.key, Queued: c.queued})
		}
	}
	if len(found) == 0 {
		return out, nil, nil
	}
	missed, err := p.plannedSince(ctx, guid, version)
	if err != nil {
		return out, nil, err
	}
	if missed {
		p.stats.requeued.Add(int64(len(found)))
		return out, nil, nil
	}
	return out, found, nil
}

// Backlog returns how many requests the background lane has queued
// (database-wide): list pages whose only change is their count, sitemaps
// and pages by path that batches handed off before rendering.
func Backlog(ctx context.Context, db *sqlx.DB) (int, error) {
	var n int
	if err := db.GetContext(ctx, &n, `SELECT count(*) FROM publish_backlog`); err != nil {
		return 0, fmt.Errorf("publish backlog: %w", err)
	}
	return n, nil
}

// followBacklog works the backlog while it holds requests, then waits for
// a batch to queue more (wake) or the poll interval.
func (p *Publisher) followBacklog(ctx context.Context, wake chan struct{}) {
	t := time.NewTicker(p.cfg.Poll)
	defer t.Stop()
	for ctx.Err() == nil {
		n, after, err := p.runBacklog(ctx, false)
		if err != nil && ctx.Err() == nil {
			p.log.Error("publisher: background chunk failed; retrying", "err", err)
		}
		if err == nil && n > 0 {
			continue
		}
		var due <-chan time.Time
		if err == nil && after > 0 {
			due = time.After(after)
		}
		select {
		case <-ctx.Done():
		case <-wake:
		case <-t.C:
		case <-due:
		}
	}
}

// drainBacklog works the backlog until it is empty, waiting for another
// publisher's chunk in progress.
func (p *Publisher) drainBacklog(ctx context.Context) error {
	for {
		n, _, err := p.runBacklog(ctx, true)
		if err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		var waiting bool
		if err := p.db.GetContext(ctx, &waiting, backlogWaitingSQL); err != nil {
			return fmt.Errorf("drain backlog: %w", err)
		}
		if !waiting {
			return nil
		}
	}
}

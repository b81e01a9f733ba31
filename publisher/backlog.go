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
// totalCount. It takes backlogChunk requests at a time, oldest first, each
// chunk under the instance's lock with a render number of its own, and
// releases the lock between chunks, so that the next batch of events
// waits for one chunk at most (and not at all for the objects its events
// name, which it writes without the lock). One publisher at a time works
// the backlog (a session lock), so two never render the same chunk.

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
		Key     string `db:"key"`
		Guid    string `db:"guid"`
		Request string `db:"request"`
		Queued  int64  `db:"queued"`
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
	since := time.Since(time.Unix(0, p.lastTreeWork.Load()))
	treeDue := wait || since >= p.cfg.SitemapEvery
	for _, r := range rows {
		req, err := parseRequestString(r.Request)
		switch {
		case err == nil && treeWork(req):
			if !treeDue {
				after = p.cfg.SitemapEvery - since
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
	for _, guid := range order {
		out, err := p.publishLater(ctx, guid, byInstance[guid])
		if err != nil {
			return 0, 0, err
		}
		changed += len(out.changed)
		for _, c := range out.changed {
			purge = append(purge, p.backlogPurge(guid, c)...)
		}
	}
	if tree {
		p.lastTreeWork.Store(time.Now().UnixNano())
	}
	keys, queued := make([]string, len(taken)), make([]int64, len(taken))
	for i, r := range taken {
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

// treeWork tells whether req builds its channel's whole sitemap: a
// sitemap, or a page by path. Behind a dynamic page of N items that is a
// read of N items, and a chunk holds the instance lock meanwhile, which
// the next batch of the instance waits for; so the background lane does
// such work at most once per Config.SitemapEvery, for everything queued
// by then (a key is queued once, however many batches ask for it).
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

// publishLater renders and writes reqs of instance guid under its lock.
func (p *Publisher) publishLater(ctx context.Context, guid string, reqs []fetch.Request) (outcome, error) {
	site, err := render.LoadSite(ctx, p.content, guid)
	if problem.Is(err, problem.NotFound) {
		return outcome{}, nil // the instance is gone, and its objects with it
	}
	if err != nil {
		return outcome{}, err
	}
	l, err := p.lockInstance(ctx, guid)
	if err != nil {
		return outcome{}, err
	}
	defer l.release()
	version, err := p.nextVersion(ctx)
	if err != nil {
		return outcome{}, err
	}
	// The list windows come from the memberships the batches saved, read
	// under the lock: the state of the latest batch, which queued again
	// whatever it changed.
	members, err := p.recordedMembers(ctx, guid, reqs)
	if err != nil {
		return outcome{}, err
	}
	out, err := p.publish(ctx, site, reqs, writeOpts{version: version, expand: true, members: members}, nil)
	p.stats.background.Add(int64(out.rendered))
	return out, err
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

package publisher

import (
	"context"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/render"
)

// A batch of events, in call order (each step in its own file):
//
//  1. runBatch (this file) takes the event cursor and reads the events;
//  2. per instance, publishEvents writes the objects the events name
//     themselves (ownRequests: an item's own object, a page's), then
//     plans the rest (plan.go, lists.go): what embeds what changed, and
//     the list pages whose window of items changed;
//  3. publish (write.go) renders and writes the plan's fast lane and, at
//     the same time, publishNodes (nodes.go) the pages by path of the
//     items published behind a dynamic page, where their path is theirs;
//     the variants the plan names are dropped instead (variants.go);
//  4. the feed lists the changes (feed.go, the one place that writes it);
//  5. handOff (handoff.go): in one transaction the cursor moves past the
//     batch, its events are confirmed to the webhook dispatcher and its
//     slow lane (list pages whose only change is their totalCount, past
//     page 0, the sitemaps and the pages by path; past
//     Publisher.sweepAbove pages by path, those straight from the objects
//     table) is queued in the backlog;
//  6. the CDN purge is queued, to go out once edges have read the feed
//     (purge.go);
//  7. the backlog (backlog.go) renders the slow lane in the background, in
//     small chunks, so that it never holds the next batch back.

// batchResult is what a batch of one instance leaves for the steps after
// its writes.
type batchResult struct {
	out   outcome
	purge []string        // qualified tags
	later []fetch.Request // the slow lane
	sweep *sweep          // more of the slow lane, queued from the objects table
}

// runBatch handles the next batch of events, if this publisher can take the
// event cursor (with wait, it waits for it), and returns how many events it
// handled. The cursor moves past the batch only after every object of its
// fast lane is written and listed in the feed.
func (p *Publisher) runBatch(ctx context.Context, wait bool) (int, error) {
	l, err := p.acquire(ctx, wait, lockSpace, cursorLock, "")
	if err != nil || l == nil {
		return 0, err
	}
	defer l.release()
	evs, err := eventlog.Read(ctx, p.db, Consumer, p.cfg.BatchSize)
	if err != nil || len(evs) == 0 {
		return 0, err
	}
	var order []string
	byInstance := map[string][]eventlog.Event{}
	for _, e := range evs {
		if _, ok := byInstance[e.InstanceGuid]; !ok {
			order = append(order, e.InstanceGuid)
		}
		byInstance[e.InstanceGuid] = append(byInstance[e.InstanceGuid], e)
	}
	var purge []string
	var later []deferred
	var sweeps []*sweep
	changed := 0
	for _, guid := range order {
		res, err := p.publishEvents(ctx, guid, byInstance[guid])
		if err != nil {
			return 0, err
		}
		purge = append(purge, res.purge...)
		for _, r := range res.later {
			later = append(later, deferred{guid: guid, req: r})
		}
		if res.sweep != nil {
			sweeps = append(sweeps, res.sweep)
		}
		out := res.out
		changed += len(out.changed)
		if len(out.changed) > 0 || out.superseded > 0 || len(res.later) > 0 {
			p.log.Debug("publisher: published", "guid", guid, "events", len(byInstance[guid]), "rendered", out.rendered,
				"written", out.written, "deleted", out.deleted, "unchanged", out.unchanged, "superseded", out.superseded,
				"deferred", len(res.later))
		}
	}
	// Edges learn of the changes from the feed before the events are
	// handed off, so that webhooks go out after edges can serve the new
	// state.
	if changed > 0 {
		if err := p.flushNow(ctx); err != nil {
			p.log.Warn("publisher: flush feed", "err", err)
		}
	}
	if err := p.handOff(ctx, evs, later, sweeps); err != nil {
		return 0, err
	}
	if p.afterBatch != nil {
		p.afterBatch(evs)
	}
	if len(later) > 0 || len(sweeps) > 0 {
		poke(p.backlogWake)
	}
	p.purges.add(purge)
	return len(evs), nil
}

// publishEvents renders and writes what one instance's events affect: the
// objects they name first, then the plan's fast lane. It returns the
// outcome, the tags to purge from a CDN and the slow lane.
func (p *Publisher) publishEvents(ctx context.Context, guid string, evs []eventlog.Event) (batchResult, error) {
	var res batchResult
	site, err := render.LoadSite(ctx, p.content, guid)
	if problem.Is(err, problem.NotFound) {
		return res, nil // the instance is gone
	}
	if err != nil {
		return res, err
	}
	// The objects the events name need no plan, and their writes are safe
	// without the instance lock (render numbers order them), so they
	// never wait for a background chunk holding it.
	own := ownRequests(site, evs)
	if res.out, err = p.publishFirst(ctx, site, own); err != nil {
		return res, err
	}
	l, err := p.lockInstance(ctx, guid)
	if err != nil {
		return res, err
	}
	defer l.release()
	pl, err := p.plan(ctx, site, evs)
	if err != nil {
		return res, err
	}
	drop := splitVariants(pl)
	// The render number is taken after the plan read the objects table,
	// so it is larger than that of any write the plan could have missed,
	// and recorded: a background chunk that created objects meanwhile
	// learns that this plan may not have found them (plannedSince).
	version, err := p.planVersion(ctx, guid)
	if err != nil {
		return res, err
	}
	now, bg := fastLane(withoutKeys(pl.reqs, own))
	for _, m := range pl.maybe {
		if !nodesKept(m, pl.kept, nil, pl.kept) {
			bg = append(bg, m.req)
		}
	}
	// The fast lane and the pages by path of the items published (where
	// their path is theirs, nodes.go; the background lane renders them
	// again with the whole sitemap) write different keys, as fastLane
	// leaves pages by path out, so they run at once, and each is listed
	// in the feed as soon as it is written (requestFlush): edges serve
	// list page 0 and a new post's page by path without waiting for the
	// rest of the batch, or for each other.
	var laneOut, nodesOut outcome
	var nodes []fetch.Request
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		var err error
		laneOut, err = p.publish(gctx, site, now, writeOpts{version: version, members: pl.members}, nil)
		if len(laneOut.changed) > 0 {
			p.requestFlush()
		}
		return err
	})
	g.Go(func() error {
		var err error
		nodesOut, nodes, err = p.publishNodes(gctx, site, evs, pl.kept, version)
		if len(nodesOut.changed) > 0 {
			p.requestFlush()
		}
		return err
	})
	err = g.Wait()
	res.out.add(laneOut)
	res.out.add(nodesOut)
	if err != nil {
		return res, err
	}
	out, err := p.dropVariants(ctx, guid, drop, version, pl.affected)
	res.out.add(out)
	if err != nil {
		return res, err
	}
	out, err = p.dropTouched(ctx, guid, pl.affected, version)
	res.out.add(out)
	if err != nil {
		return res, err
	}
	if err := p.saveMembers(ctx, guid, pl.members); err != nil {
		return res, err
	}
	res.later = withoutKeys(withoutKeys(append(append(bg, pl.later...), nodes...), own), now)
	res.sweep = pl.sweep
	for _, r := range res.later {
		p.laterPurges.add(r.Key(), pl.hitTags[r.Key()])
	}
	// Purge exactly the changed things, where some cached object had them.
	purge := map[string]bool{}
	for _, c := range res.out.changed {
		for _, t := range c.oldTags {
			if pl.affected[t] {
				purge[t] = true
			}
		}
	}
	for t := range purge {
		res.purge = append(res.purge, t)
	}
	slices.Sort(res.purge)
	return res, nil
}

// publishFirst renders and writes reqs, the objects a batch's events name
// themselves (ownRequests), with a render number of their own, and asks
// for the feed to be flushed as soon as they are written: edges serve them
// while the objects that embed them are still being rendered.
func (p *Publisher) publishFirst(ctx context.Context, site render.Site, reqs []fetch.Request) (outcome, error) {
	if len(reqs) == 0 {
		return outcome{}, nil
	}
	version, err := p.nextVersion(ctx)
	if err != nil {
		return outcome{}, err
	}
	out, err := p.publish(ctx, site, reqs, writeOpts{version: version}, nil)
	if err == nil && len(out.changed) > 0 {
		p.requestFlush()
	}
	return out, err
}

// fastLane splits a batch's plan (past the objects its events name) into
// what it renders before its events are handed off and what it leaves to
// the background lane: the sitemaps and the pages by path. Both build
// their channel's whole sitemap, which behind a dynamic page of N items
// is a read of N items and, for the flat sitemap, some 200 bytes a node
// to render and compare: at N = 100,000 seconds of work that no event
// names. In the backlog each is queued once however many batches ask for
// it, and a chunk renders the sitemaps after the pages by path, with those
// whose node the new flat sitemap changed (publish, expand).
func fastLane(reqs []fetch.Request) (now, later []fetch.Request) {
	for _, r := range reqs {
		switch r.Kind {
		case fetch.SitemapFlat, fetch.SitemapNested, fetch.PageByPath:
			later = append(later, r)
		default:
			now = append(now, r)
		}
	}
	return now, later
}

// withoutKeys returns the requests of reqs whose keys no request of done
// has.
func withoutKeys(reqs, done []fetch.Request) []fetch.Request {
	if len(done) == 0 {
		return reqs
	}
	skip := make(map[string]bool, len(done))
	for _, r := range done {
		skip[r.Key()] = true
	}
	var out []fetch.Request
	for _, r := range reqs {
		if !skip[r.Key()] {
			out = append(out, r)
		}
	}
	return out
}

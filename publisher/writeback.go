package publisher

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/lib/pq"

	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/render"
)

// writeBackGather is how long RunWriteBacks lets write-backs gather
// before it stores them.
const writeBackGather = 20 * time.Millisecond

// writeBackQueue holds the variants the origin rendered on a miss, each key
// once, until a worker stores them.
type writeBackQueue struct {
	max int

	mu      sync.Mutex
	pending map[string]bool
	queue   []fetch.Request
	ready   chan struct{} // has a value while queue is not empty
}

func newWriteBackQueue(max int) *writeBackQueue {
	return &writeBackQueue{max: max, pending: map[string]bool{}, ready: make(chan struct{}, 1)}
}

// add queues req unless it is queued already or the queue is full; a
// dropped variant is simply written back on its next miss.
func (q *writeBackQueue) add(req fetch.Request) bool {
	k := req.Key()
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pending[k] || len(q.queue) >= q.max {
		return false
	}
	q.pending[k] = true
	q.queue = append(q.queue, req)
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return true
}

// take removes and returns the queued requests.
func (q *writeBackQueue) take() []fetch.Request {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.queue
	q.queue = nil
	clear(q.pending)
	return out
}

// WriteBack is the origin's hook (origin.Config.WriteBack): it queues a
// fetch variant the origin served again after a store miss, so that it is
// stored until something it shows changes, or the instance's cap evicts it
// (variants.go). It returns at once; RunWriteBacks (part of Run) does the
// work.
//
// The body and tags the origin rendered are not written as they are: the
// worker renders the request again under the instance's write lock, so the
// write cannot race with the invalidation of a change committed meanwhile.
func (p *Publisher) WriteBack(ctx context.Context, req fetch.Request, body []byte, tags []string) {
	if !maintainable(req) {
		return
	}
	if !p.writeBacks.add(req) {
		p.log.Debug("publisher: write-back dropped", "key", req.Key())
	}
}

// RunWriteBacks stores queued write-backs until ctx is cancelled. Run runs
// it; a process that runs an origin without a publisher loop (edgecms
// origin) runs it alone.
func (p *Publisher) RunWriteBacks(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.writeBacks.ready:
		}
		// Misses come in bursts (a page's answers, a crawler): gathering
		// them a moment makes one batch of them, one lock, one feed flush.
		if sleep(ctx, writeBackGather) != nil {
			return
		}
		reqs := p.writeBacks.take()
		byGuid := map[string][]fetch.Request{}
		for _, r := range reqs {
			byGuid[r.Guid] = append(byGuid[r.Guid], r)
		}
		changed := false
		for guid, rs := range byGuid {
			n, err := p.writeBack(ctx, guid, rs)
			if err != nil {
				if ctx.Err() == nil {
					p.log.Warn("publisher: write-back failed", "guid", guid, "objects", len(rs), "err", err)
				}
				continue
			}
			changed = changed || n > 0
		}
		if changed {
			if err := p.flushNow(ctx); err != nil && ctx.Err() == nil {
				p.log.Warn("publisher: flush feed", "err", err)
			}
		}
	}
}

const liveKeysSQL = `SELECT key FROM objects WHERE key = ANY($1) AND etag IS NOT NULL`

// writeBack renders and stores reqs of instance guid and returns how many
// objects changed.
func (p *Publisher) writeBack(ctx context.Context, guid string, reqs []fetch.Request) (int, error) {
	site, err := render.LoadSite(ctx, p.content, guid)
	if problem.Is(err, problem.NotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	// Objects the publisher maintains already need nothing: the origin
	// rendered one because it was asked directly, or an edge missed it
	// just before the publisher wrote it.
	keys := make([]string, len(reqs))
	for i, r := range reqs {
		keys[i] = r.Key()
	}
	var live []string
	if err := p.db.SelectContext(ctx, &live, liveKeysSQL, pq.Array(keys)); err != nil {
		return 0, fmt.Errorf("write back: %w", err)
	}
	if len(live) > 0 {
		if err := p.touchVariants(ctx, live); err != nil {
			return 0, err
		}
		reqs = slices.DeleteFunc(slices.Clone(reqs), func(r fetch.Request) bool { return slices.Contains(live, r.Key()) })
		if len(reqs) == 0 {
			return 0, nil
		}
	}
	l, err := p.lockInstance(ctx, guid)
	if err != nil {
		return 0, err
	}
	defer l.release()
	version, err := p.nextVersion(ctx)
	if err != nil {
		return 0, err
	}
	out, err := p.publish(ctx, site, reqs, writeOpts{version: version, force: true}, nil)
	if err != nil {
		return len(out.changed), err
	}
	evicted, err := p.keepVariants(ctx, guid, reqs)
	return len(out.changed) + evicted, err
}

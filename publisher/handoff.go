package publisher

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/internal/pg"
)

// The hand-off of a batch, in one transaction, once its fast lane is in the
// store and the feed lists it (so edges serve it after their next poll):
//
//   - the publisher's cursor in the event log moves past the batch;
//   - event_confirmations gets a row per event: this is all the webhook
//     dispatcher reads of the publisher, and it sends Published and
//     Deleted only for confirmed events (webhooks.DispatcherConfig
//     RequireConfirmation). Its commit NOTIFYs edgecms_confirmations (a
//     trigger, schema/021), on which dispatchers LISTEN, so they promote
//     the events at once rather than at their next poll. Nothing else
//     passes between them;
//   - the batch's slow lane is queued in publish_backlog (backlog.go); the
//     pages by path a plan swept (plan.go, sweep) straight from the
//     objects table.
//
// A crash before it commits repeats the batch; after it, the backlog still
// holds what the batch left to the background.
//
// The dispatcher reads a confirmation when it promotes the event it parked
// (webhook_awaiting); the publisher deletes confirmations nobody can read
// any more (trim.go), which is the one place it looks at the dispatcher's
// table.

// deferred is a request of the slow lane, of instance guid.
type deferred struct {
	guid string
	req  fetch.Request
}

const (
	insertConfirmationsSQL = `INSERT INTO event_confirmations (event_id)
		SELECT unnest($1::bigint[]) ON CONFLICT DO NOTHING`
	// queueBacklogSQL queues the requests $1 (keys), $2 (guids), $3, in
	// key order; one queued already is queued again with a new number, so
	// that a background chunk that read it before does not delete it.
	queueBacklogSQL = `INSERT INTO publish_backlog (key, guid, request)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS l(key, guid, request) ORDER BY key` + requeue
	// handOffBacklogSQL is queueBacklogSQL, each key once, with, in the
	// same statement (so that rows are locked in key order), the pages by
	// path of the instances $4 that the qualified tags $5 hit but the keys
	// $6 (plan's sweep, as affectedObjectsSQL finds them; a page by path's
	// key is <guid>/fetch/<locale>/pagepath/...).
	handOffBacklogSQL = `INSERT INTO publish_backlog (key, guid, request)
		SELECT DISTINCT ON (key) key, guid, request FROM (
			SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS l(key, guid, request)
			UNION ALL
			SELECT key, guid, request FROM objects
			WHERE guid = ANY ($4::text[]) AND etag IS NOT NULL AND tags && $5::text[] AND last_read IS NULL
				AND split_part(key, '/', 4) = 'pagepath' AND key <> ALL (coalesce($6::text[], '{}'))) q
		ORDER BY key` + requeue
	requeue = `
		ON CONFLICT (key) DO UPDATE SET queued = excluded.queued, request = excluded.request`
)

// handOff confirms evs, queues later and sweeps, and moves the cursor past
// evs.
func (p *Publisher) handOff(ctx context.Context, evs []eventlog.Event, later []deferred, sweeps []*sweep) error {
	ids := make([]int64, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	// handOffBacklogSQL queues them once each, in key order, as a
	// background chunk queues what it found (queueFound), so that the two
	// never wait for each other's rows in a cycle.
	var keys, guids, reqs []string
	for _, d := range later {
		keys, guids, reqs = append(keys, d.req.Key()), append(guids, d.guid), append(reqs, requestString(d.req))
	}
	var swept, tags, except []string
	for _, s := range sweeps {
		swept, tags, except = append(swept, s.guid), append(tags, s.tags...), append(except, s.except...)
	}
	var queued int64
	err := pg.Transact(ctx, p.db, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, insertConfirmationsSQL, pq.Array(ids)); err != nil {
			return fmt.Errorf("confirm events: %w", err)
		}
		if len(keys) > 0 || len(swept) > 0 {
			res, err := tx.ExecContext(ctx, handOffBacklogSQL, pq.Array(keys), pq.Array(guids), pq.Array(reqs),
				pq.Array(swept), pq.Array(tags), pq.Array(except))
			if err != nil {
				return fmt.Errorf("queue backlog: %w", err)
			}
			queued, _ = res.RowsAffected()
		}
		return eventlog.Ack(ctx, tx, Consumer, evs[len(evs)-1])
	})
	if err == nil {
		p.stats.deferred.Add(queued)
	}
	return err
}

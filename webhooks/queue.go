package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/internal/pg"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// plan is a delivery to queue: one event for one webhook.
type plan struct {
	ID            string
	WebhookID     string
	EventKey      string
	EventID       int64
	MergeKey      string
	PublishEvent  bool
	SaveEvent     bool
	WorkflowEvent bool
	Payload       []byte
}

// subscriber is the part of a webhook that decides which events it gets.
type subscriber struct {
	ID             string `db:"id"`
	InstanceID     int64  `db:"instance_id"`
	PublishEvents  bool   `db:"publish_events"`
	SaveEvents     bool   `db:"save_events"`
	WorkflowEvents bool   `db:"workflow_events"`
}

// categories returns which of the subscriber's categories an event state
// falls in: publish gets Published and Deleted, save gets Saved and Deleted,
// workflow the three workflow states. A Deleted event is one delivery even
// when both publish and save match.
func (w subscriber) categories(st eventlog.State) (publish, save, workflow bool) {
	switch st {
	case eventlog.Published:
		publish = w.PublishEvents
	case eventlog.Saved:
		save = w.SaveEvents
	case eventlog.Deleted:
		publish, save = w.PublishEvents, w.SaveEvents
	case eventlog.AwaitingApproval, eventlog.Approved, eventlog.Declined:
		workflow = w.WorkflowEvents
	}
	return
}

// needsConfirmation reports whether deliveries of an event wait until the
// publisher has confirmed the object store holds the new state: Published,
// and Deleted (unpublish and delete withdraw published objects).
func needsConfirmation(st eventlog.State) bool {
	return st == eventlog.Published || st == eventlog.Deleted
}

// mergeKey identifies what an event is about for the merge: subject, item,
// page or list, locale and state.
func mergeKey(e eventlog.Event) string {
	var what string
	switch {
	case e.ContentID != nil:
		what = strconv.FormatInt(*e.ContentID, 10)
	case e.PageID != nil:
		what = strconv.FormatInt(*e.PageID, 10)
	case e.ReferenceName != nil:
		what = strings.ToLower(*e.ReferenceName)
	}
	locale := ""
	if e.Locale != nil {
		locale = strings.ToLower(*e.Locale)
	}
	return strings.Join([]string{string(e.Subject), what, locale, string(e.State)}, "|")
}

// eventKey is the eventKey of the deliveries of an event.
func eventKey(e eventlog.Event) string { return "evt_" + strconv.FormatInt(e.ID, 10) }

// plans returns a delivery for each subscriber an event goes to.
func plans(e eventlog.Event, subs []subscriber) ([]plan, error) {
	var out []plan
	var payload []byte
	for _, w := range subs {
		if !w.gets(e) {
			continue
		}
		pub, save, wf := w.categories(e.State)
		if payload == nil {
			var err error
			if payload, err = json.Marshal(e.Payload()); err != nil {
				return nil, fmt.Errorf("payload of event %d: %w", e.ID, err)
			}
		}
		out = append(out, plan{ID: newID("msg_"), WebhookID: w.ID, EventKey: eventKey(e), EventID: e.ID,
			MergeKey: mergeKey(e), PublishEvent: pub, SaveEvent: save, WorkflowEvent: wf, Payload: payload})
	}
	return out, nil
}

// gets reports whether the subscriber gets event e at all.
func (w subscriber) gets(e eventlog.Event) bool {
	// A channel event tells the publisher to render a new channel's
	// sitemaps; no item or page changed, so receivers have nothing to do.
	if w.InstanceID != e.InstanceID || e.Subject == eventlog.SubjectChannel {
		return false
	}
	pub, save, wf := w.categories(e.State)
	return pub || save || wf
}

const subscribersSQL = `SELECT id, instance_id, publish_events, save_events, workflow_events FROM webhooks
	WHERE enabled AND (publish_events OR save_events OR workflow_events) AND instance_id = ANY($1)
	ORDER BY instance_id, id`

// subscribers returns the enabled webhooks of the instances of evs, by instance.
func subscribers(ctx context.Context, q sqlx.QueryerContext, evs []eventlog.Event) (map[int64][]subscriber, error) {
	seen := map[int64]bool{}
	var ids []int64
	for _, e := range evs {
		if !seen[e.InstanceID] {
			seen[e.InstanceID] = true
			ids = append(ids, e.InstanceID)
		}
	}
	var subs []subscriber
	if err := sqlx.SelectContext(ctx, q, &subs, subscribersSQL, pq.Array(ids)); err != nil {
		return nil, fmt.Errorf("webhooks of instances: %w", err)
	}
	out := map[int64][]subscriber{}
	for _, w := range subs {
		out[w.InstanceID] = append(out[w.InstanceID], w)
	}
	return out, nil
}

// ts converts microseconds since the Unix epoch in SQL, exactly.
func ts(col string) string {
	return "(timestamptz 'epoch' + " + col + " * interval '1 microsecond')"
}

// enqueueSQL merges each planned delivery into a still-queued delivery of
// the same webhook and merge key queued within the merge window (the newer
// payload wins), and queues the others. A delivery being attempted (leased)
// is not still-queued.
const enqueueSQL = `WITH input AS (
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[],
			$6::boolean[], $7::boolean[], $8::boolean[], $9::bytea[])
		AS i(id, webhook_id, event_key, event_id, merge_key, publish_event, save_event, workflow_event, payload)
	), merged AS (
		UPDATE webhook_deliveries d SET payload = i.payload, event_key = i.event_key, event_id = i.event_id,
			publish_event = i.publish_event, save_event = i.save_event, workflow_event = i.workflow_event
		FROM input i
		WHERE d.webhook_id = i.webhook_id AND d.merge_key = i.merge_key
		  AND d.status IN ('queued', 'retrying') AND d.queued_at >= $11
		  AND (d.lease_until IS NULL OR d.lease_until < $10)
		RETURNING i.id
	)
	INSERT INTO webhook_deliveries (id, webhook_id, event_key, event_id, merge_key, publish_event, save_event,
		workflow_event, payload, status, queued_at, due_at)
	SELECT i.id, i.webhook_id, i.event_key, i.event_id, i.merge_key, i.publish_event, i.save_event,
		i.workflow_event, i.payload, 'queued', $10, $10
	FROM input i WHERE i.id NOT IN (SELECT id FROM merged)`

// enqueue queues ps at time now in tx, merging as enqueueSQL says, and
// returns how many new deliveries it queued. Plans for the same webhook and
// merge key within ps merge among themselves first (the later one wins).
func enqueue(ctx context.Context, tx sqlx.ExecerContext, ps []plan, now time.Time) (int, error) {
	if len(ps) == 0 {
		return 0, nil
	}
	last := map[[2]string]int{}
	for i, p := range ps {
		last[[2]string{p.WebhookID, p.MergeKey}] = i
	}
	var (
		ids, hooks, keys, merge []string
		events                  []int64
		pub, save, wf           []bool
		payloads                [][]byte
	)
	for i, p := range ps {
		if last[[2]string{p.WebhookID, p.MergeKey}] != i {
			continue
		}
		ids, hooks, keys, events, merge = append(ids, p.ID), append(hooks, p.WebhookID), append(keys, p.EventKey), append(events, p.EventID), append(merge, p.MergeKey)
		pub, save, wf = append(pub, p.PublishEvent), append(save, p.SaveEvent), append(wf, p.WorkflowEvent)
		payloads = append(payloads, p.Payload)
	}
	res, err := tx.ExecContext(ctx, enqueueSQL, pq.Array(ids), pq.Array(hooks), pq.Array(keys), pq.Array(events),
		pq.Array(merge), pq.Array(pub), pq.Array(save), pq.Array(wf), pq.Array(payloads), now, now.Add(-MergeWindow))
	if err != nil {
		return 0, fmt.Errorf("queue deliveries: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// job is a claimed delivery with its webhook.
type job struct {
	DeliveryID    string `db:"delivery_id"`
	Payload       []byte `db:"payload"`
	ChainAttempts int    `db:"chain_attempts"`
	// Breaker is whether the webhook had a breaker row when claimed: only
	// then may an answer have a breaker to close.
	Breaker bool `db:"breaker"`
	webhookRow
}

// release gives back claimed deliveries that were not attempted.
func (s *Store) release(ctx context.Context, owner string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.db.ExecContext(ctx, `UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL
		WHERE id = ANY($1) AND lease_owner = $2`, pq.Array(ids), owner)
	if err != nil {
		return fmt.Errorf("release deliveries: %w", err)
	}
	return nil
}

var recordSQL = `UPDATE webhook_deliveries d SET status = r.status,
		attempt_count = d.attempt_count + CASE WHEN r.attempted THEN 1 ELSE 0 END,
		chain_attempts = d.chain_attempts + CASE WHEN r.attempted THEN 1 ELSE 0 END,
		last_attempt_at = CASE WHEN r.attempted THEN ` + ts("r.at") + ` ELSE d.last_attempt_at END,
		sent_at = CASE WHEN r.status = 'succeeded' THEN ` + ts("r.at") + ` END,
		next_attempt_at = CASE WHEN r.next = 0 THEN NULL ELSE ` + ts("r.next") + ` END,
		due_at = CASE WHEN r.next = 0 THEN d.due_at ELSE ` + ts("r.next") + ` END,
		http_status = r.code, response_text = r.text, last_error = r.err,
		signed = r.signed, signature_key_count = r.keys, lease_owner = NULL, lease_until = NULL
	FROM unnest($1::text[], $2::text[], $3::boolean[], $4::bigint[], $5::integer[], $6::text[], $7::text[],
		$8::bigint[], $9::boolean[], $10::integer[])
		AS r(id, status, attempted, at, code, text, err, next, signed, keys)
	WHERE d.id = r.id AND d.lease_owner = $11`

// record writes the results of owner's attempts, and each webhook's
// signature count of its latest attempt, then updates the breakers of their
// webhooks and returns those it opened. A result of a delivery whose lease
// another dispatcher has taken over meanwhile is dropped: that dispatcher
// attempts it again.
func (s *Store) record(ctx context.Context, owner string, rs []result) ([]breakerRow, error) {
	if len(rs) == 0 {
		return nil, nil
	}
	var (
		ids, status, text, errs []string
		attempted, signed       []bool
		at, next                []int64
		code, keys              []int32
	)
	latest := map[string]result{}
	for _, r := range rs {
		ids, status, attempted = append(ids, r.ID), append(status, r.Status), append(attempted, r.Attempted)
		at, code, text, errs = append(at, r.at.UnixMicro()), append(code, int32(r.code)), append(text, r.text), append(errs, r.err)
		n := int64(0)
		if r.Next != nil {
			n = r.Next.UnixMicro()
		}
		next, signed, keys = append(next, n), append(signed, r.signed), append(keys, int32(r.keys))
		if l, ok := latest[r.WebhookID]; r.Attempted && (!ok || !r.at.Before(l.at)) {
			latest[r.WebhookID] = r
		}
	}
	err := retry(ctx, func() error {
		_, err := s.db.ExecContext(ctx, recordSQL, pq.Array(ids), pq.Array(status), pq.Array(attempted), pq.Array(at),
			pq.Array(code), pq.Array(text), pq.Array(errs), pq.Array(next), pq.Array(signed), pq.Array(keys), owner)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("record attempts: %w", err)
	}
	// One row at a time, in id order, so that dispatchers never deadlock here.
	hooks := make([]string, 0, len(latest))
	for id := range latest {
		hooks = append(hooks, id)
	}
	sort.Strings(hooks)
	for _, id := range hooks {
		r := latest[id]
		if _, err := s.db.ExecContext(ctx, `UPDATE webhooks SET signature_key_count = $2, last_attempt_at = $3
			WHERE id = $1 AND (last_attempt_at IS NULL OR last_attempt_at <= $3)`, id, r.keys, r.at); err != nil {
			return nil, fmt.Errorf("record attempts: %w", err)
		}
	}
	return s.updateBreakers(ctx, rs)
}

// retry runs fn again, a few times, after a deadlock or serialization failure.
func retry(ctx context.Context, fn func() error) error {
	for attempt := 0; ; attempt++ {
		err := fn()
		if attempt < 4 && pg.IsRetryable(err) && ctx.Err() == nil {
			continue
		}
		return err
	}
}

package webhooks

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/edgecms/edgecms/metrics"
)

// The breaker keeps an endpoint that does not answer from holding workers.
// Every attempt that times out (connecting, or waiting for the answer)
// counts; after Store.breakAfter of them in a row the breaker opens: the
// webhook's waiting deliveries are pushed to the end of a pause
// (BreakerPause, doubling each time it opens again, up to
// BreakerMaxPause), and claims skip the webhook meanwhile. Then it is
// half-open: one attempt at a time probes the endpoint. A probe that times
// out opens it again; any answer, whatever its status, closes it, since an
// endpoint that answers no longer holds workers (its failures are retried
// as usual). The state is a row of webhook_breakers, so that every
// dispatcher agrees. Pausing changes no retry count: a delivery waits
// without being attempted.

// tally is what one batch of results says of a webhook's endpoint.
type tally struct {
	answered bool // an attempt got an HTTP answer
	breaker  bool // the webhook had a breaker when one of them was claimed
	timeouts int  // attempts that timed out after the last answer
}

// tallies sums rs by webhook, in the order the attempts started.
func tallies(rs []result) map[string]*tally {
	order := make([]result, 0, len(rs))
	for _, r := range rs {
		if r.Attempted && (r.code != 0 || r.timeout) {
			order = append(order, r)
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].at.Before(order[j].at) })
	out := map[string]*tally{}
	for _, r := range order {
		t := out[r.WebhookID]
		if t == nil {
			t = &tally{}
			out[r.WebhookID] = t
		}
		t.breaker = t.breaker || r.Breaker
		if r.code != 0 {
			t.answered, t.timeouts = true, 0
		} else {
			t.timeouts++
		}
	}
	return out
}

// pause is how long a breaker opened for the trips-th time in a row holds
// its webhook's deliveries.
func pause(trips int) time.Duration {
	d := BreakerPause
	for i := 1; i < trips && d < BreakerMaxPause; i++ {
		d *= 2
	}
	return min(d, BreakerMaxPause)
}

// pausedNote starts the lastError of a delivery held by an open breaker.
const pausedNote = "endpoint paused until "

// pushSQL holds the waiting, unleased deliveries of webhook $1 until $2 (a
// retry's nextAttemptUtc included) and says why in their lastError, after
// the error of their last attempt if any (without an older note).
const pushSQL = `UPDATE webhook_deliveries d SET due_at = $2,
		next_attempt_at = CASE WHEN d.status = 'retrying' THEN $2 ELSE d.next_attempt_at END,
		last_error = CASE WHEN x.base = '' THEN $3 ELSE x.base || '; ' || $3 END
	FROM (SELECT id, CASE WHEN strpos(last_error, $5) > 0
			THEN rtrim(left(last_error, strpos(last_error, $5) - 1), '; ') ELSE last_error END AS base
		FROM webhook_deliveries
		WHERE webhook_id = $1 AND status IN ('queued', 'retrying') AND due_at < $2
		  AND (lease_until IS NULL OR lease_until < $4)) x
	WHERE d.id = x.id`

// breakerRow is a row of webhook_breakers.
type breakerRow struct {
	WebhookID string     `db:"webhook_id"`
	Timeouts  int        `db:"timeouts"`
	Trips     int        `db:"trips"`
	OpenUntil *time.Time `db:"open_until"`
}

// updateBreakers applies a batch of recorded results to the breakers of
// their webhooks, and returns the webhooks it opened. A batch without
// timeouts, of webhooks that had no breaker when claimed, costs nothing.
func (s *Store) updateBreakers(ctx context.Context, rs []result) (opened []breakerRow, err error) {
	ts := tallies(rs)
	var answered, timedOut []string
	for id, t := range ts {
		if t.answered && (t.breaker || t.timeouts > 0) {
			answered = append(answered, id)
		}
		if t.timeouts > 0 {
			timedOut = append(timedOut, id)
		}
	}
	if len(answered) > 0 {
		var closed []struct {
			ID   string `db:"webhook_id"`
			Open bool   `db:"open"`
		}
		if err := retrySelect(ctx, s.db, &closed, `DELETE FROM webhook_breakers WHERE webhook_id = ANY($1)
			RETURNING webhook_id, open_until IS NOT NULL AS open`, pq.Array(answered)); err != nil {
			return nil, fmt.Errorf("close breakers: %w", err)
		}
		for _, c := range closed {
			if c.Open {
				metrics.WebhookBreaker.WithLabelValues("closed").Inc()
			}
		}
	}
	if len(timedOut) == 0 {
		return nil, nil
	}
	// One transaction, rows locked in id order, so that dispatchers
	// recording at once neither lose a count nor deadlock.
	slices.Sort(timedOut)
	now := s.now()
	err = s.transact(ctx, func(tx *sqlx.Tx) error {
		opened = nil
		if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_breakers (webhook_id, updated_at)
			SELECT id, $2 FROM unnest($1::text[]) AS t(id) ORDER BY id ON CONFLICT (webhook_id) DO NOTHING`,
			pq.Array(timedOut), now); err != nil {
			return err
		}
		var rows []breakerRow
		if err := tx.SelectContext(ctx, &rows, `SELECT webhook_id, timeouts, trips, open_until FROM webhook_breakers
			WHERE webhook_id = ANY($1) ORDER BY webhook_id FOR UPDATE`, pq.Array(timedOut)); err != nil {
			return err
		}
		for _, b := range rows {
			b.Timeouts += ts[b.WebhookID].timeouts
			if b.Timeouts >= s.breakAfter && (b.OpenUntil == nil || !b.OpenUntil.After(now)) {
				b.Trips++
				until := now.Add(pause(b.Trips))
				b.OpenUntil = &until
				opened = append(opened, b)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE webhook_breakers SET timeouts = $2, trips = $3, open_until = $4,
				updated_at = $5 WHERE webhook_id = $1`, b.WebhookID, b.Timeouts, b.Trips, b.OpenUntil, now); err != nil {
				return err
			}
			// The results just recorded of an open breaker's webhook wait
			// for its end as well.
			if b.OpenUntil != nil && b.OpenUntil.After(now) {
				note := fmt.Sprintf("%s%s: %d attempts in a row got no answer in time (circuit breaker)",
					pausedNote, b.OpenUntil.UTC().Format(time.RFC3339), b.Timeouts)
				if _, err := tx.ExecContext(ctx, pushSQL, b.WebhookID, *b.OpenUntil, note, now, pausedNote); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("update breakers: %w", err)
	}
	for range opened {
		metrics.WebhookBreaker.WithLabelValues("opened").Inc()
	}
	return opened, nil
}

// retrySelect runs a query with retry, for deadlocks and serialization
// failures.
func retrySelect(ctx context.Context, db *sqlx.DB, dest any, query string, args ...any) error {
	return retry(ctx, func() error { return db.SelectContext(ctx, dest, query, args...) })
}

// PausedEndpoints counts the webhooks whose breaker is open now: their
// deliveries wait rather than being attempted.
func PausedEndpoints(ctx context.Context, db *sqlx.DB) (int64, error) {
	var n int64
	if err := db.GetContext(ctx, &n, `SELECT count(*) FROM webhook_breakers WHERE open_until > now()`); err != nil {
		return 0, fmt.Errorf("paused webhook endpoints: %w", err)
	}
	return n, nil
}

package webhooks

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// limits bounds the deliveries in flight (leased), counted in Postgres so
// that they hold for every dispatcher of a database together (see claimSQL).
type limits struct {
	// endpoint is the most deliveries of one webhook in flight at once.
	endpoint int
	// instance is the most deliveries of one instance in flight at once.
	instance int
}

// claimSQL leases up to $2 due deliveries to $3 until $4, fairly:
//
//   - pending walks the webhooks that have deliveries waiting (a skip scan of
//     webhook_deliveries_pending: one index probe per such webhook, however
//     long their queues are);
//   - busy counts the deliveries in flight (leased until $1 or later: only
//     waiting deliveries are ever leased) by webhook, from the small index
//     webhook_deliveries_leased, but for those in $7, whose attempts have ended and wait to
//     be recorded; hooks adds them up by instance, and gives each webhook its
//     room: $5 minus its deliveries in flight, none while its breaker is
//     open, one at a time (a probe) while it is half-open;
//   - due takes the first due deliveries of each webhook with room, as many
//     as its room, unless its instance already has $6 in flight;
//   - fair ranks them within each instance round robin across its webhooks
//     (every webhook's first before any webhook's second), and load is how
//     many deliveries the instance would then have in flight;
//   - picked takes the lowest loads first, up to $6 per instance: one
//     delivery of each instance, the least busy first, before a second of
//     any, and the oldest due first among equals;
//   - locked skips what another claim is leasing right now, and what one
//     has leased since this statement's snapshot (the lease is checked
//     again on the row locked), so that no delivery is claimed twice.
//
// The counts are those of the statement's snapshot. One dispatcher's claims
// follow each other, so its caps are exact. Claims of several dispatchers
// at the same moment see the same deliveries in flight and mostly pick the
// same ones, of which each gets only those it locks first; they can
// together exceed a cap only when they see different states (one sees an
// attempt recorded that the other does not yet), by the deliveries that
// differ, until those attempts end. Serialising claims under a lock would
// make that exact, at the price of three more round trips per claim, which
// a busy endpoint pays per delivery.
const claimSQL = `WITH RECURSIVE pending(webhook_id) AS (
		(SELECT webhook_id FROM webhook_deliveries WHERE status IN ('queued', 'retrying')
		 ORDER BY webhook_id LIMIT 1)
		UNION ALL
		SELECT (SELECT d.webhook_id FROM webhook_deliveries d
		        WHERE d.status IN ('queued', 'retrying') AND d.webhook_id > p.webhook_id
		        ORDER BY d.webhook_id LIMIT 1)
		FROM pending p WHERE p.webhook_id IS NOT NULL
	), busy AS (
		SELECT webhook_id, count(*) AS n FROM webhook_deliveries
		WHERE lease_until >= $1 AND id <> ALL(coalesce($7::text[], '{}'))
		GROUP BY webhook_id
	), hooks AS (
		SELECT w.id, w.instance_id,
			CASE WHEN b.open_until > $1 THEN 0 WHEN b.open_until IS NOT NULL THEN 1 ELSE $5::int END
				- coalesce(f.n, 0) AS room,
			sum(coalesce(f.n, 0)) OVER (PARTITION BY w.instance_id) AS instance_busy,
			b.webhook_id IS NOT NULL AS breaker
		FROM pending p JOIN webhooks w ON w.id = p.webhook_id
		LEFT JOIN busy f ON f.webhook_id = w.id
		LEFT JOIN webhook_breakers b ON b.webhook_id = w.id
	), due AS (
		SELECT c.id, h.instance_id, h.instance_busy, h.breaker, c.due_at,
			row_number() OVER (PARTITION BY h.id ORDER BY c.due_at, c.id) AS hook_rank
		FROM hooks h CROSS JOIN LATERAL (
			SELECT d.id, d.due_at FROM webhook_deliveries d
			WHERE d.webhook_id = h.id AND d.status IN ('queued', 'retrying') AND d.due_at <= $1
			  AND (d.lease_until IS NULL OR d.lease_until < $1)
			ORDER BY d.due_at, d.id LIMIT greatest(h.room, 0)
		) c
		WHERE h.room > 0 AND h.instance_busy < $6::int
	), fair AS (
		SELECT id, due_at, breaker,
			instance_busy + row_number() OVER (PARTITION BY instance_id ORDER BY hook_rank, due_at, id) AS load
		FROM due
	), picked AS (
		SELECT id, breaker FROM fair WHERE load <= $6::int ORDER BY load, due_at, id LIMIT $2
	), locked AS (
		SELECT d.id, p.breaker FROM webhook_deliveries d JOIN picked p ON p.id = d.id
		WHERE d.lease_until IS NULL OR d.lease_until < $1
		FOR UPDATE OF d SKIP LOCKED
	)
	UPDATE webhook_deliveries d SET lease_owner = $3, lease_until = $4
	FROM locked picked, webhooks w
	WHERE d.id = picked.id AND w.id = d.webhook_id
	RETURNING d.id AS delivery_id, d.payload, d.chain_attempts, picked.breaker,
		w.id, w.instance_id, w.name, w.url, w.enabled, w.publish_events, w.save_events, w.workflow_events,
		w.secure, w.retries_enabled, w.retry_count, w.retry_speed, w.secret, w.previous_secret,
		w.secret_rolled_at, w.signature_key_count, w.last_attempt_at, w.created_at, w.updated_at`

// claim leases to owner until now+lease up to n due deliveries, within lim
// (see claimSQL). finished are deliveries of owner whose attempts have
// ended but are not recorded yet: they are leased, but no longer in flight.
func (s *Store) claim(ctx context.Context, owner string, n int, now time.Time, lease time.Duration, lim limits, finished []string) ([]job, error) {
	stmt, err := s.claimStmt(ctx)
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	var js []job
	err = stmt.SelectContext(ctx, &js, now, n, owner, now.Add(lease), lim.endpoint, lim.instance, pq.Array(finished))
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	return js, nil
}

// claimStmt returns claimSQL prepared, so that Postgres plans it once per
// connection rather than at every claim (a claim follows every attempt).
func (s *Store) claimStmt(ctx context.Context) (*sqlx.Stmt, error) {
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	if s.claimPrepared == nil {
		st, err := s.db.PreparexContext(ctx, claimSQL)
		if err != nil {
			return nil, err
		}
		s.claimPrepared = st
	}
	return s.claimPrepared, nil
}

// Package throttle slows down guessing and bounds request rates: it counts
// failed attempts per key (an email address, a client address, a
// credential's prefix) in Postgres, so that every origin shares the counts,
// and blocks a key that failed too often for a while.
//
// A Limiter is one policy under one name; a caller checks the keys of an
// attempt before making it (Check), records a failure (Fail) and, where a
// success proves the key's owner, forgets the key's failures (Reset). The
// sign-in of the management API uses one limiter per email address and one
// per client address; failed management-token attempts can use the same
// type under another name.
//
// A Rate limits requests, failed or not: a token bucket per key, also in
// Postgres and shared by every origin (the Fetch API's limits per API key).
package throttle

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/edgecms/edgecms/problem"
)

// Policy is how many failures a key may have and what follows.
type Policy struct {
	// Name prefixes the keys in the shared table ("login-email"), so that
	// limiters of different purposes never share a count.
	Name string
	// Max is how many failures within Window block the key.
	Max int
	// Window is how long failures count; a failure after a quiet Window
	// starts a new count.
	Window time.Duration
	// Block is how long a key stays blocked once it reached Max.
	Block time.Duration
	// Detail is the problem detail of a blocked attempt, for the client.
	Detail string
}

// Limiter applies a Policy to keys, with its counts in Postgres.
type Limiter struct {
	db     *sqlx.DB
	policy Policy
	// Now is the clock; tests replace it.
	Now func() time.Time

	mu     sync.Mutex
	purged time.Time
}

// New returns a Limiter of policy on db (schema/011_users.sql).
func New(db *sqlx.DB, p Policy) *Limiter {
	if p.Max < 1 {
		p.Max = 1
	}
	if p.Detail == "" {
		p.Detail = "too many failed attempts; retry after the Retry-After seconds"
	}
	return &Limiter{db: db, policy: p, Now: time.Now}
}

func (l *Limiter) key(k string) string { return l.policy.Name + ":" + k }

const (
	blockedSQL = `SELECT blocked_until FROM throttle WHERE key = ANY($1) AND blocked_until > $2
		ORDER BY blocked_until DESC LIMIT 1`
	// A failure after the window has passed starts a new count; the count
	// that reaches max blocks the key.
	failSQL = `INSERT INTO throttle AS t (key, failures, window_start, blocked_until)
		VALUES ($1, 1, $2, CASE WHEN 1 >= $4 THEN $5::timestamptz END)
		ON CONFLICT (key) DO UPDATE SET
			failures = CASE WHEN t.window_start <= $3 THEN 1 ELSE t.failures + 1 END,
			window_start = CASE WHEN t.window_start <= $3 THEN $2 ELSE t.window_start END,
			blocked_until = CASE WHEN (CASE WHEN t.window_start <= $3 THEN 1 ELSE t.failures + 1 END) >= $4
				THEN $5 ELSE t.blocked_until END`
	resetSQL = `DELETE FROM throttle WHERE key = $1`
	purgeSQL = `DELETE FROM throttle WHERE starts_with(key, $1 || ':') AND window_start < $2
		AND (blocked_until IS NULL OR blocked_until < $3)`
)

// Check returns a RateLimited problem, with the seconds until the last
// block ends as its Retry-After, when any of keys is blocked.
func (l *Limiter) Check(ctx context.Context, keys ...string) error {
	full := make([]string, len(keys))
	for i, k := range keys {
		full[i] = l.key(k)
	}
	now := l.Now()
	var until []time.Time
	if err := l.db.SelectContext(ctx, &until, blockedSQL, pq.Array(full), now); err != nil {
		return fmt.Errorf("throttle %s: check: %w", l.policy.Name, err)
	}
	if len(until) == 0 {
		return nil
	}
	wait := int(math.Ceil(until[0].Sub(now).Seconds()))
	return &problem.Error{Kind: problem.RateLimited, RetryAfter: max(wait, 1), Detail: l.policy.Detail}
}

// Fail records one failed attempt of key.
func (l *Limiter) Fail(ctx context.Context, key string) error {
	now := l.Now()
	p := l.policy
	if _, err := l.db.ExecContext(ctx, failSQL, l.key(key), now, now.Add(-p.Window), p.Max, now.Add(p.Block)); err != nil {
		return fmt.Errorf("throttle %s: record a failure: %w", p.Name, err)
	}
	return l.purge(ctx, now)
}

// Reset forgets the failures of key.
func (l *Limiter) Reset(ctx context.Context, key string) error {
	if _, err := l.db.ExecContext(ctx, resetSQL, l.key(key)); err != nil {
		return fmt.Errorf("throttle %s: reset: %w", l.policy.Name, err)
	}
	return nil
}

// purge deletes, at most once per window, the counts of this policy that
// no longer matter, so that keys never seen again do not pile up.
func (l *Limiter) purge(ctx context.Context, now time.Time) error {
	l.mu.Lock()
	due := now.Sub(l.purged) >= l.policy.Window
	if due {
		l.purged = now
	}
	l.mu.Unlock()
	if !due {
		return nil
	}
	if _, err := l.db.ExecContext(ctx, purgeSQL, l.policy.Name, now.Add(-l.policy.Window), now); err != nil {
		return fmt.Errorf("throttle %s: purge: %w", l.policy.Name, err)
	}
	return nil
}

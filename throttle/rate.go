package throttle

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/problem"
)

// RatePolicy is a request rate per key: a token bucket of Burst tokens
// that fills at PerSecond tokens a second, one token per request.
type RatePolicy struct {
	// Name prefixes the keys in the shared table ("fetch-key"), so that
	// rates of different purposes never share a bucket.
	Name string
	// PerSecond is the sustained rate; 0 or less turns the limit off.
	PerSecond float64
	// Burst is the size of the bucket: how many requests a key that was
	// quiet may make at once (at least 1; 0: PerSecond's worth).
	Burst int
	// Detail is the problem detail of a refused request, for the client.
	Detail string
}

// Rate limits requests per key with token buckets in Postgres, shared by
// every process on the database: N origins allow the rate once, not N
// times.
//
// A process does not ask Postgres for every request. It takes tokens in
// batches of a tenth of a second's worth (a lease, held for a second at
// most, whose unused tokens are lost, never handed to another key), so a
// busy key costs each process about ten round trips a second whatever its
// rate, and the processes together never admit more than the bucket gave
// out. A key found empty is refused from memory until a batch can have
// refilled, so a flood over the limit costs Postgres no more than traffic
// under it.
type Rate struct {
	db     *sqlx.DB
	policy RatePolicy
	batch  int
	// Now is the clock; tests replace it.
	Now func() time.Time

	mu     sync.Mutex
	leases map[string]*lease
	swept  time.Time
	purged time.Time
}

// lease is what a process holds of one key's bucket.
type lease struct {
	tokens int       // taken from the bucket, not yet used
	until  time.Time // when the tokens lapse
	empty  time.Time // the bucket is not asked again before this
	retry  int       // Retry-After of a refusal while empty, in seconds
}

// leaseTime bounds how long tokens taken from the shared bucket stay
// usable in one process.
const leaseTime = time.Second

// NewRate returns a Rate of policy on db (schema/013_preview_links_and_rates.sql).
func NewRate(db *sqlx.DB, p RatePolicy) *Rate {
	if p.Burst < 1 {
		p.Burst = max(1, int(math.Ceil(p.PerSecond)))
	}
	if p.Detail == "" {
		p.Detail = "more requests per second than this key may make; retry after the Retry-After seconds"
	}
	batch := min(max(1, int(p.PerSecond/10)), p.Burst)
	return &Rate{db: db, policy: p, batch: batch, Now: time.Now, leases: map[string]*lease{}}
}

// Policy returns the rate's policy.
func (r *Rate) Policy() RatePolicy { return r.policy }

// The bucket as of $4 holds what it held, plus what the time since filled,
// up to its size; a take hands out up to $3 whole tokens of it. A clock
// behind the row's (another process's clock) adds nothing. A key with no
// row has a full bucket.
const (
	bucketNow  = `LEAST($2::float8, b.tokens + GREATEST(0, extract(epoch FROM $4::timestamptz - b.updated_at)::float8) * $5::float8)`
	bucketTake = `LEAST($3::int, floor(` + bucketNow + `)::int)`
	takeSQL    = `INSERT INTO rate_buckets AS b (key, tokens, granted, updated_at)
		VALUES ($1, $2::float8 - LEAST($3::int, $2::int), LEAST($3::int, $2::int), $4)
		ON CONFLICT (key) DO UPDATE SET
			granted = ` + bucketTake + `,
			tokens = ` + bucketNow + ` - ` + bucketTake + `,
			updated_at = GREATEST(b.updated_at, $4)
		RETURNING granted, tokens`
	// A bucket left alone for its refill time is full again, as good as
	// no row.
	purgeRatesSQL = `DELETE FROM rate_buckets WHERE starts_with(key, $1 || ':') AND updated_at < $2`
)

// Take spends a token of key: nil when the key may make the request, a
// RateLimited problem with the seconds to wait as its Retry-After when it
// may not. Any other error is a failure of Postgres, after which the
// request may be served: the key got its token, or (when the bucket could
// not be asked) a batch from memory for a second. An origin serves it and
// logs the error.
func (r *Rate) Take(ctx context.Context, key string) error {
	if r == nil || r.policy.PerSecond <= 0 {
		return nil
	}
	now := r.Now()
	r.mu.Lock()
	r.sweep(now)
	l := r.leases[key]
	if l == nil {
		l = &lease{}
		r.leases[key] = l
	}
	if l.tokens > 0 && now.Before(l.until) {
		l.tokens--
		r.mu.Unlock()
		return nil
	}
	if now.Before(l.empty) {
		retry := l.retry
		r.mu.Unlock()
		return r.refuse(retry)
	}
	r.mu.Unlock()

	var got struct {
		Granted int     `db:"granted"`
		Tokens  float64 `db:"tokens"`
	}
	p := r.policy
	err := r.db.GetContext(ctx, &got, takeSQL, p.Name+":"+key, p.Burst, r.batch, now, p.PerSecond)
	r.mu.Lock()
	if err != nil {
		l.tokens, l.until = r.batch-1, now.Add(leaseTime)
		r.mu.Unlock()
		return fmt.Errorf("rate %s: take: %w", p.Name, err)
	}
	if got.Granted == 0 {
		// Refused until one token is back; the bucket is asked again once
		// a batch can be.
		one := (1 - got.Tokens) / p.PerSecond
		l.retry = max(1, int(math.Ceil(one)))
		l.empty = now.Add(time.Duration(max(one, (float64(r.batch)-got.Tokens)/p.PerSecond) * float64(time.Second)))
		r.mu.Unlock()
		return r.refuse(l.retry)
	}
	if !now.Before(l.until) {
		l.tokens = 0
	}
	l.tokens += got.Granted - 1
	l.until = now.Add(leaseTime)
	due := now.Sub(r.purged) >= time.Minute
	if due {
		r.purged = now
	}
	r.mu.Unlock()
	if due {
		return r.purge(ctx, now)
	}
	return nil
}

func (r *Rate) refuse(retry int) error {
	return &problem.Error{Kind: problem.RateLimited, RetryAfter: retry, Detail: r.policy.Detail}
}

// sweep forgets, once a minute, the leases of keys not seen for a minute.
// It runs under r.mu.
func (r *Rate) sweep(now time.Time) {
	if now.Sub(r.swept) < time.Minute {
		return
	}
	r.swept = now
	for k, l := range r.leases {
		if now.Sub(l.until) > time.Minute && now.Sub(l.empty) > time.Minute {
			delete(r.leases, k)
		}
	}
}

// purge deletes the buckets of this policy that have refilled, so that
// keys never seen again do not pile up; Take calls it once a minute.
func (r *Rate) purge(ctx context.Context, now time.Time) error {
	full := time.Duration(float64(r.policy.Burst) / r.policy.PerSecond * float64(time.Second))
	if _, err := r.db.ExecContext(ctx, purgeRatesSQL, r.policy.Name, now.Add(-max(full, time.Minute))); err != nil {
		return fmt.Errorf("rate %s: purge: %w", r.policy.Name, err)
	}
	return nil
}

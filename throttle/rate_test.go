package throttle_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/throttle"
)

// rates returns two Rates of policy on one database (two origins) and a
// clock they share, stopped until the test moves it.
func rates(t *testing.T, p throttle.RatePolicy) (a, b *throttle.Rate, db *sqlx.DB, now *time.Time) {
	t.Helper()
	db, _ = pgtest.New(t)
	clock := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	a, b = throttle.NewRate(db, p), throttle.NewRate(db, p)
	a.Now = func() time.Time { return clock }
	b.Now = a.Now
	return a, b, db, &clock
}

// drain takes tokens of key from the rates in turn until each has been
// refused, and returns how many it got.
func drain(t *testing.T, key string, rs ...*throttle.Rate) int {
	t.Helper()
	got, refused := 0, map[int]bool{}
	for i := 0; len(refused) < len(rs); i++ {
		if i > 100_000 {
			t.Fatalf("drain %s: never refused", key)
		}
		n := i % len(rs)
		switch err := rs[n].Take(context.Background(), key); {
		case err == nil:
			got++
		case problem.Is(err, problem.RateLimited):
			refused[n] = true
		default:
			t.Fatalf("Take(%s) = %v", key, err)
		}
	}
	return got
}

// TestRateShared: two origins on one database allow a key's rate once
// between them, whatever the batches each one takes.
func TestRateShared(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		rate  float64
		burst int
	}{
		{"a token per take", 10, 10},
		{"batches of 20", 200, 200},
		{"a burst of a minute", 5, 300},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, b, _, now := rates(t, throttle.RatePolicy{Name: "fetch-key", PerSecond: tt.rate, Burst: tt.burst})
			if got := drain(t, "k1", a, b); got != tt.burst {
				t.Errorf("a full bucket shared by two origins gave %d requests, want %d", got, tt.burst)
			}
			err := a.Take(context.Background(), "k1")
			if !problem.Is(err, problem.RateLimited) || problem.RetryAfter(err) != 1 {
				t.Errorf("over the limit: Take = %v (Retry-After %d), want RateLimited, Retry-After 1", err, problem.RetryAfter(err))
			}
			if got := drain(t, "k2", a); got != tt.burst {
				t.Errorf("another key got %d requests, want its own %d", got, tt.burst)
			}
			// Two seconds refill twice the rate (the leases of before have
			// lapsed: nothing is counted twice).
			*now = now.Add(2 * time.Second)
			want := min(tt.burst, int(2*tt.rate))
			if got := drain(t, "k1", b, a); got != want {
				t.Errorf("after 2 s: %d requests, want %d", got, want)
			}
		})
	}
}

// TestRateNames: rates of different names never share a bucket.
func TestRateNames(t *testing.T) {
	t.Parallel()
	a, _, db, _ := rates(t, throttle.RatePolicy{Name: "fetch-key", PerSecond: 3})
	other := throttle.NewRate(db, throttle.RatePolicy{Name: "preview-key", PerSecond: 5})
	other.Now = a.Now
	if got := drain(t, "k", a); got != 3 {
		t.Errorf("fetch-key: %d requests, want 3", got)
	}
	if got := drain(t, "k", other); got != 5 {
		t.Errorf("preview-key with the same key: %d requests, want 5", got)
	}
	if p := a.Policy(); p.Burst != 3 || p.Detail == "" {
		t.Errorf("Policy() = %+v, want a burst of the rate and a detail", p)
	}
}

// TestRateFromMemory: an empty bucket is refused from memory (Postgres is
// not asked until a batch may have refilled), and when Postgres cannot be
// asked the key gets a batch from memory and the error.
func TestRateFromMemory(t *testing.T) {
	t.Parallel()
	// A connection of its own, to close under the Rate.
	_, url := pgtest.New(t)
	db, err := sqlx.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	r := throttle.NewRate(db, throttle.RatePolicy{Name: "preview-key", PerSecond: 100})
	clock := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	r.Now = func() time.Time { return clock }
	if got := drain(t, "k", r); got != 100 {
		t.Fatalf("%d requests, want 100", got)
	}
	db.Close()
	for i := 0; i < 1000; i++ {
		if err := r.Take(context.Background(), "k"); !problem.Is(err, problem.RateLimited) {
			t.Fatalf("refusal %d with Postgres gone = %v, want RateLimited from memory", i, err)
		}
	}
	// A batch (10 tokens at 100/s) later, the bucket is asked again: it
	// cannot be, so the key gets a batch from memory for a second.
	clock = clock.Add(100 * time.Millisecond)
	if err := r.Take(context.Background(), "k"); err == nil || problem.Is(err, problem.RateLimited) {
		t.Fatalf("Take with Postgres gone = %v, want the database's error", err)
	}
	for i := 1; i < 10; i++ {
		if err := r.Take(context.Background(), "k"); err != nil {
			t.Fatalf("take %d of the batch from memory = %v", i, err)
		}
	}
}

// TestRateOff: a rate of 0 limits nothing and touches no database.
func TestRateOff(t *testing.T) {
	var r *throttle.Rate
	if err := r.Take(context.Background(), "k"); err != nil {
		t.Errorf("nil Rate: %v", err)
	}
	off := throttle.NewRate(nil, throttle.RatePolicy{Name: "x"})
	for i := 0; i < 100; i++ {
		if err := off.Take(context.Background(), "k"); err != nil {
			t.Fatalf("rate 0: %v", err)
		}
	}
}

// TestRatePurge: buckets that have refilled are deleted, once a minute.
func TestRatePurge(t *testing.T) {
	t.Parallel()
	a, _, db, now := rates(t, throttle.RatePolicy{Name: "fetch-key", PerSecond: 10})
	count := func() (n int) {
		t.Helper()
		if err := db.Get(&n, `SELECT count(*) FROM rate_buckets`); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, k := range []string{"a", "b", "c"} {
		if err := a.Take(context.Background(), k); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(); n != 3 {
		t.Fatalf("%d buckets, want 3", n)
	}
	*now = now.Add(2 * time.Minute)
	if err := a.Take(context.Background(), "d"); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 1 {
		t.Errorf("after 2 idle minutes: %d buckets, want 1 (d)", n)
	}
}

// BenchmarkRateTake measures a take by a key sending at its rate: at 10 per
// second (a batch of one token: a round trip to Postgres per take) and at
// 1,000 (a batch of 100: a round trip per 100 takes).
func BenchmarkRateTake(b *testing.B) {
	db, _ := pgtest.New(b)
	for _, rate := range []float64{10, 1000} {
		b.Run(fmt.Sprintf("rate=%g", rate), func(b *testing.B) {
			r := throttle.NewRate(db, throttle.RatePolicy{Name: fmt.Sprintf("bench-%g", rate), PerSecond: rate})
			clock := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
			r.Now = func() time.Time { return clock }
			ctx := context.Background()
			key := fmt.Sprint(time.Now().UnixNano()) // a bucket of its own, whatever the runs before
			for i := 0; i < b.N; i++ {
				// The key sends at its rate: never refused.
				clock = clock.Add(time.Duration(float64(time.Second) / rate))
				if err := r.Take(ctx, key); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

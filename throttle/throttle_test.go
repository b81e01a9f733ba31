package throttle_test

import (
	"context"
	"testing"
	"time"

	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/throttle"
)

func TestLimiter(t *testing.T) {
	t.Parallel()
	db, _ := pgtest.New(t)
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	policy := throttle.Policy{Name: "login-email", Max: 3, Window: 10 * time.Minute, Block: 5 * time.Minute}
	// Two limiters on one database are two origins: they share the counts.
	a, b := throttle.New(db, policy), throttle.New(db, policy)
	a.Now, b.Now = clock, clock
	other := throttle.New(db, throttle.Policy{Name: "login-addr", Max: 1, Window: time.Minute, Block: time.Minute})
	other.Now = clock

	check := func(what string, l *throttle.Limiter, wantRetry int, keys ...string) {
		t.Helper()
		err := l.Check(ctx, keys...)
		if wantRetry == 0 {
			if err != nil {
				t.Errorf("%s: Check = %v, want nil", what, err)
			}
			return
		}
		if !problem.Is(err, problem.RateLimited) || problem.RetryAfter(err) != wantRetry {
			t.Errorf("%s: Check = %v (retry after %d), want RateLimited with retry after %d", what, err, problem.RetryAfter(err), wantRetry)
		}
	}
	fail := func(l *throttle.Limiter, key string) {
		t.Helper()
		if err := l.Fail(ctx, key); err != nil {
			t.Fatal(err)
		}
	}

	fail(a, "ann")
	fail(b, "ann")
	check("two failures", a, 0, "ann")
	now = now.Add(time.Minute)
	fail(b, "ann") // the third within the window blocks for 5 minutes
	check("three failures, on a", a, 300, "ann")
	check("three failures, on b", b, 300, "bob", "ann")
	check("another key", a, 0, "bob")
	check("the same key under another name", other, 0, "ann")

	now = now.Add(4*time.Minute + 30*time.Second)
	check("30 s before the block ends", a, 30, "ann")
	now = now.Add(30 * time.Second)
	check("when the block ends", a, 0, "ann")

	// Failures spread wider than the window never block.
	for range 5 {
		now = now.Add(11 * time.Minute)
		fail(a, "cid")
		fail(a, "cid")
	}
	check("two failures per window", a, 0, "cid")

	// A reset forgets the failures.
	fail(a, "dee")
	fail(a, "dee")
	if err := a.Reset(ctx, "dee"); err != nil {
		t.Fatal(err)
	}
	fail(a, "dee")
	fail(a, "dee")
	check("two failures after a reset", a, 0, "dee")

	// Max 1: the first failure blocks.
	fail(other, "10.0.0.1")
	check("max 1", other, 60, "10.0.0.1")

	// Old counts are purged once their window and block have passed.
	now = now.Add(time.Hour)
	fail(a, "eve")
	var keys []string
	if err := db.Select(&keys, `SELECT key FROM throttle WHERE starts_with(key, 'login-email:') ORDER BY key`); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0] != "login-email:eve" {
		t.Errorf("keys after an hour = %q, want only login-email:eve", keys)
	}
}

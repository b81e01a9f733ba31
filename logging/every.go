package logging

import (
	"sync"
	"time"
)

// Every lets a loop that fails on every round (a poll every 50 ms while
// Postgres is down) log its failure once per interval rather than once per
// round: the first failure is logged at once, then at most one per
// interval, saying how many were not logged meanwhile.
type Every struct {
	interval time.Duration
	now      func() time.Time

	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// NewEvery returns an Every of interval.
func NewEvery(interval time.Duration) *Every { return &Every{interval: interval, now: time.Now} }

// Allow reports whether to log this failure, and how many failures were
// not logged since the last one that was.
func (e *Every) Allow() (ok bool, suppressed int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	if !e.last.IsZero() && now.Sub(e.last) < e.interval {
		e.suppressed++
		return false, 0
	}
	e.last, suppressed, e.suppressed = now, e.suppressed, 0
	return true, suppressed
}

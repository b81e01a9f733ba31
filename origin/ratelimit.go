package origin

import (
	"math"
	"sync"
	"time"

	"github.com/edgecms/edgecms/problem"
)

// rateLimiter is a token bucket per API key: rate requests per second with
// a burst of the same size. Requests an edge or CDN answers from its cache
// never reach it.
type rateLimiter struct {
	rate float64
	now  func() time.Time

	mu      sync.Mutex
	buckets map[[32]byte]*bucket
	swept   time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newRateLimiter(perSecond int) *rateLimiter {
	return &rateLimiter{rate: float64(perSecond), now: time.Now, buckets: map[[32]byte]*bucket{}}
}

// allow takes a token from key's bucket, or returns a RateLimited problem
// with the seconds until the next token.
func (rl *rateLimiter) allow(key [32]byte) error {
	if rl == nil || rl.rate <= 0 {
		return nil
	}
	now := rl.now()
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if now.Sub(rl.swept) > time.Minute {
		for k, b := range rl.buckets {
			if now.Sub(b.last) > time.Minute {
				delete(rl.buckets, k)
			}
		}
		rl.swept = now
	}
	b, ok := rl.buckets[key]
	if !ok {
		b = &bucket{tokens: rl.rate, last: now}
		rl.buckets[key] = b
	}
	b.tokens = math.Min(rl.rate, b.tokens+now.Sub(b.last).Seconds()*rl.rate)
	b.last = now
	if b.tokens < 1 {
		wait := int(math.Ceil((1 - b.tokens) / rl.rate))
		return &problem.Error{Kind: problem.RateLimited, RetryAfter: max(wait, 1),
			Detail: "more than the allowed direct requests per second for this API key; retry after the Retry-After seconds"}
	}
	b.tokens--
	return nil
}

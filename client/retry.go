package client

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// CheckRetry decides, after each attempt, whether the request is tried
// again. resp is nil when err (a transport error) is not. A non-nil error
// ends the retries and is returned instead of the attempt's outcome. It has
// the shape of go-retryablehttp's CheckRetry.
type CheckRetry func(ctx context.Context, resp *http.Response, err error) (bool, error)

// Backoff decides how long to wait before retry number attempt (0 for the
// first retry), given the base wait min, the cap max and the failed
// response (nil after a transport error). The Client never waits longer than
// max, whatever a Backoff returns. It has the shape of go-retryablehttp's
// Backoff.
type Backoff func(min, max time.Duration, attempt int, resp *http.Response) time.Duration

// Seams for tests: the clock that Retry-After dates are measured against and
// the source of jitter, a number in [0, 1).
var (
	timeNow = time.Now
	jitter  = rand.Float64
)

// DefaultCheckRetry retries connection errors (but not invalid URLs,
// certificate failures or redirect loops, as go-retryablehttp decides) and
// the answers 408, 429 and 5xx except 501 Not Implemented. It stops when ctx
// is done. Any other answer, 4xx included, is final.
func DefaultCheckRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err != nil {
		return retryablehttp.DefaultRetryPolicy(ctx, nil, err)
	}
	return retryableStatus(resp.StatusCode), nil
}

// retryableStatus reports whether an answer with this status is worth trying
// again: a timeout, a rate limit or a server failure.
func retryableStatus(code int) bool {
	switch {
	case code == http.StatusRequestTimeout, code == http.StatusTooManyRequests:
		return true
	case code == http.StatusNotImplemented:
		return false
	default:
		return code >= 500 && code <= 599
	}
}

// DefaultBackoff waits as long as the response's Retry-After header asks
// (seconds or an HTTP date), up to max. Without one it backs off
// exponentially from min, doubling with each attempt up to max, with "equal
// jitter": a random wait between half and all of that step, so that clients
// failing together do not retry together.
func DefaultBackoff(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil {
		if d, ok := retryAfter(resp.Header, timeNow()); ok {
			return clamp(d, 0, max)
		}
	}
	step := max
	if attempt < 62 && min > 0 && min <= max>>attempt {
		step = min << attempt
	}
	half := step / 2
	return half + time.Duration(jitter()*float64(step-half))
}

// retryAfter reads the Retry-After header as delay seconds or an HTTP date
// relative to now. A date in the past is a wait of 0; a missing, negative or
// unreadable value is no answer.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(24*time.Hour/time.Second) {
			secs = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

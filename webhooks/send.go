package webhooks

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/edgecms/edgecms/webhooks/egress"
	"github.com/edgecms/edgecms/webhooks/signature"
)

// userAgent identifies deliveries to receivers.
const userAgent = "edgecms-webhooks/1"

// drainBytes is how much of a response beyond ResponseTextBytes is read
// (and dropped) so that the connection can be reused; a longer body closes it.
const drainBytes = 64 << 10

// outcome is what one attempt gave.
type outcome struct {
	at         time.Time     // when it started (the webhook-timestamp)
	code       int           // HTTP status; 0 when the request itself failed
	text       string        // the start of the response body
	err        string        // a short description of a failure
	signed     bool          // it carried a webhook-signature
	keys       int           // how many signatures it carried
	retryAfter time.Duration // the endpoint's Retry-After, if any
	timeout    bool          // no answer came in time: connecting or waiting for it timed out
}

func (o outcome) ok() bool { return o.code >= 200 && o.code <= 299 }

// attempt sends the delivery of j once: a POST of the payload, signed afresh
// with every secret valid now, and reads at most a bounded part of the
// answer. It never follows a redirect.
func (s *Store) attempt(ctx context.Context, j job) outcome {
	o := outcome{at: s.now()}
	secrets, err := s.secrets(j.webhookRow, o.at)
	if err != nil {
		o.err = clip(err.Error(), 300)
		return o
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.URL, bytes.NewReader(j.Payload))
	if err != nil {
		o.err = clip("bad webhook URL: "+err.Error(), 300)
		return o
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	// Every delivery carries its id and time, signed or not: receivers use
	// the id as their idempotency key (Standard Webhooks).
	req.Header.Set(signature.HeaderID, j.DeliveryID)
	req.Header.Set(signature.HeaderTimestamp, signature.Timestamp(o.at))
	if len(secrets) > 0 {
		sig, err := signature.Sign(j.DeliveryID, o.at, j.Payload, secrets...)
		if err != nil {
			o.err = clip(err.Error(), 300)
			return o
		}
		req.Header.Set(signature.HeaderSignature, sig)
		o.signed, o.keys = true, len(secrets)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		o.err, o.timeout = describe(err, s.timeout, s.connect, errors.Is(ctx.Err(), context.DeadlineExceeded))
		return o
	}
	defer resp.Body.Close()
	o.code = resp.StatusCode
	body, err := io.ReadAll(io.LimitReader(resp.Body, ResponseTextBytes))
	o.text = clip(strings.ReplaceAll(strings.ToValidUTF8(string(body), "\uFFFD"), "\x00", ""), ResponseTextBytes)
	if err == nil {
		io.Copy(io.Discard, io.LimitReader(resp.Body, drainBytes))
	}
	// A 2xx counts even when its body breaks off: the endpoint accepted.
	switch {
	case o.ok():
	case o.code >= 300 && o.code <= 399:
		o.err = fmt.Sprintf("HTTP %d: redirects are not followed", o.code)
		if loc := resp.Header.Get("Location"); loc != "" {
			o.err = clip(fmt.Sprintf("HTTP %d: redirect to %s not followed", o.code, loc), 300)
		}
	default:
		o.err = fmt.Sprintf("HTTP %d", o.code)
	}
	if !o.ok() {
		o.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), o.at)
	}
	return o
}

// describe turns the error of a request that got no response into a short,
// clear lastError, and tells whether it was a timeout (which the breaker
// counts): connecting took longer than connect, or the whole attempt
// (expired, when its deadline has passed) longer than timeout.
func describe(err error, timeout, connect time.Duration, expired bool) (string, bool) {
	var refused *egress.RefusedError
	if errors.As(err, &refused) {
		return clip(refused.Error(), 300), false
	}
	var op *net.OpError
	var ne net.Error
	switch {
	case expired:
		return fmt.Sprintf("timeout: no complete answer within %s", timeout), true
	// The dial's own timeout may or may not read as DeadlineExceeded.
	case errors.As(err, &op) && op.Op == "dial" && op.Timeout():
		return fmt.Sprintf("timeout: could not connect within %s", connect), true
	case strings.Contains(err.Error(), "TLS handshake timeout"):
		return fmt.Sprintf("timeout: no TLS handshake within %s", connect), true
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return fmt.Sprintf("timeout: no complete answer within %s", timeout), true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return clip(fmt.Sprintf("DNS lookup of %s failed: %s", dns.Name, dns.Err), 300), false
	}
	var cert *tls.CertificateVerificationError
	if errors.As(err, &cert) {
		return clip("TLS certificate not valid: "+cert.Err.Error(), 300), false
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.As(err, &op) && op.Err != nil {
		return clip(op.Op+": "+op.Err.Error(), 300), false
	}
	return clip(err.Error(), 300), false
}

// parseRetryAfter reads a Retry-After header: seconds, or an HTTP date
// relative to now. It returns 0 when absent or unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		if n > int64(MaxDelay/time.Second) {
			return MaxDelay
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), MaxDelay)
	}
	return 0
}

// FirstDelay is the delay before the first retry at a speed.
func FirstDelay(sp Speed) time.Duration {
	switch sp {
	case SpeedFast:
		return 30 * time.Second
	case SpeedSlow:
		return 30 * time.Minute
	default:
		return 5 * time.Minute
	}
}

// Jitter is the relative random spread of retry delays: a delay is its
// nominal value times a factor from 1-Jitter to 1+Jitter.
const Jitter = 0.2

// Delay returns the delay before retry n (1 for the first retry) at speed
// sp: FirstDelay, four times longer for each later retry, spread by Jitter
// with r (a random number in [0, 1)), and never over MaxDelay.
func Delay(sp Speed, n int, r float64) time.Duration {
	d := FirstDelay(sp)
	for i := 1; i < n && d < MaxDelay; i++ {
		d *= 4
	}
	d = min(d, MaxDelay)
	d = time.Duration(float64(d) * (1 - Jitter + 2*Jitter*r))
	return min(d, MaxDelay)
}

// honour applies an endpoint's Retry-After to a scheduled delay: it is
// followed within [scheduled, 2 x scheduled], and never over MaxDelay.
func honour(scheduled, retryAfter time.Duration) time.Duration {
	if retryAfter <= 0 {
		return scheduled
	}
	d := min(max(retryAfter, scheduled), 2*scheduled)
	return min(d, MaxDelay)
}

// result is what becomes of a delivery after an attempt.
type result struct {
	ID        string
	WebhookID string
	Breaker   bool // the webhook had a breaker when the delivery was claimed
	Status    string
	Attempted bool
	outcome
	Next *time.Time
}

// complete decides what follows attempt o of j: success on a 2xx; otherwise
// a retry when retries are on and some are left, at a delay from Delay (with
// r, a random number source; nil means no jitter) and the endpoint's
// Retry-After; otherwise failure.
func (s *Store) complete(j job, o outcome, r func() float64) result {
	res := result{ID: j.DeliveryID, WebhookID: j.ID, Breaker: j.Breaker, Attempted: true, outcome: o}
	tries := j.ChainAttempts + 1 // attempts in this chain, this one included
	switch {
	case o.ok():
		res.Status = StatusSucceeded
	case !j.RetriesEnabled || tries-1 >= j.RetryCount:
		res.Status = StatusFailed
	default:
		rnd := 0.5
		if r != nil {
			rnd = r()
		}
		next := o.at.Add(honour(Delay(j.RetrySpeed, tries, rnd), o.retryAfter))
		res.Status, res.Next = StatusRetrying, &next
	}
	return res
}

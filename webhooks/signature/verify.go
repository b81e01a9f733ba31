package signature

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The reasons a delivery fails verification. Errors returned by Verify wrap
// exactly one of them, so a receiver can tell why with errors.Is.
var (
	// ErrMissingHeaders means webhook-id, webhook-timestamp or
	// webhook-signature is absent or empty.
	ErrMissingHeaders = errors.New("missing webhook header")
	// ErrInvalidTimestamp means webhook-timestamp is not a non-negative
	// integer number of seconds.
	ErrInvalidTimestamp = errors.New("invalid webhook timestamp")
	// ErrTimestampTooOld means webhook-timestamp is further in the past than
	// the tolerance allows: a stale or replayed delivery.
	ErrTimestampTooOld = errors.New("webhook timestamp too old")
	// ErrTimestampTooNew means webhook-timestamp is further in the future
	// than the tolerance allows.
	ErrTimestampTooNew = errors.New("webhook timestamp too new")
	// ErrNoMatchingSignature means no v1 entry of webhook-signature is a
	// valid signature of the delivery under any of the secrets.
	ErrNoMatchingSignature = errors.New("no matching webhook signature")
)

// DefaultTolerance is how far webhook-timestamp may be from the receiver's
// clock, in either direction, when a Verifier sets no Tolerance.
const DefaultTolerance = 5 * time.Minute

// A Verifier checks signed deliveries against a set of secrets, for example
// the current and the previous secret during a rotation. Build one with
// NewVerifier; it is safe for concurrent use once built.
type Verifier struct {
	keys [][]byte

	// Tolerance is how far webhook-timestamp may be from now, in either
	// direction; zero or negative means DefaultTolerance.
	Tolerance time.Duration
}

// NewVerifier returns a Verifier that accepts deliveries signed with any of
// the secrets (each "whsec_..." or bare base64, as ParseSecret accepts).
func NewVerifier(secrets ...string) (*Verifier, error) {
	if len(secrets) == 0 {
		return nil, errors.New("new verifier: no secret")
	}
	v := &Verifier{keys: make([][]byte, 0, len(secrets))}
	for i, s := range secrets {
		key, err := ParseSecret(s)
		if err != nil {
			return nil, fmt.Errorf("new verifier: secret %d: %w", i+1, err)
		}
		v.keys = append(v.keys, key)
	}
	return v, nil
}

// Verify reports whether a delivery with headers h and the exact, unparsed
// body bytes is authentic and fresh at time now. It returns nil when
// webhook-timestamp is an integer within the tolerance of now and at least one
// "v1," entry of webhook-signature matches one of the secrets; entries of
// other versions are skipped. Signatures are compared in constant time. A
// non-nil error wraps one of the Err values of this package.
func (v *Verifier) Verify(h http.Header, body []byte, now time.Time) error {
	id, ts := h.Get(HeaderID), h.Get(HeaderTimestamp)
	sigs := h.Values(HeaderSignature)
	switch {
	case id == "":
		return fmt.Errorf("%w: %s", ErrMissingHeaders, HeaderID)
	case ts == "":
		return fmt.Errorf("%w: %s", ErrMissingHeaders, HeaderTimestamp)
	case strings.TrimSpace(strings.Join(sigs, "")) == "":
		return fmt.Errorf("%w: %s", ErrMissingHeaders, HeaderSignature)
	}

	sent, err := parseTimestamp(ts)
	if err != nil {
		return err
	}
	tolerance := v.Tolerance
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	limit := int64(tolerance / time.Second)
	switch age := now.Unix() - sent; {
	case age > limit:
		return fmt.Errorf("%w: %ds before now, tolerance %s", ErrTimestampTooOld, age, tolerance)
	case age < -limit:
		return fmt.Errorf("%w: %ds after now, tolerance %s", ErrTimestampTooNew, -age, tolerance)
	}

	want := make([][]byte, len(v.keys))
	for i, key := range v.keys {
		want[i] = mac(key, id, ts, body)
	}
	for _, value := range sigs {
		for _, entry := range strings.Fields(value) {
			version, enc, ok := strings.Cut(entry, ",")
			if !ok || version != "v1" {
				continue
			}
			got, err := base64.StdEncoding.DecodeString(enc)
			if err != nil || len(got) != sha256.Size {
				continue
			}
			for _, w := range want {
				if hmac.Equal(got, w) {
					return nil
				}
			}
		}
	}
	return ErrNoMatchingSignature
}

// Verify is a shorthand for NewVerifier(secrets...) followed by Verify with
// the default tolerance. A receiver that verifies many deliveries should
// build one Verifier instead, so the secrets are decoded once.
func Verify(secrets []string, h http.Header, body []byte, now time.Time) error {
	v, err := NewVerifier(secrets...)
	if err != nil {
		return err
	}
	return v.Verify(h, body, now)
}

// parseTimestamp parses a webhook-timestamp value, which must be decimal
// digits only: no sign, no fraction, no exponent, no spaces.
func parseTimestamp(s string) (int64, error) {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%w: %q is not an integer", ErrInvalidTimestamp, clip(s))
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is out of range", ErrInvalidTimestamp, clip(s))
	}
	return n, nil
}

// clip shortens a header value quoted in an error, so that a hostile sender
// cannot make a receiver log megabytes.
func clip(s string) string {
	const max = 32
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}

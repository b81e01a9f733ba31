// Package webhooks sends edgecms's outbound webhooks: it turns the content
// event log into signed HTTP deliveries to the URLs customers configure, and
// keeps each delivery's history.
//
// A Store holds the webhooks of every instance, their signing secrets
// (encrypted at rest with EDGECMS_SECRET_KEY) and the deliveries; the origin
// uses it for the management API. A Dispatcher reads the event log, queues
// one delivery per matching webhook in a durable Postgres queue (merging a
// repeated event into a still-queued delivery), and attempts deliveries with
// retries and backoff. Published and Deleted events are queued only after the
// publisher has confirmed that the object store serves the new state, so a
// receiver that re-fetches on the webhook gets the new version.
//
// Any number of dispatchers may run against one database: deliveries are
// claimed with a lease, and a delivery whose dispatcher dies is attempted
// again, under the same webhook-id, when the lease ends. Claims are fair:
// a few deliveries in flight per webhook and per instance at most, counted
// in Postgres for all dispatchers, and a webhook whose attempts keep timing
// out is paused by a breaker, so that one tenant's hanging receivers never
// hold the workers the others need. See README.md for
// the delivery state machine. Signing and verification are in the signature
// package; the guard against server-side request forgery is in egress.
package webhooks

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/internal/pg"
	"github.com/edgecms/edgecms/webhooks/egress"
)

// Speed is how quickly failed deliveries are retried.
type Speed string

// The retry speeds: the delay before the first retry.
const (
	SpeedFast     Speed = "fast"     // about 30 seconds
	SpeedStandard Speed = "standard" // about 5 minutes
	SpeedSlow     Speed = "slow"     // about 30 minutes
)

// Limits of the spec.
const (
	// MinRetries and MaxRetries bound retryCount: retries after the first attempt.
	MinRetries = 1
	MaxRetries = 8
	// MaxDelay is the longest delay before a retry.
	MaxDelay = 24 * time.Hour
	// MergeWindow is how long after it was queued a delivery absorbs a
	// repeated event for the same subject.
	MergeWindow = 30 * time.Second
	// Overlap is how long the previous secret still signs after a rotation.
	Overlap = 24 * time.Hour
	// Retention is how long delivery history is kept.
	Retention = 90 * 24 * time.Hour
	// ResponseTextBytes is how much of a response body the history keeps.
	ResponseTextBytes = 8 << 10
	// DefaultTimeout is the default per-attempt timeout.
	DefaultTimeout = 15 * time.Second
	// DefaultEndpointConcurrency is how many deliveries to one webhook are
	// attempted at once at most, by all dispatchers together.
	DefaultEndpointConcurrency = 4
	// DefaultInstanceConcurrency is how many deliveries of one instance are
	// attempted at once at most, by all dispatchers together.
	DefaultInstanceConcurrency = 16
	// DefaultBreakerTimeouts is how many attempts in a row to one webhook
	// get no answer in time before its breaker opens.
	DefaultBreakerTimeouts = 5
	// BreakerPause is how long an opened breaker holds its webhook's
	// deliveries the first time; it doubles each time the breaker opens
	// again without an answer in between, up to BreakerMaxPause.
	BreakerPause    = 30 * time.Second
	BreakerMaxPause = 30 * time.Minute
)

// Options configures a Store.
type Options struct {
	// Key encrypts signing secrets at rest (KeySize bytes; see LoadKey).
	Key []byte
	// Policy decides which addresses deliveries may connect to; nil refuses
	// every loopback, private and link-local address.
	Policy *egress.Policy
	// Timeout bounds one attempt, from connecting to reading the response
	// (default DefaultTimeout).
	Timeout time.Duration
	// ConnectTimeout bounds connecting to an endpoint, the TCP connect and
	// then the TLS handshake, within Timeout (default
	// egress.DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// BreakerTimeouts is how many attempts in a row to one webhook may
	// time out (connecting or waiting for the answer) before its breaker
	// opens: its deliveries then wait, BreakerPause at first, rather than
	// hold workers (default DefaultBreakerTimeouts).
	BreakerTimeouts int
	// Conns is how many idle connections to one endpoint are kept for reuse
	// (default 64).
	Conns int
}

// Store is the Postgres repository of webhooks and their deliveries, and
// the sender of single attempts. It is safe for concurrent use.
type Store struct {
	db      *sqlx.DB
	seal    *sealer
	policy  *egress.Policy
	client  *http.Client
	timeout time.Duration
	connect time.Duration
	// breakAfter is how many timeouts in a row open a webhook's breaker.
	breakAfter int

	claimMu       sync.Mutex
	claimPrepared *sqlx.Stmt // claimSQL, prepared on first use

	// Now is the clock; tests replace it. Every time the store writes or
	// compares (queue, lease, retry, merge window, rotation overlap,
	// retention, webhook-timestamp) comes from it.
	Now func() time.Time
}

// NewStore returns a Store on db, which must hold the schema.
func NewStore(db *sqlx.DB, opt Options) (*Store, error) {
	seal, err := newSealer(opt.Key)
	if err != nil {
		return nil, err
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.Conns <= 0 {
		opt.Conns = 64
	}
	if opt.ConnectTimeout <= 0 {
		opt.ConnectTimeout = egress.DefaultConnectTimeout
	}
	if opt.BreakerTimeouts <= 0 {
		opt.BreakerTimeouts = DefaultBreakerTimeouts
	}
	tr := opt.Policy.TransportWith(opt.ConnectTimeout)
	tr.MaxIdleConns = opt.Conns * 4
	tr.MaxIdleConnsPerHost = opt.Conns
	tr.ResponseHeaderTimeout = opt.Timeout
	client := &http.Client{
		Transport: tr,
		// A redirect is a failure, never followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &Store{db: db, seal: seal, policy: opt.Policy, client: client, timeout: opt.Timeout,
		connect: opt.ConnectTimeout, breakAfter: opt.BreakerTimeouts,
		Now: func() time.Time { return time.Now().UTC() }}, nil
}

// now returns the clock's time in UTC at the database's precision.
func (s *Store) now() time.Time { return s.Now().UTC().Truncate(time.Microsecond) }

// newID returns a random identifier with a prefix: 26 characters of
// lower-case base32 (130 bits of randomness).
func newID(prefix string) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("webhooks: crypto/rand failed: " + err.Error())
	}
	return prefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// transact runs fn in a transaction (pg.Transact: rollback on error and
// on panic, serialization failures and deadlocks retried).
func (s *Store) transact(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	return pg.Transact(ctx, s.db, fn)
}

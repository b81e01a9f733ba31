package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/edgecms/edgecms/logging"
	"github.com/edgecms/edgecms/metrics"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/internal/pg"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// DispatcherConfig configures a Dispatcher. Zero members take the defaults
// given.
type DispatcherConfig struct {
	// Workers is how many attempts run at once (default 64).
	Workers int
	// EndpointConcurrency is how many deliveries to one webhook are
	// attempted at once at most, by every dispatcher of the database
	// together (default DefaultEndpointConcurrency).
	EndpointConcurrency int
	// InstanceConcurrency is how many deliveries of one instance are
	// attempted at once at most, by every dispatcher together (default
	// DefaultInstanceConcurrency). Keep it below Workers, so that an
	// instance whose endpoints hang leaves workers to the others.
	InstanceConcurrency int
	// Batch is how many events one intake reads, and the most deliveries
	// one claim takes (default 256).
	Batch int
	// Poll is how often the dispatcher looks for new events, confirmed
	// events and due deliveries when it has nothing to do (default 50 ms).
	Poll time.Duration
	// ListenURL, when set, is the Postgres URL on which the dispatcher
	// LISTENs so that it wakes at once, rather than at its next poll, when
	// an event is written (channel edgecms_events, which a trigger on the
	// event log notifies), confirmed (edgecms_confirmations) or a delivery
	// is queued by another process (edgecms_webhooks).
	ListenURL string
	// Lease is how long a claimed delivery stays reserved to this
	// dispatcher; if it dies, another attempts the delivery after the lease
	// ends (default the store's timeout plus 45 s).
	Lease time.Duration
	// RequireConfirmation makes Published and Deleted events wait, before
	// their deliveries are queued, until the publisher has recorded in
	// event_confirmations that the object store holds the new state. Set it
	// wherever a publisher runs (edgecms serve does); without a publisher
	// nothing would ever confirm, and deliveries would wait for
	// ConfirmationTimeout.
	RequireConfirmation bool
	// ConfirmationTimeout is how long an event waits for its confirmation
	// before it is delivered anyway, with a warning (default 10 minutes;
	// negative: wait forever).
	ConfirmationTimeout time.Duration
	// Retention is how long delivery history is kept (default Retention).
	Retention time.Duration
	// TrimEvery is how often history older than Retention is deleted
	// (default 1 hour).
	TrimEvery time.Duration
	// Consumer is the dispatcher's name in the event log's cursors
	// (default "webhooks"); every dispatcher of one deployment shares it.
	Consumer string
	// Rand returns random numbers in [0, 1) for the jitter of retry
	// delays (default math/rand/v2).
	Rand func() float64
}

// Dispatcher turns events into deliveries and attempts them. Any number of
// dispatchers may run against one database.
type Dispatcher struct {
	store  *Store
	cfg    DispatcherConfig
	log    *slog.Logger
	owner  string // this dispatcher's lease owner name
	limits limits

	inflight atomic.Int64
	// finished holds the deliveries whose attempts have ended but are not
	// recorded yet: still leased, but no longer at their endpoints, so the
	// claim does not count them against the caps.
	finished struct {
		sync.Mutex
		ids map[string]struct{}
	}
	wake   chan struct{} // deliveries may be due
	events chan struct{} // events may have been written or confirmed
	// quiet keeps each loop's failures to a log line per logEvery.
	quiet struct{ claim, intake, promote *logging.Every }

	// afterIntake, when set (by tests), gets the events of each intake
	// once its transaction has committed.
	afterIntake func([]eventlog.Event)
}

// NewDispatcher returns a dispatcher of the deliveries in s.
func NewDispatcher(s *Store, cfg DispatcherConfig, log *slog.Logger) *Dispatcher {
	if cfg.Workers <= 0 {
		cfg.Workers = 64
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 256
	}
	if cfg.EndpointConcurrency <= 0 {
		cfg.EndpointConcurrency = DefaultEndpointConcurrency
	}
	if cfg.InstanceConcurrency <= 0 {
		cfg.InstanceConcurrency = DefaultInstanceConcurrency
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 50 * time.Millisecond
	}
	if cfg.Lease <= 0 {
		cfg.Lease = s.timeout + 45*time.Second
	}
	if cfg.ConfirmationTimeout == 0 {
		cfg.ConfirmationTimeout = 10 * time.Minute
	}
	if cfg.Retention <= 0 {
		cfg.Retention = Retention
	}
	if cfg.TrimEvery <= 0 {
		cfg.TrimEvery = time.Hour
	}
	if cfg.Consumer == "" {
		cfg.Consumer = "webhooks"
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	d := &Dispatcher{store: s, cfg: cfg, log: log, owner: newID("d_"),
		limits: limits{endpoint: cfg.EndpointConcurrency, instance: cfg.InstanceConcurrency},
		wake:   make(chan struct{}, 1), events: make(chan struct{}, 1)}
	d.finished.ids = map[string]struct{}{}
	d.quiet.claim, d.quiet.intake, d.quiet.promote = logging.NewEvery(logEvery), logging.NewEvery(logEvery), logging.NewEvery(logEvery)
	return d
}

// EndpointConcurrency is how many deliveries to one webhook d lets be in
// flight at once.
func (d *Dispatcher) EndpointConcurrency() int { return d.cfg.EndpointConcurrency }

// The channels the dispatcher LISTENs on.
const (
	notifyEvents        = "edgecms_events"
	notifyConfirmations = "edgecms_confirmations"
	notifyDeliveries    = "edgecms_webhooks"
)

// poke wakes whoever waits on c, without blocking.
func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// signal wakes the claimer.
func (d *Dispatcher) signal() { poke(d.wake) }

// listen relays notifications to the intake and the claimer until ctx is
// cancelled.
func (d *Dispatcher) listen(ctx context.Context) {
	l := pq.NewListener(d.cfg.ListenURL, 50*time.Millisecond, 5*time.Second, func(ev pq.ListenerEventType, err error) {
		if err != nil && ctx.Err() == nil {
			d.log.Warn("listen for notifications (polling meanwhile)", "err", err)
		}
	})
	defer l.Close()
	for _, ch := range []string{notifyEvents, notifyConfirmations, notifyDeliveries} {
		if err := l.Listen(ch); err != nil {
			d.log.Warn("listen for notifications (polling instead)", "channel", ch, "err", err)
			return
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case n := <-l.Notify:
			switch {
			case n == nil: // reconnected: something may have been missed
				poke(d.events)
				d.signal()
			case n.Channel == notifyDeliveries:
				d.signal()
			default:
				poke(d.events)
			}
		}
	}
}

// Run queues and attempts deliveries until ctx is cancelled. Attempts in
// flight then finish (within the store's timeout) and are recorded;
// deliveries claimed but not started are given back.
func (d *Dispatcher) Run(ctx context.Context) error {
	jobs := make(chan job)
	results := make(chan result, d.cfg.Workers)
	var workers, loops sync.WaitGroup
	attemptCtx := context.WithoutCancel(ctx)
	for range d.cfg.Workers {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for j := range jobs {
				r := d.handle(attemptCtx, j)
				// The slot is free for another attempt; the result keeps
				// its delivery leased until it is recorded.
				d.finish(j.DeliveryID, true)
				d.inflight.Add(-1)
				d.signal()
				results <- r
			}
		}()
	}
	flushed := make(chan struct{})
	go func() { d.flushLoop(attemptCtx, results); close(flushed) }()
	if d.cfg.ListenURL != "" {
		loops.Add(1)
		go func() { defer loops.Done(); d.listen(ctx) }()
	}
	loops.Add(2)
	go func() { defer loops.Done(); d.intakeLoop(ctx) }()
	go func() { defer loops.Done(); d.trimLoop(ctx) }()

	d.claimLoop(ctx, jobs)
	close(jobs)
	workers.Wait()
	close(results)
	<-flushed
	loops.Wait()
	return nil
}

// handle attempts the delivery of j, unless its webhook has been disabled
// since it was queued: then it fails without an attempt.
func (d *Dispatcher) handle(ctx context.Context, j job) result {
	if !j.Enabled {
		return result{ID: j.DeliveryID, WebhookID: j.ID, Status: StatusFailed,
			outcome: outcome{at: d.store.now(), err: "not sent: the webhook is disabled"}}
	}
	r := d.store.complete(j, d.store.attempt(ctx, j), d.cfg.Rand)
	d.observe(j, r)
	return r
}

// logFailure logs a failure of a loop's round at error, once per
// logEvery at most: with Postgres down every round fails, 20 times a
// second.
func (d *Dispatcher) logFailure(every *logging.Every, msg string, args ...any) {
	ok, n := every.Allow()
	if !ok {
		return
	}
	if n > 0 {
		args = append(args, "alike_not_logged", n)
	}
	d.log.Error(msg, args...)
}

// logEvery is how often a failing loop logs its failure.
const logEvery = 10 * time.Second

// observe counts an attempt's result in the metrics and logs a failed one
// at warn, with the webhook's id and name but not its URL (whose query may
// hold the receiver's credential).
func (d *Dispatcher) observe(j job, r result) {
	switch r.Status {
	case StatusSucceeded:
		metrics.WebhookDeliveries.WithLabelValues("success").Inc()
		return
	case StatusRetrying:
		metrics.WebhookDeliveries.WithLabelValues("retry").Inc()
	default:
		metrics.WebhookDeliveries.WithLabelValues("failure").Inc()
	}
	metrics.WebhookFailures.WithLabelValues(metrics.StatusClass(r.code)).Inc()
	attrs := []any{"webhook", j.ID, "name", j.Name, "delivery", j.DeliveryID, "status", r.code,
		"attempt", j.ChainAttempts + 1, "result", string(r.Status)}
	if r.err != "" {
		attrs = append(attrs, "err", r.err)
	}
	if r.Next != nil {
		attrs = append(attrs, "next", r.Next.UTC().Format(time.RFC3339))
	}
	d.log.Warn("webhook delivery failed", attrs...)
}

// claimLoop claims due deliveries for free workers and hands them over.
func (d *Dispatcher) claimLoop(ctx context.Context, jobs chan<- job) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		free := int64(d.cfg.Workers) - d.inflight.Load()
		full := false
		if free > 0 {
			js, err := d.store.claim(ctx, d.owner, int(min(free, int64(d.cfg.Batch))), d.store.now(), d.cfg.Lease, d.limits, d.finishedIDs())
			if err != nil && ctx.Err() == nil {
				d.logFailure(d.quiet.claim, "claim deliveries", "err", err)
			}
			d.inflight.Add(int64(len(js)))
			for i, j := range js {
				select {
				case jobs <- j:
				case <-ctx.Done():
					d.giveBack(js[i:])
					return
				}
			}
			full = len(js) > 0 && int64(len(js)) == min(free, int64(d.cfg.Batch))
		}
		if full {
			// More may be due; claim again as soon as a worker is free.
			select {
			case <-ctx.Done():
				return
			default:
				continue
			}
		}
		timer.Reset(d.cfg.Poll)
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-timer.C:
		}
	}
}

// finish adds a delivery to the finished ones, or removes it once its
// result is recorded.
func (d *Dispatcher) finish(id string, ended bool) {
	d.finished.Lock()
	defer d.finished.Unlock()
	if ended {
		d.finished.ids[id] = struct{}{}
	} else {
		delete(d.finished.ids, id)
	}
}

// finishedIDs returns the finished deliveries.
func (d *Dispatcher) finishedIDs() []string {
	d.finished.Lock()
	defer d.finished.Unlock()
	ids := make([]string, 0, len(d.finished.ids))
	for id := range d.finished.ids {
		ids = append(ids, id)
	}
	return ids
}

// giveBack releases claimed jobs that no worker took.
func (d *Dispatcher) giveBack(js []job) {
	ids := make([]string, len(js))
	for i, j := range js {
		ids[i] = j.DeliveryID
	}
	d.inflight.Add(-int64(len(js)))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.store.release(ctx, d.owner, ids); err != nil {
		d.log.Warn("give back claimed deliveries (they are retried when their lease ends)", "err", err)
	}
}

// flushLoop records results in batches: whatever has arrived while the
// previous batch was written.
func (d *Dispatcher) flushLoop(ctx context.Context, results <-chan result) {
	const maxBatch = 512
	batch := make([]result, 0, maxBatch)
	for r := range results {
		batch = append(batch[:0], r)
	more:
		for len(batch) < maxBatch {
			select {
			case r, ok := <-results:
				if !ok {
					break more
				}
				batch = append(batch, r)
			default:
				break more
			}
		}
		opened, err := d.store.record(ctx, d.owner, batch)
		for _, r := range batch {
			d.finish(r.ID, false)
		}
		if err != nil {
			// The leases end and the deliveries are attempted again.
			d.log.Error("record delivery attempts", "count", len(batch), "err", err)
		}
		for _, b := range opened {
			d.log.Warn("webhook endpoint paused: its attempts keep timing out", "webhook", b.WebhookID,
				"timeouts", b.Timeouts, "until", b.OpenUntil.UTC().Format(time.RFC3339))
		}
	}
}

// intakeLoop queues the deliveries of new events, and of confirmed ones.
func (d *Dispatcher) intakeLoop(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	// A notified event becomes readable only once every older transaction
	// of the server has ended (see eventlog.Read), so after a
	// notification, or while events flow, the log is read again soon.
	const soon, soonTimes = 5 * time.Millisecond, 8
	eager := 0
	for {
		n, queued, err := d.intake(ctx)
		if err != nil && ctx.Err() == nil {
			d.logFailure(d.quiet.intake, "queue deliveries of new events", "err", err)
		}
		m, promoted := 0, 0
		if d.cfg.RequireConfirmation {
			m, promoted, err = d.promote(ctx)
			if err != nil && ctx.Err() == nil {
				d.logFailure(d.quiet.promote, "queue deliveries of confirmed events", "err", err)
			}
		}
		if queued+promoted > 0 {
			d.signal()
		}
		if n > 0 || m > 0 {
			eager = soonTimes
		}
		if n < d.cfg.Batch && m < d.cfg.Batch {
			wait := d.cfg.Poll
			if eager > 0 {
				wait, eager = min(soon, wait), eager-1
			}
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-d.events:
				timer.Stop()
				eager = soonTimes
			case <-timer.C:
			}
		} else if ctx.Err() != nil {
			return
		}
	}
}

// intakeLockKey is the first half of the advisory lock that lets one
// dispatcher at a time read the event log (the second is the consumer).
const intakeLockKey = pg.LockWebhookIntake

// intake reads a batch of new events and, in the same transaction as it
// moves the event log cursor past them, queues a delivery per matching
// webhook, or parks the event until it is confirmed. It returns how many
// events it read and how many deliveries it queued.
func (d *Dispatcher) intake(ctx context.Context) (events, queued int, err error) {
	var read []eventlog.Event
	err = d.store.transact(ctx, func(tx *sqlx.Tx) error {
		events, queued, read = 0, 0, nil
		var ok bool
		if err := tx.GetContext(ctx, &ok, `SELECT pg_try_advisory_xact_lock($1, hashtext($2))`, intakeLockKey, d.cfg.Consumer); err != nil || !ok {
			return err // another dispatcher is reading the log
		}
		evs, err := eventlog.Read(ctx, tx, d.cfg.Consumer, d.cfg.Batch)
		if err != nil || len(evs) == 0 {
			return err
		}
		events, read = len(evs), evs
		subs, err := subscribers(ctx, tx, evs)
		if err != nil {
			return err
		}
		now := d.store.now()
		var ps []plan
		var parked []eventlog.Event
		for _, e := range evs {
			p, err := plans(e, subs[e.InstanceID])
			switch {
			case err != nil:
				return err
			case len(p) == 0:
			case d.cfg.RequireConfirmation && needsConfirmation(e.State):
				parked = append(parked, e)
			default:
				ps = append(ps, p...)
			}
		}
		if err := park(ctx, tx, parked, now); err != nil {
			return err
		}
		if queued, err = enqueue(ctx, tx, ps, now); err != nil {
			return err
		}
		if err := notify(ctx, tx, queued); err != nil {
			return err
		}
		return eventlog.Ack(ctx, tx, d.cfg.Consumer, evs[len(evs)-1])
	})
	if err == nil && len(read) > 0 && d.afterIntake != nil {
		d.afterIntake(read)
	}
	return events, queued, err
}

// parkedEvent is an event as webhook_awaiting keeps it.
type parkedEvent struct {
	ID            int64            `json:"id"`
	InstanceID    int64            `json:"instanceID"`
	InstanceGuid  string           `json:"instanceGuid"`
	State         eventlog.State   `json:"state"`
	Subject       eventlog.Subject `json:"subject"`
	Locale        *string          `json:"locale,omitempty"`
	ReferenceName *string          `json:"referenceName,omitempty"`
	ContentID     *int64           `json:"contentID,omitempty"`
	PageID        *int64           `json:"pageID,omitempty"`
	VersionID     *int64           `json:"versionID,omitempty"`
	ChangeDate    time.Time        `json:"changeDate"`
}

func (p parkedEvent) event() eventlog.Event {
	return eventlog.Event{ID: p.ID, InstanceID: p.InstanceID, InstanceGuid: p.InstanceGuid, State: p.State,
		Subject: p.Subject, Locale: p.Locale, ReferenceName: p.ReferenceName, ContentID: p.ContentID,
		PageID: p.PageID, VersionID: p.VersionID, ChangeDate: p.ChangeDate}
}

// park keeps events until the publisher confirms them.
func park(ctx context.Context, tx *sqlx.Tx, evs []eventlog.Event, now time.Time) error {
	if len(evs) == 0 {
		return nil
	}
	ids := make([]int64, len(evs))
	docs := make([]string, len(evs))
	for i, e := range evs {
		b, err := json.Marshal(parkedEvent{ID: e.ID, InstanceID: e.InstanceID, InstanceGuid: e.InstanceGuid,
			State: e.State, Subject: e.Subject, Locale: e.Locale, ReferenceName: e.ReferenceName,
			ContentID: e.ContentID, PageID: e.PageID, VersionID: e.VersionID, ChangeDate: e.ChangeDate})
		if err != nil {
			return err
		}
		ids[i], docs[i] = e.ID, string(b)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO webhook_awaiting (event_id, event, created_at)
		SELECT id, doc::jsonb, $3 FROM unnest($1::bigint[], $2::text[]) AS t(id, doc)
		ON CONFLICT (event_id) DO NOTHING`, pq.Array(ids), pq.Array(docs), now)
	if err != nil {
		return fmt.Errorf("park events until confirmed: %w", err)
	}
	return nil
}

// confirmedSQL selects the parked events that may be queued: those the
// publisher confirmed (event_confirmations, schema/002), and those that
// waited longer than the confirmation timeout.
const confirmedSQL = `SELECT a.event_id, a.event::text AS event, c.event_id IS NOT NULL AS confirmed
	FROM webhook_awaiting a LEFT JOIN event_confirmations c ON c.event_id = a.event_id
	WHERE c.event_id IS NOT NULL OR a.created_at < $1
	ORDER BY a.event_id LIMIT $2 FOR UPDATE OF a SKIP LOCKED`

// promote queues the deliveries of parked events that the publisher has
// confirmed (or that waited too long), to the webhooks that match them
// now. It returns how many events it took and how many deliveries it queued.
func (d *Dispatcher) promote(ctx context.Context) (events, queued int, err error) {
	err = d.store.transact(ctx, func(tx *sqlx.Tx) error {
		events, queued = 0, 0
		now := d.store.now()
		cutoff := time.Time{} // never
		if d.cfg.ConfirmationTimeout > 0 {
			cutoff = now.Add(-d.cfg.ConfirmationTimeout)
		}
		var rows []struct {
			EventID   int64  `db:"event_id"`
			Event     string `db:"event"`
			Confirmed bool   `db:"confirmed"`
		}
		if err := tx.SelectContext(ctx, &rows, confirmedSQL, cutoff, d.cfg.Batch); err != nil || len(rows) == 0 {
			return err
		}
		events = len(rows)
		evs := make([]eventlog.Event, len(rows))
		ids := make([]int64, len(rows))
		for i, r := range rows {
			var p parkedEvent
			if err := json.Unmarshal([]byte(r.Event), &p); err != nil {
				return fmt.Errorf("parked event %d: %w", r.EventID, err)
			}
			evs[i], ids[i] = p.event(), r.EventID
			if !r.Confirmed {
				d.log.Warn("delivering an event the publisher has not confirmed", "event", r.EventID,
					"state", p.State, "waited", d.cfg.ConfirmationTimeout)
			}
		}
		subs, err := subscribers(ctx, tx, evs)
		if err != nil {
			return err
		}
		var ps []plan
		for _, e := range evs {
			p, err := plans(e, subs[e.InstanceID])
			if err != nil {
				return err
			}
			ps = append(ps, p...)
		}
		if queued, err = enqueue(ctx, tx, ps, now); err != nil {
			return err
		}
		if err := notify(ctx, tx, queued); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM webhook_awaiting WHERE event_id = ANY($1)`, pq.Array(ids))
		return err
	})
	return events, queued, err
}

// notify tells other dispatchers, when it commits, that deliveries were
// queued.
func notify(ctx context.Context, tx *sqlx.Tx, queued int) error {
	if queued == 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, `SELECT pg_notify('`+notifyDeliveries+`', '')`)
	return err
}

// trimLoop deletes history older than the retention, now and then.
func (d *Dispatcher) trimLoop(ctx context.Context) {
	ticker := time.NewTicker(d.cfg.TrimEvery)
	defer ticker.Stop()
	for {
		n, err := d.store.Trim(ctx, d.store.now().Add(-d.cfg.Retention))
		switch {
		case err != nil && ctx.Err() == nil:
			d.log.Error("trim delivery history", "err", err)
		case n > 0:
			d.log.Info("trimmed delivery history", "deleted", n, "retention", d.cfg.Retention)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// Package publisher keeps the object store equal to what the Fetch API
// answers for published content, so that edges can serve reads without the
// database.
//
// A Publisher follows the content event log (consumer "publisher"). For each
// batch of events it writes the objects the events name, then works out
// which other objects the changes affect, from the tags every rendered
// object carries (what it embeds: items, containers, pages, channels), and
// renders those again with package render, writing what changed and
// deleting what no longer exists. A batch costs what it changes: list pages
// are compared by their window of items, pages by path by their sitemap
// node, and the list pages whose only change is their count are left to a
// background lane (the backlog). It records every object it writes (and
// every variant the origin renders on a miss, through WriteBack) in
// Postgres, with its request, so that the next change can find it.
//
// Several publishers may run against one database and store: one of them at
// a time holds the event cursor, and writes to one instance are serialised
// by an advisory lock, so a slower render never overwrites a newer one. The
// cursor moves past a batch only when its objects are written and the
// change feed that edges poll lists them; in the same transaction the
// batch's events are confirmed to the webhook dispatcher and its slow lane
// is queued, so a crash repeats work but never loses it. The CDN purge
// follows, once edges have read the feed. It also publishes each
// instance's API key manifest, so edges can check keys without the
// database. batch.go lists the steps of a batch in order; README.md gives
// the formats edges rely on.
package publisher

import (
	"context"
	"errors"
	"fmt"
	"github.com/edgecms/edgecms/metrics"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/render"
	"github.com/edgecms/edgecms/render/source"
	"github.com/edgecms/edgecms/store"
)

// Consumer is the publisher's name in the event log's cursors.
const Consumer = "publisher"

// Notification channels of the 002 migration's triggers.
const (
	eventsChannel = "edgecms_events"
	keysChannel   = "edgecms_api_keys"
)

// DefaultSnapshotBytes is Config.SnapshotBytes's default.
const DefaultSnapshotBytes = 256 << 20

// DefaultListPages is Config.ListPages's default: the first 100 items of
// a container, at the SDKs' page size of 10.
const DefaultListPages = 10

// Config is what a Publisher needs besides the content store.
type Config struct {
	// Store receives the rendered objects.
	Store store.Store
	// DatabaseURL, when set, lets the publisher LISTEN for new events and
	// key changes instead of waiting for the next poll.
	DatabaseURL string
	// Workers bounds concurrent renders (default 8). Renders are CPU work
	// in Postgres, so more workers than its cores gain little.
	Workers int
	// StoreWorkers bounds concurrent store writes (default 32): S3 PUTs
	// wait on the network and the disk, and an object store keeps many in
	// flight.
	StoreWorkers int
	// BatchSize is how many events one batch reads (default 500).
	BatchSize int
	// Poll is how often the event log is read when no notification came
	// (default 1 s).
	Poll time.Duration
	// KeyPoll is how often API keys are compared with the published
	// manifests when no notification came (default 1 s).
	KeyPoll time.Duration
	// FeedSize is how many changes the feed object lists (default 2000).
	FeedSize int
	// Purger, when set, purges changed objects' tags from a CDN once the
	// feed lists them and edges had PurgeDelay to read it.
	Purger *Purger
	// PurgeDelay is how long a purge waits after the feed that lists its
	// objects was written (default 100 ms: two feed polls of an edge at
	// its default, edge.DefaultFeedPoll).
	PurgeDelay time.Duration
	// SnapshotBytes bounds what a republish holds in memory of one
	// locale's published content (source.Snapshot: the field values and
	// some 770 bytes an item; default 256 MiB); a larger locale is
	// rendered from Postgres. Beside it, a republish and a sitemap build
	// hold a few hundred bytes per object or sitemap node (README,
	// Known limits).
	SnapshotBytes int64
	// MaxVariants caps the live variants of an instance: objects of
	// requests the publisher does not maintain, written back after
	// readers asked for them (variants.go). Past it, a write-back evicts
	// the least recently read. 0: DefaultMaxVariants; negative: no cap.
	MaxVariants int
	// ListPages is how many list pages of each container (take 10, skip
	// 0, 10, ...) the publisher keeps in the store whatever is read
	// (default DefaultListPages). A deeper page is rendered by the origin
	// on a miss and written back like any other variant: a new item
	// changes the totalCount of every page, and keeping all of them would
	// make each new item cost N/10 renders.
	ListPages int
	// SitemapEvery is how often at most the background lane renders
	// sitemaps and pages by path (default 1 s): each builds its channel's
	// whole sitemap, so under a stream of publishes it renders them for
	// all the publishes of the interval at once. After a chunk of such
	// work that took longer than SitemapEvery, the lane waits as long as
	// it took, so that it spends at most half its time on them.
	SitemapEvery time.Duration
}

// Publisher renders published content into the object store. It is safe
// for concurrent use.
type Publisher struct {
	cfg     Config
	content *content.Store
	db      *sqlx.DB
	store   store.Store
	render  *render.Renderer
	// reads is what renders read content from: the Reader, through a
	// treeSource per publish call.
	reads *source.Reader
	log   *slog.Logger

	stats struct{ rendered, written, deferred, background, requeued, dropped atomic.Int64 }

	// variantTouch is how often a variant's last read is recorded at
	// most (variants.go); tests shorten it.
	variantTouch time.Duration

	writeBacks *writeBackQueue

	// sem bounds the store writes in flight across all work.
	sem chan struct{}

	// backlogWake tells followBacklog that a batch queued requests.
	backlogWake chan struct{}
	// purges holds the CDN purges until they are due.
	purges *purgeQueue
	// laterPurges holds the purges of what the background lane is to
	// write.
	laterPurges laterPurges
	// lastTreeWork is when the background lane last rendered sitemaps
	// or pages by path (Unix nanoseconds), and lastTreeBuild how long
	// that chunk took (nanoseconds; see treeEvery).
	lastTreeWork  atomic.Int64
	lastTreeBuild atomic.Int64

	// feedWake asks followFeed to flush the feed.
	feedWake chan struct{}

	// feedChecked is set once the store is known to hold a feed object.
	feedChecked atomic.Bool

	// listed is what this process last wrote to the feed object.
	listed feedTail

	// sweepAbove is how many pages by path a plan holds (plan.go, sweep).
	sweepAbove int

	// spillBytes is the most of a sitemap's body a render holds in
	// memory (spillBody; tests make it small), and spillDir where the
	// rest goes ("": os.TempDir()).
	spillBytes int
	spillDir   string

	// afterChunk, when set (by tests), runs after each chunk of objects
	// is committed.
	afterChunk func()

	// beforeWrite, when set (by tests), gets each chunk of rendered
	// objects before its transaction begins.
	beforeWrite func([]*rendered)

	// beforeStrayDelete, when set (by tests), runs after a republish has
	// decided which stray objects to delete and before it deletes them.
	beforeStrayDelete func()

	// afterBatch, when set (by tests), gets the events of each batch once
	// they are confirmed and the cursor has moved past them.
	afterBatch func([]eventlog.Event)
}

// New returns a Publisher on cs writing to cfg.Store. Close it when done.
func New(cfg Config, cs *content.Store, log *slog.Logger) *Publisher {
	if cfg.Workers <= 0 {
		cfg.Workers = 8
	}
	if cfg.StoreWorkers <= 0 {
		cfg.StoreWorkers = 32
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 500
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.KeyPoll <= 0 {
		cfg.KeyPoll = time.Second
	}
	if cfg.FeedSize <= 0 {
		cfg.FeedSize = 2000
	}
	if cfg.PurgeDelay <= 0 {
		cfg.PurgeDelay = 100 * time.Millisecond
	}
	if cfg.SnapshotBytes <= 0 {
		cfg.SnapshotBytes = DefaultSnapshotBytes
	}
	if cfg.MaxVariants == 0 {
		cfg.MaxVariants = DefaultMaxVariants
	}
	if cfg.ListPages <= 0 {
		cfg.ListPages = DefaultListPages
	}
	if cfg.SitemapEvery <= 0 {
		cfg.SitemapEvery = time.Second
	}
	return &Publisher{
		cfg:          cfg,
		content:      cs,
		db:           cs.DB(),
		store:        cfg.Store,
		render:       render.New(cs),
		reads:        source.NewReader(cs),
		spillBytes:   spillBytes,
		log:          log,
		writeBacks:   newWriteBackQueue(1024),
		variantTouch: variantTouch,
		sem:          make(chan struct{}, cfg.StoreWorkers),
		feedWake:     make(chan struct{}, 1),
		sweepAbove:   defaultSweepAbove,

		backlogWake: make(chan struct{}, 1),
		purges:      newPurgeQueue(cfg.PurgeDelay),
	}
}

// Close releases the publisher's prepared statements. Call it after Run
// has returned.
func (p *Publisher) Close() error {
	return errors.Join(p.render.Close(), p.reads.Close())
}

// Stats are counts of objects since the publisher was made. Tests and
// benchmarks read them to see what a change costs.
type Stats struct {
	// Rendered counts renders, of every lane.
	Rendered int64
	// Written counts objects Put or deleted (their bytes or tags
	// changed).
	Written int64
	// Deferred counts requests a batch queued in the backlog, for the
	// background lane (backlog.go).
	Deferred int64
	// Background counts renders of the background lane, which Rendered
	// includes.
	Background int64
	// Requeued counts objects a background chunk created (or gave a new
	// tag) and left queued for the next chunk, because a batch planned
	// while it rendered them (backlog.go).
	Requeued int64
	// Dropped counts variants deleted instead of rendered again, by a
	// batch or past the cap (variants.go); Written includes them.
	Dropped int64
}

// Stats returns the counts so far.
func (p *Publisher) Stats() Stats {
	return Stats{Rendered: p.stats.rendered.Load(), Written: p.stats.written.Load(),
		Deferred: p.stats.deferred.Load(), Background: p.stats.background.Load(), Requeued: p.stats.requeued.Load(),
		Dropped: p.stats.dropped.Load()}
}

// Run publishes until ctx is cancelled: it follows the event log, works the
// backlog, sends CDN purges, keeps the key manifests current, writes back
// the variants the origin rendered, and trims its tables. It returns nil when ctx is cancelled.
func (p *Publisher) Run(ctx context.Context) error {
	eventWake := make(chan struct{}, 1)
	keyWake := make(chan string, 64)
	var wg sync.WaitGroup
	start := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	if p.cfg.DatabaseURL != "" {
		l := pq.NewListener(p.cfg.DatabaseURL, 100*time.Millisecond, 10*time.Second, func(ev pq.ListenerEventType, err error) {
			if err != nil && ctx.Err() == nil {
				p.log.Warn("publisher: listen", "err", err)
			}
		})
		for _, ch := range []string{eventsChannel, keysChannel} {
			if err := l.Listen(ch); err != nil {
				p.log.Warn("publisher: listen; polling only", "channel", ch, "err", err)
			}
		}
		start(func() { p.dispatch(ctx, l, eventWake, keyWake) })
	}
	start(func() { p.followEvents(ctx, eventWake) })
	start(func() { p.followKeys(ctx, keyWake) })
	start(func() { p.RunWriteBacks(ctx) })
	start(func() { p.followFeed(ctx) })
	start(func() { p.followBacklog(ctx, p.backlogWake) })
	start(func() { p.followPurges(ctx) })
	start(func() { p.maintain(ctx) })
	wg.Wait()
	return nil
}

// dispatch turns notifications into wake-ups until ctx ends, then closes l.
func (p *Publisher) dispatch(ctx context.Context, l *pq.Listener, eventWake chan struct{}, keyWake chan string) {
	defer l.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case n := <-l.Notify:
			switch {
			case n == nil: // reconnected: something may have been missed
				poke(eventWake)
				sendKey(keyWake, "")
			case n.Channel == eventsChannel:
				poke(eventWake)
			case n.Channel == keysChannel:
				sendKey(keyWake, n.Extra)
			}
		}
	}
}

func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func sendKey(c chan string, guid string) {
	select {
	case c <- guid:
	default:
	}
}

// followEvents runs batches while there are events, then waits for a
// notification or the poll interval. Events committed behind a transaction
// that is still running are invisible to the log readers for a moment: they
// are looked for again after a few milliseconds rather than at the next
// poll.
func (p *Publisher) followEvents(ctx context.Context, wake chan struct{}) {
	t := time.NewTicker(p.cfg.Poll)
	defer t.Stop()
	for ctx.Err() == nil {
		n, err := p.runBatch(ctx, false)
		if err != nil && ctx.Err() == nil {
			metrics.PublisherErrors.Inc()
			p.log.Error("publisher: batch failed; retrying", "err", err)
		}
		if err == nil && n > 0 {
			continue
		}
		var soon <-chan time.Time
		if err == nil && p.eventsWaiting(ctx) {
			soon = time.After(5 * time.Millisecond)
		}
		select {
		case <-ctx.Done():
		case <-wake:
		case <-t.C:
		case <-soon:
		}
	}
}

const eventsWaitingSQL = `SELECT EXISTS (SELECT 1 FROM events e JOIN event_cursors c ON c.consumer = $1
	WHERE (e.tx, e.id) > (c.tx, c.id))`

// eventsWaiting reports whether committed events lie past the cursor.
func (p *Publisher) eventsWaiting(ctx context.Context) bool {
	var waiting bool
	if err := p.db.GetContext(ctx, &waiting, eventsWaitingSQL, Consumer); err != nil {
		return false
	}
	return waiting
}

const (
	// lastEventSQL is the newest committed event, in log order: tx stays
	// an xid8 (as text, 9999 sorts after 10000).
	// drainedSQL tells whether the cursor is at or past a position.
	lastEventSQL = `SELECT e.tx, e.id FROM events e ORDER BY e.tx DESC, e.id DESC LIMIT 1`
	drainedSQL   = `SELECT EXISTS (SELECT 1 FROM event_cursors WHERE consumer = $1 AND (tx, id) >= ($2::xid8, $3))`
)

// Drain runs batches until the publisher has handled every event committed
// before the call, then the backlog until it is empty, then sends the CDN
// purges, waiting for other publishers' batches in progress (and
// for transactions that hide newer events from the log readers to end).
// Tests and commands call it to reach a quiescent point.
func (p *Publisher) Drain(ctx context.Context) error {
	if err := p.drainEvents(ctx); err != nil {
		return err
	}
	if err := p.drainBacklog(ctx); err != nil {
		return err
	}
	if err := p.drainFeed(ctx); err != nil {
		return err
	}
	return p.drainPurges(ctx)
}

// drainEvents runs batches until the cursor is past every event committed
// before the call.
func (p *Publisher) drainEvents(ctx context.Context) error {
	var last eventlog.Position
	err := p.db.GetContext(ctx, &last, lastEventSQL)
	if isNoRows(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("drain: %w", err)
	}
	for {
		n, err := p.runBatch(ctx, true)
		if err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		var done bool
		if err := p.db.GetContext(ctx, &done, drainedSQL, Consumer, last.Tx, last.ID); err != nil {
			return fmt.Errorf("drain: %w", err)
		}
		if done {
			return nil
		}
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			return err
		}
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

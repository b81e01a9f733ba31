package publisher

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/internal/pg"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/store"
)

// feed.go is the one place that writes the feed object. Other work asks
// for a flush (requestFlush: followFeed, part of Run, does it) or, where
// what comes next depends on edges seeing its changes, flushes and waits
// (flushNow before a batch's hand-off; drainFeed in Drain).
//
// Names: a change is a row of object_changes; its column seq is the
// change's id, in the order changes were recorded, and pos its position in
// the feed, given at the flush after it commits. The feed object calls a
// position "seq" (delivery.Feed.Seq, delivery.Change.Seq: the edges' contract). The render
// number objects carry is their version (write.go).

const (
	// assignPositionsSQL gives feed positions to the committed changes that
	// have none, in the order they were recorded. Positions come from a
	// sequence, taken under the feed lock that is held until the feed
	// object is written, so every position given is above every position
	// already published: a change is never listed below a seq an edge has
	// read, however long the transaction that recorded it ran. Changes of
	// transactions still running are invisible here; they get positions
	// at the flush after they commit. (Edges need no more order than that:
	// a key listed is one whose new state the store already holds, and an
	// edge reads the store's current state of every key listed after the
	// seq it last read.)
	assignPositionsSQL = `UPDATE object_changes o SET pos = n.pos
		FROM (SELECT seq, nextval('object_change_positions') AS pos
			FROM (SELECT seq FROM object_changes WHERE pos IS NULL ORDER BY seq) pending) n
		WHERE o.seq = n.seq`
	pendingChangesSQL = `SELECT EXISTS (SELECT 1 FROM object_changes WHERE pos IS NULL)`
	// latestChangesSQL reads the newest $1 changes with a position above
	// $2.
	latestChangesSQL = `SELECT pos, key FROM object_changes WHERE pos > $2 ORDER BY pos DESC LIMIT $1`
)

// feedTail is the changes a feed this process wrote listed, so that the
// next flush reads only the changes given a position since, not the
// FeedSize latest (2,000 rows to read under the feed lock, on each of the
// several flushes of every batch). Whatever another process wrote since
// has positions above the tail's, which that read finds: positions are
// given, and committed, under the feed lock, and never change. So a tail
// that was right once stays a right start, however old.
type feedTail struct {
	mu      sync.Mutex
	changes []delivery.Change // ascending, at most FeedSize; nil: none known
}

// get returns the changes listed and the position above which the
// changes to add lie; with none known, none and 0.
func (t *feedTail) get() ([]delivery.Change, int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.changes) == 0 {
		return nil, 0
	}
	return t.changes, t.changes[len(t.changes)-1].Seq
}

// set records changes as listed once the feed that lists them is
// committed; a flush that failed forgets the tail instead (nil). A set
// from a flush that committed before another's only moves the tail back
// to a right start.
func (t *feedTail) set(changes []delivery.Change) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.changes = changes
}

// FlushFeed publishes the changes recorded since the last flush in the feed
// object. Flushes of all publishers are serialised, so feed objects are
// written in order. Changes of transactions still running wait for a flush
// after they commit.
func (p *Publisher) FlushFeed(ctx context.Context) error {
	_, err := p.flushFeed(ctx, math.MaxInt64)
	return err
}

const waitingChangesSQL = `SELECT EXISTS (SELECT 1 FROM object_changes WHERE pos IS NULL AND seq <= $1)`

// flushFeed is FlushFeed; it reports whether changes up to seq upTo are
// still waiting for a position.
func (p *Publisher) flushFeed(ctx context.Context, upTo int64) (waiting bool, err error) {
	var pending bool
	if err := p.db.GetContext(ctx, &pending, pendingChangesSQL); err != nil {
		return false, fmt.Errorf("flush feed: %w", err)
	}
	if !pending {
		return false, p.ensureFeed(ctx)
	}
	var listed []delivery.Change
	err = pg.Transact(ctx, p.db, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, lockSpace, feedLock); err != nil {
			return fmt.Errorf("flush feed: lock: %w", err)
		}
		res, err := tx.ExecContext(ctx, assignPositionsSQL)
		if err != nil {
			return fmt.Errorf("flush feed: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		listed, err = p.writeFeed(ctx, tx)
		return err
	})
	if err != nil {
		p.listed.set(nil)
		return false, err
	}
	if listed != nil {
		p.listed.set(listed)
	}
	if err := p.db.GetContext(ctx, &waiting, waitingChangesSQL, upTo); err != nil {
		return false, fmt.Errorf("flush feed: %w", err)
	}
	return waiting, nil
}

// followFeed flushes the feed when asked (after a chunk of objects, a
// batch, a write-back, a key manifest), again at once when changes
// committed during a flush, and every 250 ms for changes other processes
// recorded.
func (p *Publisher) followFeed(ctx context.Context) {
	for {
		waiting, err := p.flushFeed(ctx, math.MaxInt64)
		if err != nil && ctx.Err() == nil {
			p.log.Warn("publisher: flush feed", "err", err)
		}
		next := 250 * time.Millisecond
		if waiting {
			next = 5 * time.Millisecond
		}
		t := time.NewTimer(next)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-p.feedWake:
		case <-t.C:
		}
		t.Stop()
	}
}

// flushNow flushes the feed, and leaves to followFeed (when Run runs) the
// changes that must wait behind a running transaction.
func (p *Publisher) flushNow(ctx context.Context) error {
	waiting, err := p.flushFeed(ctx, math.MaxInt64)
	if waiting {
		p.requestFlush()
	}
	return err
}

// requestFlush asks followFeed (part of Run) to flush the feed.
func (p *Publisher) requestFlush() {
	select {
	case p.feedWake <- struct{}{}:
	default:
	}
}

// ensureFeed writes the feed when the store has none (a new store, or
// before the first change), so that edges always find one. It looks once
// per process.
func (p *Publisher) ensureFeed(ctx context.Context) error {
	if p.feedChecked.Load() {
		return nil
	}
	_, err := p.store.Stat(ctx, delivery.FeedKey)
	switch {
	case problem.Is(err, problem.NotFound):
		var listed []delivery.Change
		err = pg.Transact(ctx, p.db, func(tx *sqlx.Tx) error {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, lockSpace, feedLock); err != nil {
				return fmt.Errorf("flush feed: lock: %w", err)
			}
			listed, err = p.writeFeed(ctx, tx)
			return err
		})
		if err != nil {
			listed = nil // the commit may have failed after the write
		}
		p.listed.set(listed)
	case err != nil:
		err = fmt.Errorf("flush feed: %w", err)
	}
	if err == nil {
		p.feedChecked.Store(true)
	}
	return err
}

// writeFeed writes the feed object from the tail this process listed
// last and the changes given a position since, in q's transaction, which
// holds the feed lock; it returns the changes listed.
func (p *Publisher) writeFeed(ctx context.Context, q sqlx.ExtContext) ([]delivery.Change, error) {
	tail, after := p.listed.get()
	var rows []struct {
		Pos int64  `db:"pos"`
		Key string `db:"key"`
	}
	if err := sqlx.SelectContext(ctx, q, &rows, latestChangesSQL, p.cfg.FeedSize, after); err != nil {
		return nil, fmt.Errorf("flush feed: %w", err)
	}
	changes := make([]delivery.Change, 0, min(len(tail)+len(rows), p.cfg.FeedSize))
	if keep := p.cfg.FeedSize - len(rows); keep > 0 {
		changes = append(changes, tail[max(len(tail)-keep, 0):]...)
	}
	for _, r := range slices.Backward(rows) {
		changes = append(changes, delivery.Change{Seq: r.Pos, Key: r.Key})
	}
	f := delivery.Feed{Changes: changes}
	if n := len(changes); n > 0 {
		f.Seq, f.Oldest = changes[n-1].Seq, changes[0].Seq
	}
	body, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	if _, err := p.store.Put(ctx, store.Object{Key: delivery.FeedKey, Body: body, ContentType: delivery.ContentType, CacheControl: delivery.NoStore}); err != nil {
		return nil, fmt.Errorf("flush feed: %w", err)
	}
	// Delivered as q's transaction commits, once the object is in the
	// store: origins wake the edges waiting for a new feed (see
	// delivery.FeedChannel).
	if _, err := q.ExecContext(ctx, notifyFeedSQL, strconv.FormatInt(f.Seq, 10)); err != nil {
		return nil, fmt.Errorf("flush feed: notify: %w", err)
	}
	return changes, nil
}

const notifyFeedSQL = `SELECT pg_notify('` + delivery.FeedChannel + `', $1)`

// drainFeed flushes the feed until it lists every change recorded so far.
func (p *Publisher) drainFeed(ctx context.Context) error {
	var upTo int64
	if err := p.db.GetContext(ctx, &upTo, `SELECT coalesce(max(seq), 0) FROM object_changes`); err != nil {
		return fmt.Errorf("drain: %w", err)
	}
	for {
		waiting, err := p.flushFeed(ctx, upTo)
		if err != nil || !waiting {
			return err
		}
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			return err
		}
	}
}

package publisher

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/delivery"
)

// TestFeedNotHeldBack checks that a change is listed as soon as it commits:
// neither a long transaction elsewhere nor an older transaction still
// recording changes holds it back, and the older one's change, once
// committed, is listed above every seq already published.
func TestFeedNotHeldBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	p := e.publisher(Config{})
	s := e.buildSite()
	e.must(p.Drain(e.ctx))

	// A long transaction with a transaction id (a report, a migration,
	// another application), and an older writer of changes still running.
	idle, err := e.db.BeginTxx(e.ctx, nil)
	e.must(err)
	defer idle.Rollback()
	_, err = idle.ExecContext(e.ctx, `SELECT pg_current_xact_id()`)
	e.must(err)
	slow, err := e.db.BeginTxx(e.ctx, nil)
	e.must(err)
	defer slow.Rollback()
	const slowKey = "acme/fetch/en-us/item/999999/d1.json"
	_, err = slow.ExecContext(e.ctx, `INSERT INTO object_changes (key) VALUES ($1)`, slowKey)
	e.must(err)

	seen := e.readFeed(t).Seq
	id := s.tags[0]
	_, err = e.cs.SaveItem(e.ctx, e.inst, "en-us", id, map[string]json.RawMessage{"Title": raw("Not held back")})
	e.must(err)
	_, err = e.cs.ItemAction(e.ctx, e.inst, "en-us", id, content.ActionPublish)
	e.must(err)
	ctx, cancel := context.WithTimeout(e.ctx, 20*time.Second)
	defer cancel()
	if err := p.Drain(ctx); err != nil {
		t.Fatalf("Drain with a long transaction open: %v (the feed waited for it?)", err)
	}
	f := e.readFeed(t)
	own := itemRequest(e.guid, "en-us", id).Key()
	ownSeq := listedAfter(f, own, seen)
	if ownSeq == 0 {
		t.Fatalf("feed %+v does not list %s after seq %d while other transactions run", f, own, seen)
	}
	if listedAfter(f, slowKey, 0) != 0 {
		t.Fatalf("feed lists %s, whose transaction has not committed", slowKey)
	}

	e.must(slow.Commit())
	e.must(p.FlushFeed(e.ctx))
	g := e.readFeed(t)
	slowSeq := listedAfter(g, slowKey, f.Seq)
	if slowSeq == 0 {
		t.Fatalf("feed %+v does not list %s above the published seq %d once its transaction committed", g, slowKey, f.Seq)
	}
	for i, c := range g.Changes {
		if i > 0 && c.Seq <= g.Changes[i-1].Seq {
			t.Errorf("feed out of order at %d: %d after %d", i, c.Seq, g.Changes[i-1].Seq)
		}
	}
	if !slices.ContainsFunc(g.Changes, func(c delivery.Change) bool { return c.Key == own && c.Seq == ownSeq }) {
		t.Errorf("%s moved in the feed: want it at %d", own, ownSeq)
	}
}

// TestOwnObjectsListedFirst checks that a running publisher writes an
// edited item's own object, and lists it in the feed, before it has written
// the objects that embed the item.
func TestOwnObjectsListedFirst(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	s := e.buildSite()
	p := e.publisher(Config{})
	e.must(p.Drain(e.ctx))
	seen := e.readFeed(t).Seq

	// Hold the batch after its second chunk: the first of the objects
	// that embed the item.
	release := make(chan struct{})
	var chunks atomic.Int32
	p.afterChunk = func() {
		if chunks.Add(1) == 2 {
			<-release
		}
	}
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	released := false
	defer func() {
		if !released {
			close(release)
		}
		cancel()
		<-done
	}()

	tag := s.tags[1]
	_, err := e.cs.SaveItem(e.ctx, e.inst, "en-us", tag, map[string]json.RawMessage{"Title": raw("First")})
	e.must(err)
	_, err = e.cs.ItemAction(e.ctx, e.inst, "en-us", tag, content.ActionPublish)
	e.must(err)
	own := itemRequest(e.guid, "en-us", tag).Key()
	deadline := time.Now().Add(20 * time.Second)
	for listedAfter(e.readFeed(t), own, seen) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the feed does not list %s after 20 s", own)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The batch is not over: the chunk of the objects that embed the
	// item is held (or not even written yet).
	if n := e.unconfirmed(); n == 0 {
		t.Errorf("the feed listed %s only once the whole batch was written and confirmed", own)
	}

	released = true
	close(release)
	e.must(p.Drain(e.ctx))
	if list := listRequest(e.guid, "en-us", "tags", 0).Key(); listedAfter(e.readFeed(t), list, seen) == 0 {
		t.Errorf("after the batch the feed does not list %s", list)
	}
	e.check(t)
}

// listedAfter returns the seq at which f lists key above after, or 0.
func listedAfter(f delivery.Feed, key string, after int64) int64 {
	for _, c := range f.Changes {
		if c.Key == key && c.Seq > after {
			return c.Seq
		}
	}
	return 0
}

// TestFeedTail checks that feeds written from each process's tail (the
// changes it listed last) and the changes positioned since are those a
// read of the whole table gives, while three publishers flush at once,
// changes commit meanwhile and the trim runs.
func TestFeedTail(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	const size = 7
	ps := []*Publisher{e.publisher(Config{FeedSize: size}), e.publisher(Config{FeedSize: size}), e.publisher(Config{FeedSize: size})}
	// fromTable is the feed of the latest size positioned changes.
	fromTable := func() []delivery.Change {
		var rows []positioned
		e.must(e.db.SelectContext(e.ctx, &rows, `SELECT pos, key FROM object_changes WHERE pos IS NOT NULL ORDER BY pos DESC LIMIT $1`, size))
		var out []delivery.Change
		for _, r := range slices.Backward(rows) {
			out = append(out, delivery.Change{Seq: *r.Pos, Key: r.Key})
		}
		return out
	}
	var g errgroup.Group
	for w, p := range ps {
		g.Go(func() error {
			for i := range 40 {
				if _, err := e.db.ExecContext(e.ctx, `INSERT INTO object_changes (key) VALUES ($1), ($2)`,
					fmt.Sprintf("acme/w%d/%d.json", w, i), fmt.Sprintf("acme/w%d/%d-b.json", w, i)); err != nil {
					return err
				}
				if err := p.FlushFeed(e.ctx); err != nil {
					return err
				}
				if i%10 == 9 {
					if _, err := p.trimChanges(e.ctx); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	e.must(g.Wait())
	// Each publisher's next feed, written from its own tail, is the one
	// the table gives.
	for i, p := range ps {
		e.must(e.db.QueryRowContext(e.ctx, `INSERT INTO object_changes (key) VALUES ($1) RETURNING 0`, fmt.Sprintf("acme/last/%d.json", i)).Err())
		e.must(p.FlushFeed(e.ctx))
		if got, want := e.feedObject().Changes, fromTable(); !slices.Equal(got, want) {
			t.Fatalf("publisher %d wrote the feed\n%v\nwant\n%v", i, got, want)
		}
	}
}

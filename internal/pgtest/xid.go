package pgtest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"
)

// nextXIDSQL is the transaction id the server will assign next.
const nextXIDSQL = `SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint`

// NextXID returns the transaction id the server will assign next.
func NextXID(ctx context.Context, db *sqlx.DB) (uint64, error) {
	var n uint64
	if err := db.GetContext(ctx, &n, nextXIDSQL); err != nil {
		return 0, fmt.Errorf("next transaction id: %w", err)
	}
	return n, nil
}

// burnBlock is the most ids one statement of BurnXIDs burns.
const burnBlock = 2000

// BurnXIDs uses up transaction ids until the server's next one is at least
// until, and returns it. The fastest way measured (about 100,000 ids a
// second on a private Server, against about 1,000 for a round trip per
// id): one DO block that assigns an id and commits in a loop, on a session
// with synchronous_commit off, so that no commit waits for a disk flush.
// Other sessions may take ids meanwhile; it stops once the counter is past
// until, whoever took them. It burns in blocks of at most burnBlock ids and
// looks at the counter between them, so that it overshoots until by no
// more than what others take during one block.
func BurnXIDs(ctx context.Context, db *sqlx.DB, until uint64) (uint64, error) {
	conn, err := db.Connx(ctx)
	if err != nil {
		return 0, fmt.Errorf("burn transaction ids: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SET synchronous_commit = off`); err != nil {
		return 0, fmt.Errorf("burn transaction ids: %w", err)
	}
	defer conn.ExecContext(context.Background(), `RESET synchronous_commit`)
	for {
		var next uint64
		if err := conn.GetContext(ctx, &next, nextXIDSQL); err != nil {
			return 0, fmt.Errorf("burn transaction ids: %w", err)
		}
		if next >= until {
			return next, nil
		}
		// A DO block takes no parameters; n is an integer we formatted.
		n := min(until-next, burnBlock)
		q := fmt.Sprintf(`DO $$ BEGIN FOR i IN 1..%d LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$`, n)
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return 0, fmt.Errorf("burn transaction ids: %w", err)
		}
	}
}

// eventWriterLock is the advisory lock (content's eventWriterLock, read by
// the event horizon of schema/005 and 006) that every transaction that may
// write events holds: the log's readers stop before the oldest one.
const eventWriterLock = 7301968

// CrossXID makes the server's transaction ids cross boundary while the
// caller's writers commit events, in the worst order for a reader of the
// event log: it burns ids up to margin below boundary, opens a transaction
// that holds the event writer lock with an id below boundary (a slow writer:
// the log's readers cannot pass it), then burns across boundary in steps
// of step ids, calling progress between steps (the caller waits there until
// its writers have committed more events), until the counter is margin past
// boundary; then the slow transaction commits. Its commit releases, all at
// once, events from both sides of the boundary to every reader.
//
// The caller checks in the log that events fell on both sides: CrossXID
// only makes room for them.
func CrossXID(ctx context.Context, db *sqlx.DB, boundary, margin, step uint64, progress func(context.Context) error) error {
	if boundary < margin || step == 0 {
		return fmt.Errorf("cross transaction id %d: margin %d, step %d", boundary, margin, step)
	}
	if _, err := BurnXIDs(ctx, db, boundary-margin); err != nil {
		return err
	}
	slow, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("cross transaction id %d: %w", boundary, err)
	}
	defer slow.Rollback()
	var held uint64
	if _, err := slow.ExecContext(ctx, `SELECT pg_advisory_xact_lock_shared($1)`, eventWriterLock); err != nil {
		return fmt.Errorf("cross transaction id %d: %w", boundary, err)
	}
	if err := slow.GetContext(ctx, &held, `SELECT pg_current_xact_id()::text::bigint`); err != nil {
		return fmt.Errorf("cross transaction id %d: %w", boundary, err)
	}
	if held >= boundary {
		return fmt.Errorf("cross transaction id %d: the slow transaction got id %d: writers took the margin of %d ids", boundary, held, margin)
	}
	for {
		next, err := NextXID(ctx, db)
		if err != nil {
			return err
		}
		if next > boundary+margin {
			break
		}
		if _, err := BurnXIDs(ctx, db, next+step); err != nil {
			return err
		}
		if err := progress(ctx); err != nil {
			return err
		}
	}
	if err := slow.Commit(); err != nil {
		return fmt.Errorf("cross transaction id %d: %w", boundary, err)
	}
	return nil
}

// Writers runs a write function in several goroutines, over and over,
// until stopped; Progress, which CrossXID calls between its steps, waits
// until one more write has returned.
type Writers struct {
	t      testing.TB
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	n      int
	more   chan struct{} // closed and replaced when n grows
	err    error
}

// StartWriters runs fn in n goroutines until Stop (or the test's end); i
// counts the writes started, for names. A write that fails stops its
// goroutine, and Stop fails the test with the error.
func StartWriters(t testing.TB, n int, fn func(ctx context.Context, i int) error) *Writers {
	ctx, cancel := context.WithCancel(context.Background())
	w := &Writers{t: t, cancel: cancel, more: make(chan struct{})}
	for range n {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			for ctx.Err() == nil {
				w.mu.Lock()
				i := w.n
				w.mu.Unlock()
				err := fn(ctx, i)
				w.mu.Lock()
				if err != nil && ctx.Err() == nil && w.err == nil {
					w.err = err
				}
				w.n++
				close(w.more)
				w.more = make(chan struct{})
				w.mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	t.Cleanup(w.Stop)
	return w
}

// Progress waits until one more write has returned, and returns the error
// of a failed write.
func (w *Writers) Progress(ctx context.Context) error {
	w.mu.Lock()
	more, err := w.more, w.err
	w.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case <-more:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stop stops the writers and waits for them; a write that failed fails
// the test.
func (w *Writers) Stop() {
	w.cancel()
	w.wg.Wait()
	w.mu.Lock()
	err := w.err
	w.mu.Unlock()
	if err != nil {
		w.t.Fatalf("writer: %v", err)
	}
}

// Done returns how many writes have returned.
func (w *Writers) Done() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// crossMargin and crossStep are the margin and the step CrossWhileWriting
// gives CrossXID: wide enough that writers commit events on both sides of a
// boundary, narrow enough that the log stays short.
const (
	crossMargin = 200
	crossStep   = 20
)

// CrossWhileWriting makes the server's transaction ids cross each of
// boundaries, in order, while writers goroutines call write (see
// StartWriters): for each boundary it burns ids to a little below it,
// starts the writers, runs CrossXID and stops them, so that the writers run
// only around the boundaries and the log stays short. It fails the test
// unless the event log then holds events within the margin on both sides
// of every boundary, and returns the ids of every event of the log in log
// order, and how many writes returned.
func CrossWhileWriting(ctx context.Context, t testing.TB, db *sqlx.DB, writers int, write func(ctx context.Context, i int) error, boundaries ...uint64) (logged []int64, writes int) {
	t.Helper()
	for _, b := range boundaries {
		if _, err := BurnXIDs(ctx, db, b-crossMargin-50); err != nil {
			t.Fatal(err)
		}
		w := StartWriters(t, writers, write)
		if err := CrossXID(ctx, db, b, crossMargin, crossStep, w.Progress); err != nil {
			t.Fatal(err)
		}
		w.Stop()
		writes += w.Done()
	}
	for _, b := range boundaries {
		var below, above int
		if err := db.GetContext(ctx, &below, `SELECT count(*) FROM events WHERE tx >= $1::text::xid8 AND tx < $2::text::xid8`, b-crossMargin, b); err != nil {
			t.Fatal(err)
		}
		if err := db.GetContext(ctx, &above, `SELECT count(*) FROM events WHERE tx >= $1::text::xid8 AND tx <= $2::text::xid8`, b, b+crossMargin); err != nil {
			t.Fatal(err)
		}
		if below == 0 || above == 0 {
			t.Fatalf("the log has %d events in [%d, %d) and %d in [%d, %d]: it does not cross %d",
				below, b-crossMargin, b, above, b, b+crossMargin, b)
		}
	}
	if err := db.SelectContext(ctx, &logged, `SELECT id FROM events ORDER BY tx, id`); err != nil {
		t.Fatal(err)
	}
	return logged, writes
}

// DiffOrder describes how got, the event ids a reader of the log took in,
// differs from want, the ids in log order: the first difference, the ids
// missing and the ids taken more than once (the first ten of each).
func DiffOrder(got, want []int64) string {
	count := map[int64]int{}
	for _, id := range got {
		count[id]++
	}
	var missing, twice []int64
	for _, id := range want {
		switch count[id] {
		case 0:
			missing = append(missing, id)
		case 1:
		default:
			twice = append(twice, id)
		}
	}
	first := ""
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			first = fmt.Sprintf("first difference at %d: got %d, want %d; ", i, got[i], want[i])
			break
		}
	}
	head := func(s []int64) []int64 { return s[:min(len(s), 10)] }
	return fmt.Sprintf("%smissing %d events %v; taken more than once %d %v",
		first, len(missing), head(missing), len(twice), head(twice))
}

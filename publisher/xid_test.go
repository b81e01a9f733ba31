package publisher

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/render"
)

// TestEventsAcrossXIDDigitBoundaries: on a server whose transaction ids
// cross 9,999 -> 10,000 and 99,999 -> 100,000 while four writers publish
// items, and a slow writer holds the log back across each boundary (so
// that a batch holds rows from both sides), the publisher consumes every
// event of the log exactly once, in log order, and the store ends equal
// to a fresh render. Before the fix the log was sorted as text, and a
// batch took 10000 before 9990.
func TestEventsAcrossXIDDigitBoundaries(t *testing.T) {
	t.Parallel()
	srv := pgtest.NewServer(t)
	db, dsn := srv.New(t)
	e := &env{t: t, ctx: context.Background(), db: db, dsn: dsn, cs: content.NewStore(db)}
	e.store = openStore(t, folderStore)
	e.fresh = render.New(e.cs)
	t.Cleanup(func() { e.fresh.Close() })
	inst, err := e.cs.CreateInstance(e.ctx, "acme", []content.Locale{{Code: "en-us", Name: "English"}})
	e.must(err)
	e.inst, e.guid = inst, inst.Guid
	_, err = e.cs.CreateModel(e.ctx, inst, content.Model{Name: "Post", Kind: "content",
		Fields: content.Fields{{Name: "Title", Type: content.TypeText}}})
	e.must(err)
	_, err = e.cs.CreateContainer(e.ctx, inst, "posts", "Post")
	e.must(err)
	// A published page: an instance without one has no sitemap objects.
	_, err = e.cs.CreatePageModel(e.ctx, inst, "Main", []string{"main"})
	e.must(err)
	title, model := "Home", "Main"
	home, err := e.cs.CreatePage(e.ctx, inst, "en-us", content.PageInput{Title: &title, PageModel: &model})
	e.must(err)
	_, err = e.cs.PageAction(e.ctx, inst, "en-us", home.PageID, content.ActionPublish)
	e.must(err)

	// A small batch makes more batches straddle a boundary.
	p := e.publisher(Config{DatabaseURL: dsn, BatchSize: 20, Poll: 20 * time.Millisecond})
	var (
		mu       sync.Mutex
		consumed []eventlog.Event
	)
	p.afterBatch = func(evs []eventlog.Event) {
		mu.Lock()
		consumed = append(consumed, evs...)
		mu.Unlock()
	}
	ctx, cancel := context.WithCancel(e.ctx)
	var running sync.WaitGroup
	running.Add(1)
	go func() { defer running.Done(); p.Run(ctx) }()
	t.Cleanup(func() { cancel(); running.Wait() })

	// Writers run only around the boundaries, which keeps the log short.
	items := 0
	for _, b := range []uint64{10_000, 100_000} {
		if _, err := pgtest.BurnXIDs(ctx, db, b-250); err != nil {
			t.Fatal(err)
		}
		w := pgtest.StartWriters(t, 4, func(ctx context.Context, n int) error {
			st, err := e.cs.CreateItem(ctx, inst, "en-us", "posts", map[string]json.RawMessage{"Title": raw(fmt.Sprintf("Post %d", n))})
			if err != nil {
				return err
			}
			_, err = e.cs.ItemAction(ctx, inst, "en-us", st.ContentID, content.ActionPublish)
			return err
		})
		if err := pgtest.CrossXID(ctx, db, b, 200, 20, w.Progress); err != nil {
			t.Fatal(err)
		}
		w.Stop()
		items += w.Done()
	}

	logged := logOrder(t, e)
	checkBoundaries(t, e, 200, 10_000, 100_000)
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(consumed)
		mu.Unlock()
		if n >= len(logged) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	running.Wait()
	if got := ids(consumed); !slices.Equal(got, logged) {
		t.Errorf("the publisher consumed %d events, the log holds %d: %s", len(got), len(logged), diffOrder(got, logged))
	}
	e.check(t)
	t.Logf("%d events, %d items, last transaction id %d", len(logged), items, lastXID(t, e))
}

// logOrder returns the ids of every event in log order.
func logOrder(t *testing.T, e *env) []int64 {
	var out []int64
	e.must(e.db.SelectContext(e.ctx, &out, `SELECT id FROM events ORDER BY tx, id`))
	return out
}

// checkBoundaries asserts that the log holds events within margin on both
// sides of each boundary.
func checkBoundaries(t *testing.T, e *env, margin uint64, boundaries ...uint64) {
	for _, b := range boundaries {
		var below, above int
		e.must(e.db.GetContext(e.ctx, &below, `SELECT count(*) FROM events WHERE tx >= $1::text::xid8 AND tx < $2::text::xid8`, b-margin, b))
		e.must(e.db.GetContext(e.ctx, &above, `SELECT count(*) FROM events WHERE tx >= $1::text::xid8 AND tx <= $2::text::xid8`, b, b+margin))
		if below == 0 || above == 0 {
			t.Fatalf("the log has %d events in [%d, %d) and %d in [%d, %d]: it does not cross %d", below, b-margin, b, above, b, b+margin, b)
		}
	}
}

func lastXID(t *testing.T, e *env) uint64 {
	var n uint64
	e.must(e.db.GetContext(e.ctx, &n, `SELECT max(tx)::text::bigint FROM events`))
	return n
}

func ids(evs []eventlog.Event) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

// diffOrder describes the first difference between got and want.
func diffOrder(got, want []int64) string {
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
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("first difference at %d: got %d, want %d; missing %d events %v; consumed more than once %d %v",
				i, got[i], want[i], len(missing), head(missing), len(twice), head(twice))
		}
	}
	return fmt.Sprintf("missing %d events %v; consumed more than once %d %v", len(missing), head(missing), len(twice), head(twice))
}

func head(s []int64) []int64 { return s[:min(len(s), 10)] }

package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/internal/pgtest"
)

// TestEventsAcrossXIDDigitBoundaries: on a server whose transaction ids
// cross 9,999 -> 10,000 and 99,999 -> 100,000 while four writers create
// and publish items, and a slow writer holds the log back across each
// boundary (so that an intake gets rows from both sides), the dispatcher
// takes in every event of the log exactly once, in log order, and the
// receiver gets one delivery per item event. Before the fix the log was
// sorted as text, and an intake took 10000 before 9990.
func TestEventsAcrossXIDDigitBoundaries(t *testing.T) {
	t.Parallel()
	srv := pgtest.NewServer(t)
	db, dsn := srv.New(t)
	ctx := context.Background()
	cs := content.NewStore(db)
	ws, err := NewStore(db, Options{Key: testKey, Policy: loopback(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	inst, err := cs.CreateInstance(ctx, "acme", []content.Locale{{Code: "en-us", Name: "English"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CreateModel(ctx, inst, content.Model{Name: "Article", Kind: "content",
		Fields: []content.Field{{Name: "title", Type: content.TypeText}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CreateContainer(ctx, inst, "Articles", "Article"); err != nil {
		t.Fatal(err)
	}
	rc := newReceiver(t)
	url := rc.URL()
	if _, _, err := ws.Save(ctx, inst, Input{URL: &url, ContentPublishEvents: ptr(true), ContentSaveEvents: ptr(true)}); err != nil {
		t.Fatal(err)
	}

	// A small batch makes more intakes straddle a boundary.
	d := NewDispatcher(ws, DispatcherConfig{ListenURL: dsn, Batch: 20, Poll: 20 * time.Millisecond},
		slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})))
	var (
		mu       sync.Mutex
		consumed []int64
	)
	d.afterIntake = func(evs []eventlog.Event) {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range evs {
			consumed = append(consumed, e.ID)
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	var running sync.WaitGroup
	running.Add(1)
	go func() { defer running.Done(); d.Run(runCtx) }()
	t.Cleanup(func() { cancel(); running.Wait() })

	// Writers run only around the boundaries, which keeps the log short.
	for _, b := range []uint64{10_000, 100_000} {
		if _, err := pgtest.BurnXIDs(ctx, db, b-250); err != nil {
			t.Fatal(err)
		}
		w := pgtest.StartWriters(t, 4, func(ctx context.Context, n int) error {
			st, err := cs.CreateItem(ctx, inst, "en-us", "Articles", map[string]json.RawMessage{"title": jsonOf(fmt.Sprintf("Article %d", n))})
			if err != nil {
				return err
			}
			_, err = cs.ItemAction(ctx, inst, "en-us", st.ContentID, content.ActionPublish)
			return err
		})
		if err := pgtest.CrossXID(ctx, db, b, 200, 20, w.Progress); err != nil {
			t.Fatal(err)
		}
		w.Stop()
	}

	var logged []int64
	if err := db.SelectContext(ctx, &logged, `SELECT id FROM events ORDER BY tx, id`); err != nil {
		t.Fatal(err)
	}
	for _, b := range []uint64{10_000, 100_000} {
		var below, above int
		if err := db.GetContext(ctx, &below, `SELECT count(*) FROM events WHERE tx >= $1::text::xid8 AND tx < $2::text::xid8`, b-200, b); err != nil {
			t.Fatal(err)
		}
		if err := db.GetContext(ctx, &above, `SELECT count(*) FROM events WHERE tx >= $1::text::xid8 AND tx <= $2::text::xid8`, b, b+200); err != nil {
			t.Fatal(err)
		}
		if below == 0 || above == 0 {
			t.Fatalf("the log has %d events just below %d and %d from it: it does not cross it", below, b, above)
		}
	}
	// Each item event is one delivery: every item is created (Saved) and
	// published (Published) once, so no two deliveries merge.
	var want []string
	if err := db.SelectContext(ctx, &want, `SELECT state || ' ' || content_id FROM events
		WHERE subject = 'item' AND state IN ('Saved', 'Published') ORDER BY 1`); err != nil {
		t.Fatal(err)
	}
	delivered := func() []string {
		var got []string
		for _, r := range rc.requests() {
			p := r.payload(t)
			got = append(got, fmt.Sprintf("%v %v", p["state"], p["contentID"]))
		}
		slices.Sort(got)
		return got
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(consumed)
		mu.Unlock()
		if (n >= len(logged) && len(rc.requests()) >= len(want)) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	running.Wait()
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(consumed, logged) {
		t.Errorf("the dispatcher took in %d events, the log holds %d: %s", len(consumed), len(logged), diffOrder(consumed, logged))
	}
	if got := delivered(); !slices.Equal(got, want) {
		t.Errorf("the receiver got %d deliveries, want one for each of %d item events; first of %d got: %v",
			len(got), len(want), min(len(got), 10), got[:min(len(got), 10)])
	}
	t.Logf("%d events, %d deliveries", len(logged), len(want))
}

// diffOrder describes how got differs from want.
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
	first := ""
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			first = fmt.Sprintf("first difference at %d: got %d, want %d; ", i, got[i], want[i])
			break
		}
	}
	return fmt.Sprintf("%smissing %d events %v; taken more than once %d %v",
		first, len(missing), missing[:min(len(missing), 10)], len(twice), twice[:min(len(twice), 10)])
}

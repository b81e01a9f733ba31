package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/internal/contenttest"
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
	f := contenttest.On(t, db)
	f.Articles()
	ctx, cs, inst := f.Ctx, f.S, f.Inst
	ws, err := NewStore(db, Options{Key: testKey, Policy: loopback(), Timeout: 5 * time.Second})
	if err != nil {
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
	// consumed is written by the dispatcher's goroutine alone and read
	// once it has returned; taken lets the test watch it grow meanwhile.
	var (
		consumed []int64
		taken    atomic.Int64
	)
	d.afterIntake = func(evs []eventlog.Event) {
		for _, e := range evs {
			consumed = append(consumed, e.ID)
		}
		taken.Add(int64(len(evs)))
	}
	runCtx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() { defer close(stopped); d.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-stopped })

	logged, _ := pgtest.CrossWhileWriting(ctx, t, db, 4, func(ctx context.Context, n int) error {
		st, err := cs.CreateItem(ctx, inst, "en-us", "Articles", map[string]json.RawMessage{"title": jsonOf(fmt.Sprintf("Article %d", n))})
		if err != nil {
			return err
		}
		_, err = cs.ItemAction(ctx, inst, "en-us", st.ContentID, content.ActionPublish)
		return err
	}, 10_000, 100_000)
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
		if (taken.Load() >= int64(len(logged)) && len(rc.requests()) >= len(want)) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-stopped
	if !slices.Equal(consumed, logged) {
		t.Errorf("the dispatcher took in %d events, the log holds %d: %s", len(consumed), len(logged), pgtest.DiffOrder(consumed, logged))
	}
	if got := delivered(); !slices.Equal(got, want) {
		t.Errorf("the receiver got %d deliveries, want one for each of %d item events; first of %d got: %v",
			len(got), len(want), min(len(got), 10), got[:min(len(got), 10)])
	}
	t.Logf("%d events, %d deliveries", len(logged), len(want))
}

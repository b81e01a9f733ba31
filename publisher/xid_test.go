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

	logged, items := pgtest.CrossWhileWriting(ctx, t, db, 4, func(ctx context.Context, n int) error {
		st, err := e.cs.CreateItem(ctx, inst, "en-us", "posts", map[string]json.RawMessage{"Title": raw(fmt.Sprintf("Post %d", n))})
		if err != nil {
			return err
		}
		_, err = e.cs.ItemAction(ctx, inst, "en-us", st.ContentID, content.ActionPublish)
		return err
	}, 10_000, 100_000)
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
		t.Errorf("the publisher consumed %d events, the log holds %d: %s", len(got), len(logged), pgtest.DiffOrder(got, logged))
	}
	e.check(t)
	t.Logf("%d events, %d items, last transaction id %d", len(logged), items, lastXID(t, e))
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

package content

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/edgecms/edgecms/internal/pgtest"
)

// TestLogReadersAcrossXIDDigitBoundary: across 9,999 -> 10,000, with a
// slow writer holding the log back so that rows of both sides are pending
// at once, every reader of the log gets each row once, in (tx, id) order:
// ReadEvents (the publisher's and the dispatcher's cursor), EventsSince
// from EventLogEnd (the origin's render cache) and the sync stamper.
func TestLogReadersAcrossXIDDigitBoundary(t *testing.T) {
	t.Parallel()
	srv := pgtest.NewServer(t)
	db, _ := srv.New(t)
	f := &fixture{t: t, ctx: context.Background(), db: db, s: NewStore(db), clock: t0}
	f.s.Now = func() time.Time { return f.clock }
	f.inst = f.instance("acme")
	f.articles()
	id := f.createItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
	f.itemAction("en-us", id, ActionPublish)

	end, err := f.s.EventLogEnd(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.StampSync(f.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := pgtest.BurnXIDs(f.ctx, db, 9_750); err != nil {
		t.Fatal(err)
	}
	w := pgtest.StartWriters(t, 3, func(ctx context.Context, i int) error {
		_, err := f.s.SaveItem(ctx, f.inst, "en-us", id, values(t, map[string]any{"title": fmt.Sprint(i)}))
		return err
	})
	if err := pgtest.CrossXID(f.ctx, db, 10_000, 200, 20, w.Progress); err != nil {
		t.Fatal(err)
	}
	w.Stop()

	var logged []int64
	if err := db.SelectContext(f.ctx, &logged, `SELECT id FROM events ORDER BY tx, id`); err != nil {
		t.Fatal(err)
	}
	var below, above int
	must(t, db.GetContext(f.ctx, &below, `SELECT count(*) FROM events WHERE tx BETWEEN '9800' AND '9999'`))
	must(t, db.GetContext(f.ctx, &above, `SELECT count(*) FROM events WHERE tx BETWEEN '10000' AND '10200'`))
	if below == 0 || above == 0 {
		t.Fatalf("%d events just below 10,000 and %d from it: the log does not cross it", below, above)
	}

	got := ids(f.readAll("reader", len(logged)))
	if !slices.Equal(got, logged) {
		t.Errorf("ReadEvents read %v,\nthe log holds %v", got, logged)
	}
	var since []int64
	for pos := end; ; {
		evs, err := f.s.EventsSince(f.ctx, pos, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			break
		}
		since = append(since, ids(evs)...)
		pos = evs[len(evs)-1].Position()
	}
	var want []int64
	must(t, db.SelectContext(f.ctx, &want, `SELECT id FROM events WHERE (tx, id) > ($1::xid8, $2) ORDER BY tx, id`, end.Tx, end.ID))
	if !slices.Equal(since, want) {
		t.Errorf("EventsSince(EventLogEnd) read %v,\nwant %v", since, want)
	}
	if end, err := f.s.EventLogEnd(f.ctx); err != nil || end.Tx < 10_000 {
		t.Errorf("EventLogEnd after the crossing = %v, %v; want a transaction id from 10,000", end, err)
	}
	n, err := f.s.StampSync(f.ctx)
	if err != nil || n == 0 {
		t.Errorf("StampSync stamped %d, %v", n, err)
	}
	var cursor TxID
	must(t, db.GetContext(f.ctx, &cursor, `SELECT tx FROM event_cursors WHERE consumer = 'sync'`))
	if last := lastXID(t, f); cursor != last {
		t.Errorf("the sync cursor stopped at transaction %d, the log ends at %d", cursor, last)
	}
}

func lastXID(t *testing.T, f *fixture) TxID {
	var x TxID
	must(t, f.db.GetContext(f.ctx, &x, `SELECT max(tx) FROM events`))
	return x
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

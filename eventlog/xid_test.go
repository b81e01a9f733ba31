package eventlog_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/internal/contenttest"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/syncstamp"
)

// TestLogReadersAcrossXIDDigitBoundary: across 9,999 -> 10,000, with a
// slow writer holding the log back so that rows of both sides are pending
// at once, every reader of the log gets each row once, in (tx, id) order:
// Read (the publisher's and the dispatcher's cursor), Since from End (the
// origin's render cache) and the sync stamper.
func TestLogReadersAcrossXIDDigitBoundary(t *testing.T) {
	t.Parallel()
	srv := pgtest.NewServer(t)
	db, _ := srv.New(t)
	f := &fixture{Fixture: contenttest.On(t, db), log: eventlog.New(db)}
	f.Articles()
	id := f.CreateItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
	f.ItemAction("en-us", id, content.ActionPublish)
	stamper := syncstamp.New(db)

	end, err := f.log.End(f.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stamper.Stamp(f.Ctx); err != nil {
		t.Fatal(err)
	}
	logged, _ := pgtest.CrossWhileWriting(f.Ctx, t, db, 3, func(ctx context.Context, i int) error {
		_, err := f.S.SaveItem(ctx, f.Inst, "en-us", id, f.Values(map[string]any{"title": fmt.Sprint(i)}))
		return err
	}, 10_000)

	if got := ids(f.readAll("reader", len(logged))); !slices.Equal(got, logged) {
		t.Errorf("Read read %v,\nthe log holds %v", got, logged)
	}
	var since []int64
	for pos := end; ; {
		evs, err := f.log.Since(f.Ctx, pos, 3)
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
	must(t, db.SelectContext(f.Ctx, &want, `SELECT id FROM events WHERE (tx, id) > ($1::xid8, $2) ORDER BY tx, id`, end.Tx, end.ID))
	if !slices.Equal(since, want) {
		t.Errorf("Since(End) read %v,\nwant %v", since, want)
	}
	if end, err := f.log.End(f.Ctx); err != nil || end.Tx < 10_000 {
		t.Errorf("End after the crossing = %v, %v; want a transaction id from 10,000", end, err)
	}
	n, err := stamper.Stamp(f.Ctx)
	if err != nil || n == 0 {
		t.Errorf("Stamp stamped %d, %v", n, err)
	}
	var cursor, last eventlog.TxID
	must(t, db.GetContext(f.Ctx, &cursor, `SELECT tx FROM event_cursors WHERE consumer = 'sync'`))
	must(t, db.GetContext(f.Ctx, &last, `SELECT max(tx) FROM events`))
	if cursor != last {
		t.Errorf("the sync cursor stopped at transaction %d, the log ends at %d", cursor, last)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

package syncstamp_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/internal/contenttest"
	"github.com/edgecms/edgecms/render/source"
	"github.com/edgecms/edgecms/syncstamp"
	"github.com/jmoiron/sqlx"
)

// fixture is a content store on a fresh database, whose sync positions
// the tests stamp and read.
type fixture struct {
	*contenttest.Fixture
}

func newFixture(t *testing.T) *fixture { return &fixture{contenttest.New(t)} }

// stamper is a Stamper on the fixture's database with the store's clock.
func (f *fixture) stamper() *syncstamp.Stamper {
	st := syncstamp.New(f.DB)
	st.Now = f.S.Now
	return st
}

func ptr[T any](v T) *T { return &v }

// syncRead stamps with the fixture's clock and reads a stream after token
// after. It returns the changes as "12" (visible) or "-12" (tombstone),
// and the last position (after when there is none). It checks that
// positions increase.
func (f *fixture) syncRead(fl source.Flavour, locale string, subject eventlog.Subject, after int64) ([]string, int64) {
	f.T.Helper()
	if _, err := f.stamper().Stamp(f.Ctx); err != nil {
		f.T.Fatalf("Stamp: %v", err)
	}
	r := source.NewReader(f.S)
	defer r.Close()
	cs, err := r.SyncChanges(f.Ctx, f.Inst, locale, fl, subject, after, 500)
	if err != nil {
		f.T.Fatalf("SyncChanges(%s, %s, %s, %d): %v", fl, locale, subject, after, err)
	}
	var out []string
	last := after
	for i, c := range cs {
		if i > 0 && c.Position <= last {
			f.T.Errorf("SyncChanges(%s, %s, %s, %d): position %d after %d", fl, locale, subject, after, c.Position, last)
		}
		last = c.Position
		if c.Visible {
			out = append(out, fmt.Sprint(c.ID))
		} else {
			out = append(out, fmt.Sprint(-c.ID))
		}
	}
	return out, last
}

// wantSync checks the changes of a stream after token after and returns
// the new token.
func (f *fixture) wantSync(what string, fl source.Flavour, subject eventlog.Subject, after int64, want ...int64) int64 {
	f.T.Helper()
	got, last := f.syncRead(fl, "en-us", subject, after)
	w := []string{}
	for _, id := range want {
		w = append(w, fmt.Sprint(id))
	}
	if got == nil {
		got = []string{}
	}
	if !slices.Equal(got, w) {
		f.T.Errorf("%s: %s %s changes after %d = %v, want %v", what, fl, subject, after, got, w)
	}
	return last
}

// TestSyncStreams follows the item and page streams of both flavours
// through saves, publishing, unpublishing, deleting and reordering: each
// change moves exactly the copies whose Fetch API form it changes.
func TestSyncStreams(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Articles()
	f.Pages()
	a := f.CreateItem("en-us", "Articles", map[string]any{"title": "A"}).ContentID
	b := f.CreateItem("en-us", "Articles", map[string]any{"title": "B"}).ContentID
	c := f.CreateItem("en-us", "Articles", map[string]any{"title": "C"}).ContentID
	f.ItemAction("en-us", a, content.ActionPublish)
	f.ItemAction("en-us", b, content.ActionPublish)
	p := f.CreatePage("en-us", "Home", 0).PageID
	comp := f.AddComponent("en-us", p, "MainContentZone", "Hi")

	// The first read seeds every visible copy.
	tf := f.wantSync("first", source.FlavourFetch, eventlog.SubjectItem, 0, a, b)
	tp := f.wantSync("first", source.FlavourPreview, eventlog.SubjectItem, 0, a, b, c, comp)
	pf := f.wantSync("first", source.FlavourFetch, eventlog.SubjectPage, 0)
	pp := f.wantSync("first", source.FlavourPreview, eventlog.SubjectPage, 0, p)
	f.wantSync("nothing new", source.FlavourFetch, eventlog.SubjectItem, tf)
	f.wantSync("nothing new", source.FlavourPreview, eventlog.SubjectItem, tp)

	f.SaveItem("en-us", a, map[string]any{"title": "A2"})
	tf = f.wantSync("save", source.FlavourFetch, eventlog.SubjectItem, tf)
	tp = f.wantSync("save", source.FlavourPreview, eventlog.SubjectItem, tp, a)

	f.ItemAction("en-us", a, content.ActionPublish)
	tf = f.wantSync("publish", source.FlavourFetch, eventlog.SubjectItem, tf, a)
	tp = f.wantSync("publish", source.FlavourPreview, eventlog.SubjectItem, tp, a)

	f.ItemAction("en-us", b, content.ActionUnpublish)
	tf = f.wantSync("unpublish", source.FlavourFetch, eventlog.SubjectItem, tf, -b)
	tp = f.wantSync("unpublish", source.FlavourPreview, eventlog.SubjectItem, tp, b) // state 7, still shown in preview

	if err := f.S.DeleteItem(f.Ctx, f.Inst, "en-us", c); err != nil {
		t.Fatal(err)
	}
	tf = f.wantSync("delete of a never published item", source.FlavourFetch, eventlog.SubjectItem, tf)
	tp = f.wantSync("delete", source.FlavourPreview, eventlog.SubjectItem, tp, -c)

	if err := f.S.ReorderContainer(f.Ctx, f.Inst, "Articles", []int64{b, a}); err != nil {
		t.Fatal(err)
	}
	tf = f.wantSync("reorder", source.FlavourFetch, eventlog.SubjectItem, tf, a) // b is not published, c deleted
	tp = f.wantSync("reorder", source.FlavourPreview, eventlog.SubjectItem, tp, a, b)
	if err := f.S.ReorderContainer(f.Ctx, f.Inst, "Articles", []int64{b, a}); err != nil {
		t.Fatal(err)
	}
	f.wantSync("same order again", source.FlavourPreview, eventlog.SubjectItem, tp)

	f.PageAction("en-us", p, content.ActionPublish)
	f.wantSync("page publish", source.FlavourFetch, eventlog.SubjectPage, pf, p)
	f.wantSync("page publish", source.FlavourPreview, eventlog.SubjectPage, pp, p)
	tf = f.wantSync("page publish publishes its component", source.FlavourFetch, eventlog.SubjectItem, tf, comp)
	tp = f.wantSync("page publish publishes its component", source.FlavourPreview, eventlog.SubjectItem, tp, comp)

	// Another locale's stream is its own.
	if got, _ := f.syncRead(source.FlavourPreview, "fr-ca", eventlog.SubjectItem, 0); len(got) != 0 {
		t.Errorf("fr-ca preview items = %v, want none", got)
	}
	f.SaveItem("fr-ca", a, map[string]any{"title": "A fr"})
	if got, _ := f.syncRead(source.FlavourPreview, "fr-ca", eventlog.SubjectItem, 0); !slices.Equal(got, []string{fmt.Sprint(a)}) {
		t.Errorf("fr-ca preview items = %v, want [%d]", got, a)
	}
	f.wantSync("a save in fr-ca", source.FlavourPreview, eventlog.SubjectItem, tp)
}

// TestSyncLinks checks that a copy whose unexpanded form shows another item
// moves when that item appears or disappears: the Fetch API leaves links to
// invisible items and invisible components out.
func TestSyncLinks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Articles()
	f.Pages()
	f.Model("Card", "content", content.Field{Name: "title", Type: content.TypeText}, content.Field{Name: "article", Type: content.TypeItem, Container: "Articles"},
		content.Field{Name: "more", Type: content.TypeList, Container: "Articles"})
	f.Container("Cards", "Card")
	a := f.CreateItem("en-us", "Articles", map[string]any{"title": "A"}).ContentID
	b := f.CreateItem("en-us", "Articles", map[string]any{"title": "B"}).ContentID
	card := f.CreateItem("en-us", "Cards", map[string]any{"title": "Card", "article": map[string]any{"contentID": a}}).ContentID
	list := f.CreateItem("en-us", "Cards", map[string]any{"title": "List", "more": map[string]any{"contentIDs": []int64{b}}}).ContentID
	for _, id := range []int64{a, b, card, list} {
		f.ItemAction("en-us", id, content.ActionPublish)
	}
	p := f.CreatePage("en-us", "Home", 0).PageID
	comp := f.AddComponent("en-us", p, "MainContentZone", "Hi")
	f.PageAction("en-us", p, content.ActionPublish)
	tf := f.wantSync("first", source.FlavourFetch, eventlog.SubjectItem, 0, a, b, card, list, comp)
	pf := f.wantSync("first", source.FlavourFetch, eventlog.SubjectPage, 0, p)

	f.ItemAction("en-us", a, content.ActionUnpublish)
	tf = f.wantSync("unpublish a linked item", source.FlavourFetch, eventlog.SubjectItem, tf, -a, card)
	f.ItemAction("en-us", a, content.ActionPublish)
	tf = f.wantSync("publish it again", source.FlavourFetch, eventlog.SubjectItem, tf, a, card)
	f.ItemAction("en-us", b, content.ActionUnpublish)
	tf = f.wantSync("unpublish a selected item", source.FlavourFetch, eventlog.SubjectItem, tf, -b, list)
	f.SaveItem("en-us", a, map[string]any{"title": "A2"})
	f.ItemAction("en-us", a, content.ActionPublish)
	tf = f.wantSync("a new version of a linked item", source.FlavourFetch, eventlog.SubjectItem, tf, a)

	if err := f.S.RemoveComponent(f.Ctx, f.Inst, "en-us", p, "MainContentZone", comp); err != nil {
		t.Fatal(err)
	}
	f.wantSync("remove a published component", source.FlavourFetch, eventlog.SubjectItem, tf, -comp)
	f.wantSync("remove a published component", source.FlavourFetch, eventlog.SubjectPage, pf, p)
}

// TestSyncCommitOrder checks that a change committed after a later one is
// never skipped: while a transaction that wrote first (and so comes first
// in the log) is open, the change of a transaction that committed
// meanwhile is in the stream at once, and the older change comes after it,
// above the token the reader got, once it commits.
func TestSyncCommitOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Articles()
	x := f.CreateItem("en-us", "Articles", map[string]any{"title": "X"}).ContentID
	y := f.CreateItem("en-us", "Articles", map[string]any{"title": "Y"}).ContentID
	tok := f.wantSync("first", source.FlavourPreview, eventlog.SubjectItem, 0, x, y)

	written, release, done := make(chan struct{}), make(chan struct{}), make(chan error)
	go func() {
		// A save of x as content writes it: the copy's new version and its
		// event, in a transaction that holds the event writer lock.
		done <- eventlog.Transact(f.Ctx, f.DB, func(tx *sqlx.Tx) error {
			if _, err := tx.ExecContext(f.Ctx, `UPDATE item_copies SET version_id = version_id + 1 WHERE content_id = $1 AND locale = 'en-us'`, x); err != nil {
				return err
			}
			if err := eventlog.Append(f.Ctx, tx, eventlog.Event{InstanceID: f.Inst.ID, InstanceGuid: f.Inst.Guid, State: eventlog.Saved,
				Subject: eventlog.SubjectItem, Locale: ptr("en-us"), ReferenceName: ptr("Articles"), ContentID: ptr(x), VersionID: ptr(int64(2)),
				ChangeDate: f.Clock}); err != nil {
				return err
			}
			close(written)
			<-release
			return nil
		})
	}()
	<-written
	f.SaveItem("en-us", y, map[string]any{"title": "Y2"}) // commits first
	tok = f.wantSync("while the older transaction is open", source.FlavourPreview, eventlog.SubjectItem, tok, y)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	tok = f.wantSync("after it commits", source.FlavourPreview, eventlog.SubjectItem, tok, x)
	f.wantSync("nothing twice", source.FlavourPreview, eventlog.SubjectItem, tok)
}

// TestSyncConcurrentPublishing publishes from several goroutines while a
// reader follows the fetch stream: tokens only increase, and the reader
// ends with exactly the published items at their last versions.
func TestSyncConcurrentPublishing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Articles()
	const writers, rounds = 6, 8
	ctx, cancel := context.WithCancel(f.Ctx)
	defer cancel()
	r := source.NewReader(f.S)
	defer r.Close()

	seen := map[int64]bool{} // contentID -> visible
	var token int64
	read := func() int {
		cs, err := r.SyncChanges(f.Ctx, f.Inst, "en-us", source.FlavourFetch, eventlog.SubjectItem, token, 7)
		if err != nil {
			t.Errorf("SyncChanges: %v", err)
			return 0
		}
		for _, c := range cs {
			if c.Position <= token {
				t.Errorf("position %d after token %d", c.Position, token)
			}
			token = c.Position
			seen[c.ID] = c.Visible
		}
		return len(cs)
	}
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for ctx.Err() == nil {
			read()
		}
	}()

	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds*3)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				st, err := f.S.CreateItem(f.Ctx, f.Inst, "en-us", "Articles", f.Values(map[string]any{"title": fmt.Sprintf("w%d-%d", w, i)}))
				if err != nil {
					errs <- err
					return
				}
				if _, err := f.S.ItemAction(f.Ctx, f.Inst, "en-us", st.ContentID, content.ActionPublish); err != nil {
					errs <- err
				}
				if i%3 == 2 {
					if _, err := f.S.ItemAction(f.Ctx, f.Inst, "en-us", st.ContentID, content.ActionUnpublish); err != nil {
						errs <- err
					}
				}
			}
		}()
	}
	wg.Wait()
	cancel()
	<-readerDone
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Every writer has committed: read to the end.
	for {
		if _, err := f.stamper().Stamp(f.Ctx); err != nil {
			t.Fatal(err)
		}
		if read() == 0 {
			break
		}
	}
	var published []int64
	if err := f.DB.SelectContext(f.Ctx, &published, `SELECT content_id FROM item_copies
		WHERE instance_id = $1 AND locale = 'en-us' AND published_version_id IS NOT NULL ORDER BY content_id`, f.Inst.ID); err != nil {
		t.Fatal(err)
	}
	var visible []int64
	for id, v := range seen {
		if v {
			visible = append(visible, id)
		}
	}
	slices.Sort(visible)
	if !slices.Equal(visible, published) {
		t.Errorf("the reader holds %v, the store publishes %v", visible, published)
	}
	if want := writers * (rounds - rounds/3); len(published) != want {
		t.Errorf("%d items published, want %d", len(published), want)
	}
}

// TestSyncTokensOutliveTrimAndRestart checks that tokens stay valid when
// the event log is trimmed and with a new Store on the same database.
func TestSyncTokensOutliveTrimAndRestart(t *testing.T) {
	f := newFixture(t)
	f.Articles()
	// Events trimmed before sync was first used are not needed: the first
	// read seeds from the tables.
	a := f.CreateItem("en-us", "Articles", map[string]any{"title": "A"}).ContentID
	if n, err := f.S.Events().Trim(f.Ctx, time.Now().Add(time.Hour)); err != nil || n == 0 {
		t.Fatalf("Trim = %d, %v; want the rows gone", n, err)
	}
	tok := f.wantSync("first, after a trim", source.FlavourPreview, eventlog.SubjectItem, 0, a)

	b := f.CreateItem("en-us", "Articles", map[string]any{"title": "B"}).ContentID
	f.S = f.NewStore() // a restart
	// The stamper's cursor moves only past transactions known to have
	// ended: a transaction of another database that commits while the
	// horizon is read can hold it back until the next stamp. Stamp and trim
	// until the log is empty, as the scheduler's rounds would.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := f.stamper().Stamp(f.Ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := f.S.Events().Trim(f.Ctx, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		n := f.Count(`SELECT count(*) FROM events`)
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events left after stamping and trimming for 10 s, want 0", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	tok = f.wantSync("after restart and trim", source.FlavourPreview, eventlog.SubjectItem, tok, b)
	f.SaveItem("en-us", a, map[string]any{"title": "A2"})
	f.wantSync("a change after the trim", source.FlavourPreview, eventlog.SubjectItem, tok, a)

	// Unread events hold the trim back.
	f.SaveItem("en-us", b, map[string]any{"title": "B2"})
	if _, err := f.S.Events().Trim(f.Ctx, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n := f.Count(`SELECT count(*) FROM events`); n == 0 {
		t.Error("the trim deleted an event sync had not read")
	}
}

// TestPruneSync checks that tombstones go after the retention and that a
// token older than one of them reads the stream from 0.
func TestPruneSync(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Articles()
	a := f.CreateItem("en-us", "Articles", map[string]any{"title": "A"}).ContentID
	b := f.CreateItem("en-us", "Articles", map[string]any{"title": "B"}).ContentID
	old := f.wantSync("first", source.FlavourPreview, eventlog.SubjectItem, 0, a, b)
	if err := f.S.DeleteItem(f.Ctx, f.Inst, "en-us", b); err != nil {
		t.Fatal(err)
	}
	recent := f.wantSync("delete", source.FlavourPreview, eventlog.SubjectItem, old, -b)

	if n, err := f.stamper().Prune(f.Ctx, f.Clock); err != nil || n != 0 {
		t.Errorf("Prune(now) = %d, %v; want 0 (the tombstone is not older)", n, err)
	}
	if n, err := f.stamper().Prune(f.Ctx, f.Clock.Add(time.Second)); err != nil || n != 1 {
		t.Errorf("Prune(later) = %d, %v; want 1", n, err)
	}
	f.wantSync("a token older than the pruned tombstone", source.FlavourPreview, eventlog.SubjectItem, old, a)
	f.wantSync("a token after it", source.FlavourPreview, eventlog.SubjectItem, recent)
	// Other streams keep their tokens.
	f.SaveItem("fr-ca", a, map[string]any{"title": "A fr"})
	got, _ := f.syncRead(source.FlavourPreview, "fr-ca", eventlog.SubjectItem, old)
	if !slices.Equal(got, []string{fmt.Sprint(a)}) {
		t.Errorf("fr-ca after an old token = %v, want [%d]", got, a)
	}
}

// TestSyncReseed checks a reseed (the stamper's cursor removed, say by an
// operator): copies that changed move, copies gone are buried, the others
// keep their positions.
func TestSyncReseed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Articles()
	a := f.CreateItem("en-us", "Articles", map[string]any{"title": "A"}).ContentID
	b := f.CreateItem("en-us", "Articles", map[string]any{"title": "B"}).ContentID
	c := f.CreateItem("en-us", "Articles", map[string]any{"title": "C"}).ContentID
	tok := f.wantSync("first", source.FlavourPreview, eventlog.SubjectItem, 0, a, b, c)
	if _, err := f.DB.ExecContext(f.Ctx, `DELETE FROM event_cursors WHERE consumer = 'sync'`); err != nil {
		t.Fatal(err)
	}
	// Changes the log will not tell the stamper about.
	if _, err := f.DB.ExecContext(f.Ctx, `UPDATE item_copies SET state = 3 WHERE content_id = $1`, b); err != nil {
		t.Fatal(err)
	}
	if _, err := f.DB.ExecContext(f.Ctx, `UPDATE item_copies SET version_id = version_id + 100 WHERE content_id = $1`, c); err != nil {
		t.Fatal(err)
	}
	f.wantSync("after the reseed", source.FlavourPreview, eventlog.SubjectItem, tok, c, -b)
}

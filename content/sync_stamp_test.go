package content

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
)

// syncRead stamps with the fixture's clock and reads a stream after token
// after. It returns the changes as "12" (visible) or "-12" (tombstone),
// and the last position (after when there is none). It checks that
// positions increase.
func (f *fixture) syncRead(fl Flavour, locale string, subject Subject, after int64) ([]string, int64) {
	f.t.Helper()
	if _, err := f.s.StampSync(f.ctx); err != nil {
		f.t.Fatalf("StampSync: %v", err)
	}
	r := f.s.Reader()
	defer r.Close()
	cs, err := r.SyncChanges(f.ctx, f.inst, locale, fl, subject, after, 500)
	if err != nil {
		f.t.Fatalf("SyncChanges(%s, %s, %s, %d): %v", fl, locale, subject, after, err)
	}
	var out []string
	last := after
	for i, c := range cs {
		if i > 0 && c.Position <= last {
			f.t.Errorf("SyncChanges(%s, %s, %s, %d): position %d after %d", fl, locale, subject, after, c.Position, last)
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
func (f *fixture) wantSync(what string, fl Flavour, subject Subject, after int64, want ...int64) int64 {
	f.t.Helper()
	got, last := f.syncRead(fl, "en-us", subject, after)
	w := []string{}
	for _, id := range want {
		w = append(w, fmt.Sprint(id))
	}
	if got == nil {
		got = []string{}
	}
	if !slices.Equal(got, w) {
		f.t.Errorf("%s: %s %s changes after %d = %v, want %v", what, fl, subject, after, got, w)
	}
	return last
}

// TestSyncStreams follows the item and page streams of both flavours
// through saves, publishing, unpublishing, deleting and reordering: each
// change moves exactly the copies whose Fetch API form it changes.
func TestSyncStreams(t *testing.T) {
	f := newFixture(t)
	f.articles()
	f.pages()
	a := f.createItem("en-us", "Articles", map[string]any{"title": "A"}).ContentID
	b := f.createItem("en-us", "Articles", map[string]any{"title": "B"}).ContentID
	c := f.createItem("en-us", "Articles", map[string]any{"title": "C"}).ContentID
	f.itemAction("en-us", a, ActionPublish)
	f.itemAction("en-us", b, ActionPublish)
	p := f.createPage("en-us", "Home", 0).PageID
	comp := f.addComponent("en-us", p, "MainContentZone", "Hi")

	// The first read seeds every visible copy.
	tf := f.wantSync("first", FlavourFetch, SubjectItem, 0, a, b)
	tp := f.wantSync("first", FlavourPreview, SubjectItem, 0, a, b, c, comp)
	pf := f.wantSync("first", FlavourFetch, SubjectPage, 0)
	pp := f.wantSync("first", FlavourPreview, SubjectPage, 0, p)
	f.wantSync("nothing new", FlavourFetch, SubjectItem, tf)
	f.wantSync("nothing new", FlavourPreview, SubjectItem, tp)

	f.saveItem("en-us", a, map[string]any{"title": "A2"})
	tf = f.wantSync("save", FlavourFetch, SubjectItem, tf)
	tp = f.wantSync("save", FlavourPreview, SubjectItem, tp, a)

	f.itemAction("en-us", a, ActionPublish)
	tf = f.wantSync("publish", FlavourFetch, SubjectItem, tf, a)
	tp = f.wantSync("publish", FlavourPreview, SubjectItem, tp, a)

	f.itemAction("en-us", b, ActionUnpublish)
	tf = f.wantSync("unpublish", FlavourFetch, SubjectItem, tf, -b)
	tp = f.wantSync("unpublish", FlavourPreview, SubjectItem, tp, b) // state 7, still shown in preview

	if err := f.s.DeleteItem(f.ctx, f.inst, "en-us", c); err != nil {
		t.Fatal(err)
	}
	tf = f.wantSync("delete of a never published item", FlavourFetch, SubjectItem, tf)
	tp = f.wantSync("delete", FlavourPreview, SubjectItem, tp, -c)

	if err := f.s.ReorderContainer(f.ctx, f.inst, "Articles", []int64{b, a}); err != nil {
		t.Fatal(err)
	}
	tf = f.wantSync("reorder", FlavourFetch, SubjectItem, tf, a) // b is not published, c deleted
	tp = f.wantSync("reorder", FlavourPreview, SubjectItem, tp, a, b)
	if err := f.s.ReorderContainer(f.ctx, f.inst, "Articles", []int64{b, a}); err != nil {
		t.Fatal(err)
	}
	f.wantSync("same order again", FlavourPreview, SubjectItem, tp)

	f.pageAction("en-us", p, ActionPublish)
	f.wantSync("page publish", FlavourFetch, SubjectPage, pf, p)
	f.wantSync("page publish", FlavourPreview, SubjectPage, pp, p)
	tf = f.wantSync("page publish publishes its component", FlavourFetch, SubjectItem, tf, comp)
	tp = f.wantSync("page publish publishes its component", FlavourPreview, SubjectItem, tp, comp)

	// Another locale's stream is its own.
	if got, _ := f.syncRead(FlavourPreview, "fr-ca", SubjectItem, 0); len(got) != 0 {
		t.Errorf("fr-ca preview items = %v, want none", got)
	}
	f.saveItem("fr-ca", a, map[string]any{"title": "A fr"})
	if got, _ := f.syncRead(FlavourPreview, "fr-ca", SubjectItem, 0); !slices.Equal(got, []string{fmt.Sprint(a)}) {
		t.Errorf("fr-ca preview items = %v, want [%d]", got, a)
	}
	f.wantSync("a save in fr-ca", FlavourPreview, SubjectItem, tp)
}

// TestSyncLinks checks that a copy whose unexpanded form shows another item
// moves when that item appears or disappears: the Fetch API leaves links to
// invisible items and invisible components out.
func TestSyncLinks(t *testing.T) {
	f := newFixture(t)
	f.articles()
	f.pages()
	f.model("Card", "content", Field{Name: "title", Type: TypeText}, Field{Name: "article", Type: TypeItem, Container: "Articles"},
		Field{Name: "more", Type: TypeList, Container: "Articles"})
	f.container("Cards", "Card")
	a := f.createItem("en-us", "Articles", map[string]any{"title": "A"}).ContentID
	b := f.createItem("en-us", "Articles", map[string]any{"title": "B"}).ContentID
	card := f.createItem("en-us", "Cards", map[string]any{"title": "Card", "article": map[string]any{"contentID": a}}).ContentID
	list := f.createItem("en-us", "Cards", map[string]any{"title": "List", "more": map[string]any{"contentIDs": []int64{b}}}).ContentID
	for _, id := range []int64{a, b, card, list} {
		f.itemAction("en-us", id, ActionPublish)
	}
	p := f.createPage("en-us", "Home", 0).PageID
	comp := f.addComponent("en-us", p, "MainContentZone", "Hi")
	f.pageAction("en-us", p, ActionPublish)
	tf := f.wantSync("first", FlavourFetch, SubjectItem, 0, a, b, card, list, comp)
	pf := f.wantSync("first", FlavourFetch, SubjectPage, 0, p)

	f.itemAction("en-us", a, ActionUnpublish)
	tf = f.wantSync("unpublish a linked item", FlavourFetch, SubjectItem, tf, -a, card)
	f.itemAction("en-us", a, ActionPublish)
	tf = f.wantSync("publish it again", FlavourFetch, SubjectItem, tf, a, card)
	f.itemAction("en-us", b, ActionUnpublish)
	tf = f.wantSync("unpublish a selected item", FlavourFetch, SubjectItem, tf, -b, list)
	f.saveItem("en-us", a, map[string]any{"title": "A2"})
	f.itemAction("en-us", a, ActionPublish)
	tf = f.wantSync("a new version of a linked item", FlavourFetch, SubjectItem, tf, a)

	if err := f.s.RemoveComponent(f.ctx, f.inst, "en-us", p, "MainContentZone", comp); err != nil {
		t.Fatal(err)
	}
	f.wantSync("remove a published component", FlavourFetch, SubjectItem, tf, -comp)
	f.wantSync("remove a published component", FlavourFetch, SubjectPage, pf, p)
}

// TestSyncCommitOrder checks that a change committed after a later one is
// never skipped: while a transaction that wrote first (and so comes first
// in the log) is open, the change of a transaction that committed
// meanwhile is in the stream at once, and the older change comes after it,
// above the token the reader got, once it commits.
func TestSyncCommitOrder(t *testing.T) {
	f := newFixture(t)
	f.articles()
	x := f.createItem("en-us", "Articles", map[string]any{"title": "X"}).ContentID
	y := f.createItem("en-us", "Articles", map[string]any{"title": "Y"}).ContentID
	tok := f.wantSync("first", FlavourPreview, SubjectItem, 0, x, y)

	written, release, done := make(chan struct{}), make(chan struct{}), make(chan error)
	go func() {
		done <- f.s.transact(f.ctx, func(tx *sqlx.Tx) error {
			if _, err := saveItem(f.ctx, tx, f.inst, "en-us", x, values(t, map[string]any{"title": "X2"}), f.s.now()); err != nil {
				return err
			}
			close(written)
			<-release
			return nil
		})
	}()
	<-written
	f.saveItem("en-us", y, map[string]any{"title": "Y2"}) // commits first
	tok = f.wantSync("while the older transaction is open", FlavourPreview, SubjectItem, tok, y)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	tok = f.wantSync("after it commits", FlavourPreview, SubjectItem, tok, x)
	f.wantSync("nothing twice", FlavourPreview, SubjectItem, tok)
}

// TestSyncConcurrentPublishing publishes from several goroutines while a
// reader follows the fetch stream: tokens only increase, and the reader
// ends with exactly the published items at their last versions.
func TestSyncConcurrentPublishing(t *testing.T) {
	f := newFixture(t)
	f.articles()
	const writers, rounds = 6, 8
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	r := f.s.Reader()
	defer r.Close()

	seen := map[int64]bool{} // contentID -> visible
	var token int64
	read := func() int {
		cs, err := r.SyncChanges(f.ctx, f.inst, "en-us", FlavourFetch, SubjectItem, token, 7)
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
				st, err := f.s.CreateItem(f.ctx, f.inst, "en-us", "Articles", values(t, map[string]any{"title": fmt.Sprintf("w%d-%d", w, i)}))
				if err != nil {
					errs <- err
					return
				}
				if _, err := f.s.ItemAction(f.ctx, f.inst, "en-us", st.ContentID, ActionPublish); err != nil {
					errs <- err
				}
				if i%3 == 2 {
					if _, err := f.s.ItemAction(f.ctx, f.inst, "en-us", st.ContentID, ActionUnpublish); err != nil {
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
		if _, err := f.s.StampSync(f.ctx); err != nil {
			t.Fatal(err)
		}
		if read() == 0 {
			break
		}
	}
	var published []int64
	if err := f.db.SelectContext(f.ctx, &published, `SELECT content_id FROM item_copies
		WHERE instance_id = $1 AND locale = 'en-us' AND published_version_id IS NOT NULL ORDER BY content_id`, f.inst.ID); err != nil {
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
	f.articles()
	// Events trimmed before sync was first used are not needed: the first
	// read seeds from the tables.
	a := f.createItem("en-us", "Articles", map[string]any{"title": "A"}).ContentID
	if n, err := f.s.TrimEvents(f.ctx, time.Now().Add(time.Hour)); err != nil || n == 0 {
		t.Fatalf("TrimEvents = %d, %v; want the rows gone", n, err)
	}
	tok := f.wantSync("first, after a trim", FlavourPreview, SubjectItem, 0, a)

	b := f.createItem("en-us", "Articles", map[string]any{"title": "B"}).ContentID
	f.s = NewStore(f.db) // a restart
	f.s.Now = func() time.Time { return f.clock }
	// The stamper's cursor moves only past transactions known to have
	// ended: a transaction of another database that commits while the
	// horizon is read can hold it back until the next stamp. Stamp and trim
	// until the log is empty, as the scheduler's rounds would.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := f.s.StampSync(f.ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.TrimEvents(f.ctx, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		n := f.count(`SELECT count(*) FROM events`)
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events left after stamping and trimming for 10 s, want 0", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	tok = f.wantSync("after restart and trim", FlavourPreview, SubjectItem, tok, b)
	f.saveItem("en-us", a, map[string]any{"title": "A2"})
	f.wantSync("a change after the trim", FlavourPreview, SubjectItem, tok, a)

	// Unread events hold the trim back.
	f.saveItem("en-us", b, map[string]any{"title": "B2"})
	if _, err := f.s.TrimEvents(f.ctx, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n := f.count(`SELECT count(*) FROM events`); n == 0 {
		t.Error("the trim deleted an event sync had not read")
	}
}

// TestPruneSync checks that tombstones go after the retention and that a
// token older than one of them reads the stream from 0.
func TestPruneSync(t *testing.T) {
	f := newFixture(t)
	f.articles()
	a := f.createItem("en-us", "Articles", map[string]any{"title": "A"}).ContentID
	b := f.createItem("en-us", "Articles", map[string]any{"title": "B"}).ContentID
	old := f.wantSync("first", FlavourPreview, SubjectItem, 0, a, b)
	if err := f.s.DeleteItem(f.ctx, f.inst, "en-us", b); err != nil {
		t.Fatal(err)
	}
	recent := f.wantSync("delete", FlavourPreview, SubjectItem, old, -b)

	if n, err := f.s.PruneSync(f.ctx, f.clock); err != nil || n != 0 {
		t.Errorf("PruneSync(now) = %d, %v; want 0 (the tombstone is not older)", n, err)
	}
	if n, err := f.s.PruneSync(f.ctx, f.clock.Add(time.Second)); err != nil || n != 1 {
		t.Errorf("PruneSync(later) = %d, %v; want 1", n, err)
	}
	f.wantSync("a token older than the pruned tombstone", FlavourPreview, SubjectItem, old, a)
	f.wantSync("a token after it", FlavourPreview, SubjectItem, recent)
	// Other streams keep their tokens.
	f.saveItem("fr-ca", a, map[string]any{"title": "A fr"})
	got, _ := f.syncRead(FlavourPreview, "fr-ca", SubjectItem, old)
	if !slices.Equal(got, []string{fmt.Sprint(a)}) {
		t.Errorf("fr-ca after an old token = %v, want [%d]", got, a)
	}
}

// TestSyncReseed checks a reseed (the stamper's cursor removed, say by an
// operator): copies that changed move, copies gone are buried, the others
// keep their positions.
func TestSyncReseed(t *testing.T) {
	f := newFixture(t)
	f.articles()
	a := f.createItem("en-us", "Articles", map[string]any{"title": "A"}).ContentID
	b := f.createItem("en-us", "Articles", map[string]any{"title": "B"}).ContentID
	c := f.createItem("en-us", "Articles", map[string]any{"title": "C"}).ContentID
	tok := f.wantSync("first", FlavourPreview, SubjectItem, 0, a, b, c)
	if _, err := f.db.ExecContext(f.ctx, `DELETE FROM event_cursors WHERE consumer = 'sync'`); err != nil {
		t.Fatal(err)
	}
	// Changes the log will not tell the stamper about.
	if _, err := f.db.ExecContext(f.ctx, `UPDATE item_copies SET state = 3 WHERE content_id = $1`, b); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.ExecContext(f.ctx, `UPDATE item_copies SET version_id = version_id + 100 WHERE content_id = $1`, c); err != nil {
		t.Fatal(err)
	}
	f.wantSync("after the reseed", FlavourPreview, SubjectItem, tok, c, -b)
}

package content

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestEventPayload(t *testing.T) {
	at := time.Date(2030, 5, 17, 9, 30, 1, 234567000, time.FixedZone("x", 3600))
	tests := []struct {
		name string
		e    Event
		want string
	}{
		{"item", Event{State: EventPublished, Subject: SubjectItem, InstanceGuid: "acme", Locale: ptr("en-us"),
			ReferenceName: ptr("Articles"), ContentID: ptr(int64(7)), VersionID: ptr(int64(42)), ChangeDate: at},
			`{"changeDateUTC":"2030-05-17T08:30:01.234Z","contentID":7,"contentVersionID":42,"instanceGuid":"acme","languageCode":"en-us","referenceName":"Articles","state":"Published"}`},
		{"page", Event{State: EventSaved, Subject: SubjectPage, InstanceGuid: "acme", Locale: ptr("fr-ca"),
			PageID: ptr(int64(3)), VersionID: ptr(int64(9)), ChangeDate: at},
			`{"changeDateUTC":"2030-05-17T08:30:01.234Z","instanceGuid":"acme","languageCode":"fr-ca","pageID":3,"pageVersionID":9,"state":"Saved"}`},
		{"deleted page", Event{State: EventDeleted, Subject: SubjectPage, InstanceGuid: "acme", Locale: ptr("fr-ca"),
			PageID: ptr(int64(3)), VersionID: ptr(int64(0)), ChangeDate: at},
			`{"changeDateUTC":"2030-05-17T08:30:01.234Z","instanceGuid":"acme","languageCode":"fr-ca","pageID":3,"pageVersionID":0,"state":"Deleted"}`},
		{"list", Event{State: EventDeleted, Subject: SubjectList, InstanceGuid: "acme", Locale: ptr("en-us"),
			ReferenceName: ptr("Articles"), ChangeDate: at},
			`{"changeDateUTC":"2030-05-17T08:30:01.234Z","instanceGuid":"acme","languageCode":"en-us","referenceName":"Articles","state":"Deleted"}`},
		{"redirect", Event{State: EventDeleted, Subject: SubjectRedirect, InstanceGuid: "acme", ChangeDate: at},
			`{"changeDateUTC":"2030-05-17T08:30:01.234Z","instanceGuid":"acme","state":"Deleted"}`},
		{"locale", Event{State: EventDeleted, Subject: SubjectLocale, InstanceGuid: "acme", Locale: ptr("de-DE"), ChangeDate: at},
			`{"changeDateUTC":"2030-05-17T08:30:01.234Z","instanceGuid":"acme","languageCode":"de-DE","state":"Deleted"}`},
		// The channel's name is no referenceName (which names a container).
		{"channel", Event{State: EventDeleted, Subject: SubjectChannel, InstanceGuid: "acme", Locale: ptr("en-us"),
			ReferenceName: ptr("footer"), ChangeDate: at},
			`{"changeDateUTC":"2030-05-17T08:30:01.234Z","instanceGuid":"acme","languageCode":"en-us","state":"Deleted"}`},
	}
	for _, tt := range tests {
		raw, err := json.Marshal(tt.e.Payload())
		if err != nil {
			t.Fatal(err)
		}
		if string(raw) != tt.want {
			t.Errorf("%s: Payload() = %s, want %s", tt.name, raw, tt.want)
		}
	}
}

// TestEventRows checks the rows each kind of change writes, with every member.
func TestEventRows(t *testing.T) {
	f := newFixture(t)
	f.articles()
	f.pages()
	mark := f.lastEvent()
	st := f.createItem("fr-ca", "Articles", map[string]any{"title": "T"})
	rows := f.eventsAfter(mark)
	if len(rows) != 1 {
		t.Fatalf("create item wrote %d events, want 1", len(rows))
	}
	e := rows[0]
	if e.InstanceID != f.inst.ID || e.InstanceGuid != "acme" || e.Tx == 0 || e.PageID != nil {
		t.Errorf("event row = %+v, want instance %d acme, a tx, no pageID", e, f.inst.ID)
	}
	f.checkEvents("create item", mark, itemEv(EventSaved, "fr-ca", "Articles", st.ContentID, st.VersionID, t0))

	// The change date is the store's clock, in UTC, to the microsecond.
	f.clock = time.Date(2031, 1, 2, 3, 4, 5, 678901234, time.FixedZone("y", -5*3600))
	at := time.Date(2031, 1, 2, 8, 4, 5, 678901000, time.UTC)
	mark = f.lastEvent()
	f.itemAction("fr-ca", st.ContentID, ActionPublish)
	f.checkEvents("publish item", mark, itemEv(EventPublished, "fr-ca", "Articles", st.ContentID, st.VersionID, at))
	if got := f.item("fr-ca", st.ContentID); !got.Published.Modified.Equal(t0) {
		t.Errorf("published modified = %v, want the save's time %v", got.Published.Modified, t0)
	}

	mark = f.lastEvent()
	p := f.createPage("en-us", "Home", 0)
	f.checkEvents("create page", mark, pageEv(EventSaved, "en-us", p.PageID, p.VersionID, at))
	for _, a := range []Action{ActionRequestApproval, ActionApprove, ActionPublish, ActionUnpublish} {
		mark = f.lastEvent()
		f.pageAction("en-us", p.PageID, a)
		v := p.VersionID
		if a == ActionUnpublish {
			v = 0
		}
		f.checkEvents("page "+string(a), mark, pageEv(a.EventState(), "en-us", p.PageID, v, at))
	}
}

func listEv(locale, ref string) ev {
	return ev{State: EventDeleted, Subject: SubjectList, Locale: locale, ReferenceName: ref, ChangeDate: t0}
}

func localeEv(code string) ev {
	return ev{State: EventDeleted, Subject: SubjectLocale, Locale: code, ChangeDate: t0}
}

func channelEv(locale, channel string, at time.Time) ev {
	return ev{State: EventDeleted, Subject: SubjectChannel, Locale: locale, ReferenceName: channel, ChangeDate: at}
}

// TestStructureEvents checks the events of changes to an instance's
// structure, which the publisher needs to add or withdraw whole sets of
// objects: locales added and removed, channels added, containers deleted.
// A change that is refused writes nothing.
func TestStructureEvents(t *testing.T) {
	f := newFixture(t)
	f.articles()

	mark := f.lastEvent()
	f.locale("de-DE")
	f.checkEvents("create locale", mark, localeEv("de-DE"))
	mark = f.lastEvent()
	if _, err := f.s.CreateLocale(f.ctx, f.inst, Locale{Code: "DE-de", Name: "again"}); err == nil {
		t.Fatal("a second de-de was created")
	}
	f.checkEvents("create a duplicate locale", mark)

	mark = f.lastEvent()
	ch, err := f.s.CreateChannel(f.ctx, f.inst, "footer")
	if err != nil {
		t.Fatal(err)
	}
	// Dated when the channel was created.
	at := ch.CreatedAt.UTC()
	f.checkEvents("create channel", mark, channelEv("en-us", "footer", at), channelEv("fr-ca", "footer", at), channelEv("de-DE", "footer", at))
	mark = f.lastEvent()
	if _, err := f.s.CreateChannel(f.ctx, f.inst, "Footer"); err == nil {
		t.Fatal("a second footer channel was created")
	}
	f.checkEvents("create a duplicate channel", mark)

	f.container("Empty", "Article")
	mark = f.lastEvent()
	if err := f.s.DeleteContainer(f.ctx, f.inst, "empty"); err != nil {
		t.Fatal(err)
	}
	f.checkEvents("delete container", mark, listEv("en-us", "Empty"), listEv("fr-ca", "Empty"), listEv("de-DE", "Empty"))
	f.createItem("en-us", "Articles", map[string]any{"title": "T"})
	mark = f.lastEvent()
	if err := f.s.DeleteContainer(f.ctx, f.inst, "Articles"); err == nil {
		t.Fatal("a container with items was deleted")
	}
	f.checkEvents("delete a container with items", mark)

	mark = f.lastEvent()
	if err := f.s.DeleteLocale(f.ctx, f.inst, "de-de"); err != nil {
		t.Fatal(err)
	}
	f.checkEvents("delete locale", mark, localeEv("de-DE"))
	mark = f.lastEvent()
	if err := f.s.DeleteLocale(f.ctx, f.inst, "en-us"); err == nil {
		t.Fatal("the default locale was deleted")
	}
	f.checkEvents("delete the default locale", mark)
}

// saveEvent writes one item event through the store and returns its row.
func (f *fixture) saveEvent(id int64) Event {
	f.t.Helper()
	mark := f.lastEvent()
	f.saveItem("en-us", id, map[string]any{"body": "x"})
	evs := f.eventsAfter(mark)
	if len(evs) != 1 {
		f.t.Fatalf("save wrote %d events, want 1", len(evs))
	}
	return evs[0]
}

// readAll reads a consumer's events, acking each batch, until it has n of
// them. Other transactions anywhere on the server hold back what a reader
// may see, so a row may take a moment to show; the wait has a generous
// bound and asserts nothing about time.
func (f *fixture) readAll(consumer string, n int) []Event {
	f.t.Helper()
	var out []Event
	deadline := time.Now().Add(30 * time.Second)
	for len(out) < n {
		evs, err := f.s.ReadEvents(f.ctx, consumer, 2)
		if err != nil {
			f.t.Fatal(err)
		}
		if len(evs) == 0 {
			if time.Now().After(deadline) {
				f.t.Fatalf("consumer %s got %d events, want %d", consumer, len(out), n)
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		out = append(out, evs...)
		if err := f.s.AckEvents(f.ctx, consumer, evs[len(evs)-1]); err != nil {
			f.t.Fatal(err)
		}
	}
	return out
}

func ids(evs []Event) []int64 {
	out := []int64{}
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}

func TestReadAndAckEvents(t *testing.T) {
	f := newFixture(t)
	f.articles()
	id := f.createItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
	var want []int64
	for _, e := range f.eventsAfter(0) {
		want = append(want, e.ID)
	}
	for range 4 {
		want = append(want, f.saveEvent(id).ID)
	}

	// A new consumer starts at the beginning; each consumer has its own position.
	if got := ids(f.readAll("publisher", len(want))); !slices.Equal(got, want) {
		t.Errorf("publisher read %v, want %v", got, want)
	}
	if got := ids(f.readAll("webhooks", 2)); !slices.Equal(got, want[:2]) {
		t.Errorf("webhooks read %v, want %v", got, want[:2])
	}
	evs, err := f.s.ReadEvents(f.ctx, "publisher", 10)
	if err != nil || len(evs) != 0 {
		t.Errorf("publisher after reading everything: %v, %v; want nothing", ids(evs), err)
	}
	// Reading without acking returns the same rows again.
	for range 2 {
		evs, err := f.s.ReadEvents(f.ctx, "webhooks", 10)
		if err != nil || !slices.Equal(ids(evs), want[2:]) {
			t.Errorf("webhooks read %v, %v; want %v", ids(evs), err, want[2:])
		}
	}
	// An ack never moves a position back.
	first := f.eventsAfter(0)[0]
	first.Tx = 1
	if err := f.s.AckEvents(f.ctx, "webhooks", first); err != nil {
		t.Fatal(err)
	}
	if got := ids(f.readAll("webhooks", len(want)-2)); !slices.Equal(got, want[2:]) {
		t.Errorf("webhooks after acking an old row read %v, want %v", got, want[2:])
	}
	// New rows reach both.
	next := f.saveEvent(id)
	for _, c := range []string{"publisher", "webhooks"} {
		if got := ids(f.readAll(c, 1)); !slices.Equal(got, []int64{next.ID}) {
			t.Errorf("%s read %v, want %v", c, got, []int64{next.ID})
		}
	}
	// The limit bounds a read.
	evs, err = f.s.ReadEvents(f.ctx, "audit", 3)
	if err != nil || len(evs) != 3 {
		t.Errorf("ReadEvents(limit 3) = %d rows, %v", len(evs), err)
	}
}

// TestReadEventsNeverSkipsARunningTransaction: a row committed after a
// consumer has read past its neighbours is still read, exactly once.
func TestReadEventsNeverSkipsARunningTransaction(t *testing.T) {
	f := newFixture(t)
	f.articles()
	id := f.createItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
	before := f.readAll("publisher", len(f.eventsAfter(0)))

	// Transaction A writes an event and stays open.
	ctx := context.Background()
	txA, err := f.db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer txA.Rollback()
	// As every event writer does (Store.transact), A takes the shared
	// writer lock before it writes.
	if _, err := txA.ExecContext(ctx, `SELECT pg_advisory_xact_lock_shared($1)`, eventWriterLock); err != nil {
		t.Fatal(err)
	}
	if err := appendEvent(ctx, txA, f.inst, itemEv0(id, "A")); err != nil {
		t.Fatal(err)
	}
	// Transaction B (a store call) writes an event and commits.
	b := f.saveEvent(id)

	// While A runs, B's row, which sorts after A's, is not returned: a
	// consumer acking B would skip A.
	for range 3 {
		evs, err := f.s.ReadEvents(f.ctx, "publisher", 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.ID == b.ID {
				t.Fatalf("ReadEvents returned row %d of a transaction that started after a running one", b.ID)
			}
		}
	}
	if err := txA.Commit(); err != nil {
		t.Fatal(err)
	}
	var a Event
	if err := f.db.GetContext(ctx, &a, `SELECT id, tx::text AS tx FROM events WHERE reference_name = 'A'`); err != nil {
		t.Fatal(err)
	}
	got := f.readAll("publisher", 2)
	if want := []int64{a.ID, b.ID}; !slices.Equal(ids(got), want) {
		t.Errorf("after A commits, read %v, want A then B %v", ids(got), want)
	}
	evs, err := f.s.ReadEvents(f.ctx, "publisher", 10)
	if err != nil || len(evs) != 0 {
		t.Errorf("read again: %v, %v; want nothing (each row once)", ids(evs), err)
	}
	_ = before

	// A rolled-back transaction's row never appears.
	txC, err := f.db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := appendEvent(ctx, txC, f.inst, itemEv0(id, "C")); err != nil {
		t.Fatal(err)
	}
	txC.Rollback()
	d := f.saveEvent(id)
	if got := ids(f.readAll("publisher", 1)); !slices.Equal(got, []int64{d.ID}) {
		t.Errorf("after a rolled-back event: read %v, want %v", got, []int64{d.ID})
	}
}

func itemEv0(id int64, ref string) Event {
	return Event{State: EventSaved, Subject: SubjectItem, Locale: ptr("en-us"), ReferenceName: ptr(ref),
		ContentID: ptr(id), VersionID: ptr(int64(1)), ChangeDate: t0}
}

func TestTrimEvents(t *testing.T) {
	f := newFixture(t)
	f.articles()
	id := f.createItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
	for range 4 {
		f.saveEvent(id)
	}
	all := ids(f.eventsAfter(0)) // the instance's, the item's and 4 saves
	f.readAll("publisher", len(all))
	f.readAll("webhooks", 2)

	// Nothing is older than an hour ago.
	n, err := f.s.TrimEvents(f.ctx, time.Now().Add(-time.Hour))
	if err != nil || n != 0 {
		t.Errorf("TrimEvents(an hour ago) = %d, %v; want 0", n, err)
	}
	// Rows every consumer has read go; the others stay.
	n, err = f.s.TrimEvents(f.ctx, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(f.eventsAfter(0)), all[2:]; !slices.Equal(got, want) || n != 2 {
		t.Errorf("after trim: %d deleted, rows %v left; want 2 deleted, %v left", n, got, want)
	}
	if got := ids(f.readAll("webhooks", len(all)-2)); !slices.Equal(got, all[2:]) {
		t.Errorf("webhooks after trim read %v, want %v", got, all[2:])
	}
	evs, err := f.s.ReadEvents(f.ctx, "publisher", 10)
	if err != nil || len(evs) != 0 {
		t.Errorf("publisher after trim read %v, %v; want nothing", ids(evs), err)
	}
	// A consumer that has read nothing holds every row.
	if _, err := f.s.ReadEvents(f.ctx, "late", 0); err != nil {
		t.Fatal(err)
	}
	f.saveEvent(id)
	n, err = f.s.TrimEvents(f.ctx, time.Now().Add(time.Hour))
	if err != nil || n != 0 {
		t.Errorf("TrimEvents with a consumer at the start = %d, %v; want 0", n, err)
	}
}

// TestTrimEventsInBatches: a log longer than a batch goes in several
// transactions, every row that may go does, and none that may not; two
// trimmers at once delete each row once.
func TestTrimEventsInBatches(t *testing.T) {
	defer func(n int) { trimBatch = n }(trimBatch)
	trimBatch = 3
	f := newFixture(t)
	f.articles()
	id := f.createItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
	for range 20 {
		f.saveEvent(id)
	}
	all := ids(f.eventsAfter(0))
	f.readAll("publisher", len(all)-5) // 16 of 21, two at a time
	var wg sync.WaitGroup
	counts := make([]int64, 2)
	for i := range counts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := f.s.TrimEvents(f.ctx, time.Now().Add(time.Hour))
			if err != nil {
				t.Errorf("TrimEvents: %v", err)
			}
			counts[i] = n
		}()
	}
	wg.Wait()
	if got, want := ids(f.eventsAfter(0)), all[len(all)-5:]; !slices.Equal(got, want) {
		t.Errorf("after trim: rows %v left, want %v", got, want)
	}
	if counts[0]+counts[1] != int64(len(all)-5) {
		t.Errorf("trimmers deleted %v rows, want %d in all", counts, len(all)-5)
	}
}

// TestReadEventsIgnoresOtherTransactions: a long transaction that cannot
// write events (it does not hold the writer lock) does not hold the log back.
func TestReadEventsIgnoresOtherTransactions(t *testing.T) {
	f := newFixture(t)
	f.articles()
	id := f.createItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
	f.readAll("publisher", 1)

	ctx := context.Background()
	other, err := f.db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Rollback()
	// It has a transaction id (it wrote), older than the change below.
	if _, err := other.ExecContext(ctx, `SELECT pg_current_xact_id()`); err != nil {
		t.Fatal(err)
	}
	b := f.saveEvent(id)
	// Transactions of other databases on the server (other tests) that end
	// while the horizon is read can hold it back until the next read; the
	// other transaction here stays open throughout, so it must not.
	deadline := time.Now().Add(10 * time.Second)
	for {
		evs, err := f.s.ReadEvents(f.ctx, "publisher", 10)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(ids(evs), b.ID) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ReadEvents = %v for 10 s while a non-writer transaction runs, want it to include %d", ids(evs), b.ID)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

package eventlog_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/internal/contenttest"
)

// fixture is a content store on a fresh database and its event log.
type fixture struct {
	*contenttest.Fixture
	log *eventlog.Log
}

func newFixture(t *testing.T) *fixture {
	f := contenttest.New(t)
	return &fixture{Fixture: f, log: eventlog.New(f.DB)}
}

// lastEvent is the id of the newest row of the event log (0 when empty):
// a mark to read the rows a change writes after it.
func (f *fixture) lastEvent() int64 {
	f.T.Helper()
	var id int64
	if err := f.DB.GetContext(f.Ctx, &id, `SELECT coalesce(max(id), 0) FROM events`); err != nil {
		f.T.Fatal(err)
	}
	return id
}

// eventsAfter returns the rows of the event log after mark, in id order,
// read straight from the table.
func (f *fixture) eventsAfter(mark int64) []eventlog.Event {
	f.T.Helper()
	evs := []eventlog.Event{}
	err := f.DB.SelectContext(f.Ctx, &evs, `SELECT id, tx::text AS tx, instance_id, instance_guid, state, subject,
		locale, reference_name, content_id, page_id, version_id, change_date, created_at
		FROM events WHERE id > $1 ORDER BY id`, mark)
	if err != nil {
		f.T.Fatal(err)
	}
	return evs
}

func ptr[T any](v T) *T { return &v }

func TestEventPayload(t *testing.T) {
	t.Parallel()
	at := time.Date(2030, 5, 17, 9, 30, 1, 234567000, time.FixedZone("x", 3600))
	tests := []struct {
		name string
		e    eventlog.Event
		want string
	}{
		{"item", eventlog.Event{State: eventlog.Published, Subject: eventlog.SubjectItem, InstanceGuid: "acme", Locale: ptr("en-us"),
			ReferenceName: ptr("Articles"), ContentID: ptr(int64(7)), VersionID: ptr(int64(42)), ChangeDate: at},
			`{"changeDateUTC":"2030-05-17T08:30:01.234Z","contentID":7,"contentVersionID":42,"instanceGuid":"acme","languageCode":"en-us","referenceName":"Articles","state":"Published"}`},
		{"page", eventlog.Event{State: eventlog.Saved, Subject: eventlog.SubjectPage, InstanceGuid: "acme", Locale: ptr("fr-ca"),
			PageID: ptr(int64(3)), VersionID: ptr(int64(9)), ChangeDate: at},
			`{"changeDateUTC":"2030-05-17T08:30:01.234Z","instanceGuid":"acme","languageCode":"fr-ca","pageID":3,"pageVersionID":9,"state":"Saved"}`},
		{"deleted page", eventlog.Event{State: eventlog.Deleted, Subject: eventlog.SubjectPage, InstanceGuid: "acme", Locale: ptr("fr-ca"),
			PageID: ptr(int64(3)), VersionID: ptr(int64(0)), ChangeDate: at},
			`{"changeDateUTC":"2030-05-17T08:30:01.234Z","instanceGuid":"acme","languageCode":"fr-ca","pageID":3,"pageVersionID":0,"state":"Deleted"}`},
		{"list", eventlog.Event{State: eventlog.Deleted, Subject: eventlog.SubjectList, InstanceGuid: "acme", Locale: ptr("en-us"),
			ReferenceName: ptr("Articles"), ChangeDate: at},
			`{"changeDateUTC":"2030-05-17T08:30:01.234Z","instanceGuid":"acme","languageCode":"en-us","referenceName":"Articles","state":"Deleted"}`},
		{"redirect", eventlog.Event{State: eventlog.Deleted, Subject: eventlog.SubjectRedirect, InstanceGuid: "acme", ChangeDate: at},
			`{"changeDateUTC":"2030-05-17T08:30:01.234Z","instanceGuid":"acme","state":"Deleted"}`},
		{"locale", eventlog.Event{State: eventlog.Deleted, Subject: eventlog.SubjectLocale, InstanceGuid: "acme", Locale: ptr("de-DE"), ChangeDate: at},
			`{"changeDateUTC":"2030-05-17T08:30:01.234Z","instanceGuid":"acme","languageCode":"de-DE","state":"Deleted"}`},
		// The channel's name is no referenceName (which names a container).
		{"channel", eventlog.Event{State: eventlog.Deleted, Subject: eventlog.SubjectChannel, InstanceGuid: "acme", Locale: ptr("en-us"),
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

// saveEvent writes one item event through the store and returns its row.
func (f *fixture) saveEvent(id int64) eventlog.Event {
	f.T.Helper()
	mark := f.lastEvent()
	f.SaveItem("en-us", id, map[string]any{"body": "x"})
	evs := f.eventsAfter(mark)
	if len(evs) != 1 {
		f.T.Fatalf("save wrote %d events, want 1", len(evs))
	}
	return evs[0]
}

// readAll reads a consumer's events, acking each batch, until it has n of
// them. Other transactions anywhere on the server hold back what a reader
// may see, so a row may take a moment to show; the wait has a generous
// bound and asserts nothing about time.
func (f *fixture) readAll(consumer string, n int) []eventlog.Event {
	f.T.Helper()
	var out []eventlog.Event
	deadline := time.Now().Add(30 * time.Second)
	for len(out) < n {
		evs, err := f.log.Read(f.Ctx, consumer, 2)
		if err != nil {
			f.T.Fatal(err)
		}
		if len(evs) == 0 {
			if time.Now().After(deadline) {
				f.T.Fatalf("consumer %s got %d events, want %d", consumer, len(out), n)
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		out = append(out, evs...)
		if err := f.log.Ack(f.Ctx, consumer, evs[len(evs)-1]); err != nil {
			f.T.Fatal(err)
		}
	}
	return out
}

func ids(evs []eventlog.Event) []int64 {
	out := []int64{}
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}

func TestReadAndAckEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Articles()
	id := f.CreateItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
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
	evs, err := f.log.Read(f.Ctx, "publisher", 10)
	if err != nil || len(evs) != 0 {
		t.Errorf("publisher after reading everything: %v, %v; want nothing", ids(evs), err)
	}
	// Reading without acking returns the same rows again.
	for range 2 {
		evs, err := f.log.Read(f.Ctx, "webhooks", 10)
		if err != nil || !slices.Equal(ids(evs), want[2:]) {
			t.Errorf("webhooks read %v, %v; want %v", ids(evs), err, want[2:])
		}
	}
	// An ack never moves a position back.
	first := f.eventsAfter(0)[0]
	first.Tx = 1
	if err := f.log.Ack(f.Ctx, "webhooks", first); err != nil {
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
	evs, err = f.log.Read(f.Ctx, "audit", 3)
	if err != nil || len(evs) != 3 {
		t.Errorf("Read(limit 3) = %d rows, %v", len(evs), err)
	}
}

// TestReadEventsNeverSkipsARunningTransaction: a row committed after a
// consumer has read past its neighbours is still read, exactly once.
func TestReadEventsNeverSkipsARunningTransaction(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Articles()
	id := f.CreateItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
	before := f.readAll("publisher", len(f.eventsAfter(0)))

	// Transaction A writes an event and stays open.
	ctx := context.Background()
	txA, err := f.DB.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer txA.Rollback()
	// As every event writer does (content.Store's transactions), A takes the shared
	// writer lock before it writes.
	if _, err := txA.ExecContext(ctx, `SELECT pg_advisory_xact_lock_shared($1)`, eventlog.WriterLock); err != nil {
		t.Fatal(err)
	}
	if err := eventlog.Append(ctx, txA, f.itemEv0(id, "A")); err != nil {
		t.Fatal(err)
	}
	// Transaction B (a store call) writes an event and commits.
	b := f.saveEvent(id)

	// While A runs, B's row, which sorts after A's, is not returned: a
	// consumer acking B would skip A.
	for range 3 {
		evs, err := f.log.Read(f.Ctx, "publisher", 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.ID == b.ID {
				t.Fatalf("Read returned row %d of a transaction that started after a running one", b.ID)
			}
		}
	}
	if err := txA.Commit(); err != nil {
		t.Fatal(err)
	}
	var a eventlog.Event
	if err := f.DB.GetContext(ctx, &a, `SELECT id, tx::text AS tx FROM events WHERE reference_name = 'A'`); err != nil {
		t.Fatal(err)
	}
	got := f.readAll("publisher", 2)
	if want := []int64{a.ID, b.ID}; !slices.Equal(ids(got), want) {
		t.Errorf("after A commits, read %v, want A then B %v", ids(got), want)
	}
	evs, err := f.log.Read(f.Ctx, "publisher", 10)
	if err != nil || len(evs) != 0 {
		t.Errorf("read again: %v, %v; want nothing (each row once)", ids(evs), err)
	}
	_ = before

	// A rolled-back transaction's row never appears.
	txC, err := f.DB.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := eventlog.Append(ctx, txC, f.itemEv0(id, "C")); err != nil {
		t.Fatal(err)
	}
	txC.Rollback()
	d := f.saveEvent(id)
	if got := ids(f.readAll("publisher", 1)); !slices.Equal(got, []int64{d.ID}) {
		t.Errorf("after a rolled-back event: read %v, want %v", got, []int64{d.ID})
	}
}

func (f *fixture) itemEv0(id int64, ref string) eventlog.Event {
	return eventlog.Event{InstanceID: f.Inst.ID, InstanceGuid: f.Inst.Guid, State: eventlog.Saved, Subject: eventlog.SubjectItem, Locale: ptr("en-us"), ReferenceName: ptr(ref),
		ContentID: ptr(id), VersionID: ptr(int64(1)), ChangeDate: contenttest.T0}
}

func TestTrimEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Articles()
	id := f.CreateItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
	for range 4 {
		f.saveEvent(id)
	}
	all := ids(f.eventsAfter(0)) // the instance's, the item's and 4 saves
	f.readAll("publisher", len(all))
	f.readAll("webhooks", 2)

	// Nothing is older than an hour ago.
	n, err := f.log.Trim(f.Ctx, time.Now().Add(-time.Hour))
	if err != nil || n != 0 {
		t.Errorf("Trim(an hour ago) = %d, %v; want 0", n, err)
	}
	// Rows every consumer has read go; the others stay.
	n, err = f.log.Trim(f.Ctx, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(f.eventsAfter(0)), all[2:]; !slices.Equal(got, want) || n != 2 {
		t.Errorf("after trim: %d deleted, rows %v left; want 2 deleted, %v left", n, got, want)
	}
	if got := ids(f.readAll("webhooks", len(all)-2)); !slices.Equal(got, all[2:]) {
		t.Errorf("webhooks after trim read %v, want %v", got, all[2:])
	}
	evs, err := f.log.Read(f.Ctx, "publisher", 10)
	if err != nil || len(evs) != 0 {
		t.Errorf("publisher after trim read %v, %v; want nothing", ids(evs), err)
	}
	// A consumer that has read nothing holds every row.
	if _, err := f.log.Read(f.Ctx, "late", 0); err != nil {
		t.Fatal(err)
	}
	f.saveEvent(id)
	n, err = f.log.Trim(f.Ctx, time.Now().Add(time.Hour))
	if err != nil || n != 0 {
		t.Errorf("Trim with a consumer at the start = %d, %v; want 0", n, err)
	}
}

// TestTrimEventsInBatches: a log longer than a batch goes in several
// transactions, every row that may go does, and none that may not; two
// trimmers at once delete each row once.
func TestTrimEventsInBatches(t *testing.T) {
	defer func(n int) { *eventlog.TrimBatch = n }(*eventlog.TrimBatch)
	*eventlog.TrimBatch = 3
	f := newFixture(t)
	f.Articles()
	id := f.CreateItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
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
			n, err := f.log.Trim(f.Ctx, time.Now().Add(time.Hour))
			if err != nil {
				t.Errorf("Trim: %v", err)
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
	t.Parallel()
	f := newFixture(t)
	f.Articles()
	id := f.CreateItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
	f.readAll("publisher", 1)

	ctx := context.Background()
	other, err := f.DB.BeginTxx(ctx, nil)
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
		evs, err := f.log.Read(f.Ctx, "publisher", 10)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(ids(evs), b.ID) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Read = %v for 10 s while a non-writer transaction runs, want it to include %d", ids(evs), b.ID)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

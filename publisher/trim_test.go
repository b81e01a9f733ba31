package publisher

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/webhooks"
	"github.com/edgecms/edgecms/webhooks/egress"
)

// smallTrimBatches makes trims delete n rows per transaction until the
// test ends, so that tests go through several batches.
func smallTrimBatches(t *testing.T, n int) {
	old := trimBatch
	trimBatch = n
	t.Cleanup(func() { trimBatch = old })
}

// trimAll runs the trim of every publisher of ps at once.
func trimAll(ctx context.Context, ps ...*Publisher) {
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Go(func() { p.trim(ctx) })
	}
	wg.Wait()
}

type positioned struct {
	Pos *int64 `db:"pos"`
	Key string `db:"key"`
}

func (e *env) changes() []positioned {
	e.t.Helper()
	var rows []positioned
	e.must(e.db.SelectContext(e.ctx, &rows, `SELECT pos, key FROM object_changes ORDER BY seq`))
	return rows
}

// feedObject returns the feed the store holds.
func (e *env) feedObject() delivery.Feed {
	e.t.Helper()
	o, err := e.store.Get(e.ctx, delivery.FeedKey)
	e.must(err)
	var f delivery.Feed
	e.must(json.Unmarshal(o.Body, &f))
	return f
}

// TestTrimChanges checks that the trim keeps exactly the changes a feed
// may still list, the latest FeedSize positions (positions have gaps), and
// the changes not positioned yet, with several publishers trimming at once
// in batches; and that the feed written after the trim is the one written
// before it.
func TestTrimChanges(t *testing.T) {
	smallTrimBatches(t, 3)
	e := newEnv(t, folderStore)
	const size = 5
	ps := []*Publisher{e.publisher(Config{FeedSize: size}), e.publisher(Config{FeedSize: size}), e.publisher(Config{FeedSize: size})}
	p := ps[0]
	change := func(key string) {
		_, err := e.db.ExecContext(e.ctx, `INSERT INTO object_changes (key) VALUES ($1)`, key)
		e.must(err)
	}
	for i := range 14 {
		change(fmt.Sprintf("acme/k/%d.json", i))
		if i%3 == 2 {
			e.must(p.FlushFeed(e.ctx))
			// A position drawn and not used, as by a flush that failed.
			_, err := e.db.ExecContext(e.ctx, `SELECT nextval('object_change_positions')`)
			e.must(err)
		}
	}
	e.must(p.FlushFeed(e.ctx))
	change("acme/pending/1.json")
	change("acme/pending/2.json")
	before := e.feedObject()
	if len(before.Changes) != size {
		t.Fatalf("feed before the trim lists %d changes, want %d", len(before.Changes), size)
	}

	trimAll(e.ctx, ps...)
	var want []positioned
	for _, c := range before.Changes {
		want = append(want, positioned{Pos: &c.Seq, Key: c.Key})
	}
	want = append(want, positioned{Key: "acme/pending/1.json"}, positioned{Key: "acme/pending/2.json"})
	if got := e.changes(); !equalChanges(got, want) {
		t.Fatalf("after the trim object_changes holds\n%s\nwant\n%s", showChanges(got), showChanges(want))
	}
	// Written from the table alone (no tail), the feed must not change.
	rewrite := func() {
		p.listed.set(nil)
		_, err := p.writeFeed(e.ctx, e.db)
		e.must(err)
	}
	rewrite()
	if after := e.feedObject(); !equalFeeds(after, before) {
		t.Errorf("feed written after the trim %+v, want the one written before %+v", after, before)
	}

	// The pending changes get positions; the trim then drops the two
	// oldest listed before.
	e.must(p.FlushFeed(e.ctx))
	flushed := e.feedObject()
	if n := len(flushed.Changes); n != size || flushed.Changes[n-1].Key != "acme/pending/2.json" {
		t.Fatalf("feed after the flush: %+v", flushed)
	}
	trimAll(e.ctx, ps...)
	got := e.changes()
	if len(got) != size || *got[0].Pos != flushed.Oldest {
		t.Errorf("after the second trim object_changes holds\n%s\nwant the %d listed from %d", showChanges(got), size, flushed.Oldest)
	}
	rewrite()
	if after := e.feedObject(); !equalFeeds(after, flushed) {
		t.Errorf("feed written after the second trim %+v, want %+v", after, flushed)
	}
}

func equalChanges(a, b []positioned) bool {
	return slices.EqualFunc(a, b, func(x, y positioned) bool {
		return x.Key == y.Key && (x.Pos == nil) == (y.Pos == nil) && (x.Pos == nil || *x.Pos == *y.Pos)
	})
}

func showChanges(cs []positioned) string {
	s := ""
	for _, c := range cs {
		pos := "-"
		if c.Pos != nil {
			pos = fmt.Sprint(*c.Pos)
		}
		s += fmt.Sprintf("  %s %s\n", pos, c.Key)
	}
	return s
}

func equalFeeds(a, b delivery.Feed) bool {
	return a.Seq == b.Seq && a.Oldest == b.Oldest && slices.Equal(a.Changes, b.Changes)
}

// receiver records the webhook deliveries it gets.
type receiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []map[string]any
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Errorf("delivery %s: %v", body, err)
		}
		rc.mu.Lock()
		rc.got = append(rc.got, m)
		rc.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// published reports whether a Published delivery of item id came.
func (rc *receiver) published(id int64) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.ContainsFunc(rc.got, func(m map[string]any) bool {
		return m["state"] == "Published" && m["contentID"] == float64(id)
	})
}

// TestTrimConfirmations checks that the trim deletes the confirmations of
// events gone from the log, but not one that a parked webhook delivery
// waits for (which then still goes out, confirmed), nor one whose event is
// still in the log (a dispatcher has yet to read it).
func TestTrimConfirmations(t *testing.T) {
	smallTrimBatches(t, 2)
	e := newEnv(t, folderStore)
	ps := []*Publisher{e.publisher(Config{}), e.publisher(Config{})}
	p := ps[0]
	_, err := e.cs.CreateModel(e.ctx, e.inst, content.Model{Name: "Note", Kind: "content",
		Fields: content.Fields{{Name: "Title", Type: content.TypeText}}})
	e.must(err)
	_, err = e.cs.CreateContainer(e.ctx, e.inst, "notes", "Note")
	e.must(err)
	note := func(title string) int64 {
		st, err := e.cs.CreateItem(e.ctx, e.inst, "en-us", "notes", map[string]json.RawMessage{"Title": raw(title)})
		e.must(err)
		_, err = e.cs.ItemAction(e.ctx, e.inst, "en-us", st.ContentID, content.ActionPublish)
		e.must(err)
		return st.ContentID
	}
	publishedEvent := func(id int64) int64 {
		var ev int64
		e.must(e.db.GetContext(e.ctx, &ev, `SELECT id FROM events WHERE state = 'Published' AND content_id = $1`, id))
		return ev
	}

	ws, err := webhooks.NewStore(e.db, webhooks.Options{Key: []byte("0123456789abcdef0123456789abcdef"),
		Policy: egress.NewPolicy(netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")), Timeout: 5 * time.Second})
	e.must(err)
	rc := newReceiver(t)
	url, yes := rc.srv.URL+"/hook", true
	_, _, err = ws.Save(e.ctx, e.inst, webhooks.Input{URL: &url, ContentPublishEvents: &yes})
	e.must(err)
	// An hour's confirmation timeout: whatever goes out during the test
	// was confirmed.
	dispatch := func() (stop func()) {
		d := webhooks.NewDispatcher(ws, webhooks.DispatcherConfig{RequireConfirmation: true, ConfirmationTimeout: time.Hour,
			Poll: 5 * time.Millisecond}, testLog(t))
		ctx, cancel := context.WithCancel(e.ctx)
		done := make(chan struct{})
		go func() { defer close(done); d.Run(ctx) }()
		return func() { cancel(); <-done }
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for start := time.Now(); !cond(); time.Sleep(5 * time.Millisecond) {
			if time.Since(start) > 20*time.Second {
				t.Fatalf("%s: not after 20 s", what)
			}
		}
	}
	parked := func(ev int64) bool {
		var n int
		e.must(e.db.GetContext(e.ctx, &n, `SELECT count(*) FROM webhook_awaiting WHERE event_id = $1`, ev))
		return n == 1
	}
	confirmations := func() []int64 {
		var ids []int64
		e.must(e.db.SelectContext(e.ctx, &ids, `SELECT event_id FROM event_confirmations ORDER BY event_id`))
		return ids
	}
	events := func() []int64 {
		var ids []int64
		e.must(e.db.SelectContext(e.ctx, &ids, `SELECT id FROM events ORDER BY id`))
		return ids
	}

	// x's Published event is parked by a dispatcher that then stops, before
	// the publisher confirms it.
	x := note("x")
	xEvent := publishedEvent(x)
	stop := dispatch()
	waitFor("x's event parked", func() bool { return parked(xEvent) })
	stop()
	// y's events are confirmed too, but no dispatcher has read them.
	y := note("y")
	e.must(p.Drain(e.ctx))
	confirmedBefore := confirmations()
	if !slices.Contains(confirmedBefore, xEvent) || !slices.Contains(confirmedBefore, publishedEvent(y)) {
		t.Fatalf("confirmed %v, want x's %d and y's %d among them", confirmedBefore, xEvent, publishedEvent(y))
	}
	_, err = e.cs.Events().Trim(e.ctx, time.Now().Add(time.Hour))
	e.must(err)
	left := events()
	if slices.Contains(left, xEvent) || len(left) == 0 {
		t.Fatalf("after the event trim the log holds %v; want x's events gone, y's left", left)
	}

	trimAll(e.ctx, ps...)
	want := append([]int64{xEvent}, left...)
	if got := confirmations(); !slices.Equal(got, want) {
		t.Fatalf("after the trim the confirmations are %v, want x's parked event %d and y's events %v (of %v before)",
			got, xEvent, left, confirmedBefore)
	}

	// The next dispatcher delivers both, as confirmed events.
	stop = dispatch()
	waitFor("x and y delivered", func() bool { return rc.published(x) && rc.published(y) })
	stop()
	// Every event read and none parked: the trims leave nothing.
	_, err = e.cs.Events().Trim(e.ctx, time.Now().Add(time.Hour))
	e.must(err)
	if left := events(); len(left) != 0 {
		t.Fatalf("after the event trim the log holds %v, want none", left)
	}
	trimAll(e.ctx, ps...)
	if got := confirmations(); len(got) != 0 {
		t.Errorf("after the last trim the confirmations are %v, want none", got)
	}
}

// TestTrimTombstones checks that the trim deletes the tombstones older
// than a day, in batches, and keeps newer ones and live objects.
func TestTrimTombstones(t *testing.T) {
	smallTrimBatches(t, 2)
	e := newEnv(t, folderStore)
	ps := []*Publisher{e.publisher(Config{}), e.publisher(Config{})}
	for i, r := range []struct {
		etag *string
		age  string
	}{{nil, "25 hours"}, {nil, "3 days"}, {nil, "2 days"}, {nil, "23 hours"}, {new(`"e"`), "3 days"}, {nil, "0"}} {
		_, err := e.db.ExecContext(e.ctx, `INSERT INTO objects (key, guid, locale, request, etag, updated_at)
			VALUES ($1, 'acme', 'en-us', '/', $2, now() - $3::interval)`, fmt.Sprintf("acme/o/%d.json", i), r.etag, r.age)
		e.must(err)
	}
	trimAll(e.ctx, ps...)
	var keys []string
	e.must(e.db.SelectContext(e.ctx, &keys, `SELECT key FROM objects ORDER BY key`))
	if want := []string{"acme/o/3.json", "acme/o/4.json", "acme/o/5.json"}; !slices.Equal(keys, want) {
		t.Errorf("after the trim objects holds %v, want %v", keys, want)
	}
}

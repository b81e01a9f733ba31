package webhooks

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
)

// TestCategories checks which webhooks get which events: publish gets
// Published and Deleted, save gets Saved and Deleted, workflow the three
// workflow states; Deleted goes once to a webhook with both publish and
// save; a disabled webhook gets nothing.
func TestCategories(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rc := newReceiver(t)
	hooks := map[string]Input{
		"publish":  {ContentPublishEvents: ptr(true)},
		"save":     {ContentSaveEvents: ptr(true)},
		"workflow": {ContentWorkflowEvents: ptr(true)},
		"both":     {ContentPublishEvents: ptr(true), ContentSaveEvents: ptr(true)},
		"disabled": {ContentPublishEvents: ptr(true), ContentSaveEvents: ptr(true), ContentWorkflowEvents: ptr(true), Enabled: ptr(false)},
		"none":     {},
	}
	for name, in := range hooks {
		e.webhook(rc.srv.URL+"/"+name, in)
	}
	id := e.createItem("en-us", "One")                       // Saved
	e.itemAction("en-us", id, content.ActionRequestApproval) // AwaitingApproval
	e.itemAction("en-us", id, content.ActionDecline)         // Declined
	e.itemAction("en-us", id, content.ActionRequestApproval) // AwaitingApproval
	e.itemAction("en-us", id, content.ActionApprove)         // Approved
	e.itemAction("en-us", id, content.ActionPublish)         // Published
	e.itemAction("en-us", id, content.ActionUnpublish)       // Deleted
	e.pump()

	got := map[string][]string{}
	for _, r := range rc.requests() {
		name := strings.TrimPrefix(r.path, "/")
		got[name] = append(got[name], r.payload(t)["state"].(string))
	}
	for name := range got {
		sort.Strings(got[name])
	}
	want := map[string][]string{
		"publish": {"Deleted", "Published"},
		"save":    {"Deleted", "Saved"},
		// The second AwaitingApproval merged into the first, still queued.
		"workflow": {"Approved", "AwaitingApproval", "Declined"},
		"both":     {"Deleted", "Published", "Saved"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("states received by webhook =\n%v\nwant\n%v", got, want)
	}
}

// TestPayloadsAndKeys checks the payload of item, page and list events
// (fields that do not apply are omitted; pageVersionID is 0 on a page
// delete; a whole-list Deleted carries neither contentID nor pageID), that
// eventKey is shared by the webhooks that got an event, that rowKey is
// unique and equals webhook-id, and the history record's category flags.
func TestPayloadsAndKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rc := newReceiver(t)
	a := e.webhook(rc.srv.URL+"/a", Input{ContentPublishEvents: ptr(true), ContentSaveEvents: ptr(true), SecureDeliveryEnabled: ptr(true)})
	b := e.webhook(rc.srv.URL+"/b", Input{ContentPublishEvents: ptr(true), ContentSaveEvents: ptr(true), SecureDeliveryEnabled: ptr(true)})

	id := e.createItem("en-us", "One")
	page, err := e.content.CreatePage(e.ctx, e.inst, "fr-ca", content.PageInput{Title: ptr("Accueil"), PageModel: ptr("Standard")})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.content.DeletePage(e.ctx, e.inst, "fr-ca", page.PageID); err != nil {
		t.Fatal(err)
	}
	if err := e.content.ReorderContainer(e.ctx, e.inst, "Articles", []int64{id}); err != nil {
		t.Fatal(err)
	}
	e.pump()

	change := t0.Format("2006-01-02T15:04:05.000Z")
	want := []map[string]any{
		{"state": "Saved", "instanceGuid": "acme", "languageCode": "en-us", "referenceName": "Articles",
			"contentID": float64(id), "contentVersionID": nil, "changeDateUTC": change},
		{"state": "Saved", "instanceGuid": "acme", "languageCode": "fr-ca", "pageID": float64(page.PageID),
			"pageVersionID": nil, "changeDateUTC": change},
		{"state": "Deleted", "instanceGuid": "acme", "languageCode": "fr-ca", "pageID": float64(page.PageID),
			"pageVersionID": float64(0), "changeDateUTC": change},
		{"state": "Deleted", "instanceGuid": "acme", "languageCode": "en-us", "referenceName": "Articles", "changeDateUTC": change},
		{"state": "Deleted", "instanceGuid": "acme", "languageCode": "fr-ca", "referenceName": "Articles", "changeDateUTC": change},
	}
	byHook := map[string][]map[string]any{}
	ids := map[string]bool{}
	for _, r := range rc.requests() {
		p := r.payload(t)
		for k, v := range p {
			if strings.HasSuffix(k, "VersionID") && v != float64(0) {
				p[k] = nil // a version number: only its presence is checked
			}
		}
		byHook[r.path] = append(byHook[r.path], p)
		id := r.header.Get("webhook-id")
		if ids[id] {
			t.Errorf("webhook-id %s received twice", id)
		}
		ids[id] = true
	}
	for _, path := range []string{"/a", "/b"} {
		got := byHook[path]
		sort.SliceStable(got, func(i, j int) bool { return fmt.Sprint(got[i]) < fmt.Sprint(got[j]) })
		sort.SliceStable(want, func(i, j int) bool { return fmt.Sprint(want[i]) < fmt.Sprint(want[j]) })
		if !reflect.DeepEqual(got, want) {
			t.Errorf("payloads to %s =\n%v\nwant\n%v", path, got, want)
		}
	}

	ha, hb := e.history(a.RowKey), e.history(b.RowKey)
	if len(ha) != 5 || len(hb) != 5 {
		t.Fatalf("history lengths = %d, %d, want 5, 5", len(ha), len(hb))
	}
	eventKeys := map[string]string{} // payload -> eventKey at a
	for _, d := range ha {
		eventKeys[d.Payload] = d.EventKey
		if !ids[d.RowKey] {
			t.Errorf("rowKey %s is no webhook-id received", d.RowKey)
		}
		if d.WebhookRowKey != a.RowKey {
			t.Errorf("webhookRowKey = %s, want %s", d.WebhookRowKey, a.RowKey)
		}
		deleted := strings.Contains(d.Payload, `"Deleted"`)
		if d.ContentPublishEvent != deleted || !d.ContentSaveEvent || d.ContentWorkflowEvent {
			t.Errorf("%s: categories publish=%v save=%v workflow=%v, want %v true false", d.Payload,
				d.ContentPublishEvent, d.ContentSaveEvent, d.ContentWorkflowEvent, deleted)
		}
	}
	for _, d := range hb {
		if k, ok := eventKeys[d.Payload]; !ok || k != d.EventKey {
			t.Errorf("%s: eventKey at b %s, at a %s; want the same", d.Payload, d.EventKey, k)
		}
		if slices.ContainsFunc(ha, func(x Delivery) bool { return x.RowKey == d.RowKey }) {
			t.Errorf("rowKey %s shared by two webhooks", d.RowKey)
		}
	}
}

// TestConfirmation checks that with RequireConfirmation, Published and
// Deleted wait for the publisher's confirmation while Saved does not, and
// that an unconfirmed event goes out after the confirmation timeout.
func TestConfirmation(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, DispatcherConfig{RequireConfirmation: true, ConfirmationTimeout: 10 * time.Minute}, loopback())
	rc := newReceiver(t)
	e.webhook(rc.URL(), Input{ContentPublishEvents: ptr(true), ContentSaveEvents: ptr(true)})
	id := e.createItem("en-us", "One")
	e.itemAction("en-us", id, content.ActionPublish)
	e.pump()
	if got := states(t, rc.requests()); !reflect.DeepEqual(got, []string{"Saved"}) {
		t.Fatalf("before confirmation: received %v, want [Saved]", got)
	}
	var published int64
	if err := e.db.Get(&published, `SELECT max(id) FROM events WHERE state = 'Published'`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.Exec(`INSERT INTO event_confirmations VALUES ($1, now())`, published); err != nil {
		t.Fatal(err)
	}
	e.pump()
	if got := states(t, rc.requests()); !reflect.DeepEqual(got, []string{"Saved", "Published"}) {
		t.Fatalf("after confirmation: received %v, want [Saved Published]", got)
	}

	// Never confirmed: delivered once the timeout has passed.
	e.itemAction("en-us", id, content.ActionUnpublish)
	e.pump()
	e.clock.Advance(10*time.Minute - time.Second)
	e.pump()
	if n := len(rc.requests()); n != 2 {
		t.Fatalf("unpublish delivered before the confirmation timeout")
	}
	e.clock.Advance(2 * time.Second)
	e.pump()
	if got := states(t, rc.requests()); !reflect.DeepEqual(got, []string{"Saved", "Published", "Deleted"}) {
		t.Fatalf("after the timeout: received %v, want [Saved Published Deleted]", got)
	}
}

func states(t *testing.T, rs []request) []string {
	t.Helper()
	var out []string
	for _, r := range rs {
		out = append(out, r.payload(t)["state"].(string))
	}
	return out
}

// TestMergeWindow checks the merge at its boundary: a repeated event for
// the same webhook, item, locale and state merges into a still-queued
// delivery queued up to MergeWindow before (the newer payload wins), not
// one queued longer before, nor another locale's or state's, nor one being
// attempted.
func TestMergeWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rc := newReceiver(t)
	w := e.webhook(rc.URL(), Input{ContentSaveEvents: ptr(true)})
	id := e.createItem("en-us", "v1")
	e.intakeOnly()
	e.clock.Advance(MergeWindow) // exactly at the boundary: merges
	e.saveItem("en-us", id, "v2")
	e.intakeOnly()
	e.clock.Advance(time.Millisecond)
	e.saveItem("en-us", id, "v3") // 30.001 s after the first was queued: a new delivery
	e.saveItem("fr-ca", id, "fr") // another locale: a new delivery
	e.intakeOnly()

	hist := e.history(w.RowKey)
	if len(hist) != 3 {
		t.Fatalf("history has %d deliveries, want 3: %+v", len(hist), hist)
	}
	var en []Delivery
	for _, d := range hist {
		if strings.Contains(d.Payload, `"en-us"`) {
			en = append(en, d)
		}
	}
	// Newest first: v3's own delivery, then the merged one.
	merged, own := en[1], en[0]
	if !merged.QueuedDate.Equal(t0) || !own.QueuedDate.Equal(t0.Add(MergeWindow+time.Millisecond)) {
		t.Errorf("queued dates %v, %v; want %v, %v", merged.QueuedDate, own.QueuedDate, t0, t0.Add(MergeWindow+time.Millisecond))
	}
	var v2 int64
	if err := e.db.Get(&v2, `SELECT max(version_id) FROM events WHERE content_id = $1 AND locale = 'en-us' AND change_date = $2`, id, t0.Add(MergeWindow)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(merged.Payload, fmt.Sprintf(`"contentVersionID":%d`, v2)) {
		t.Errorf("merged payload %s, want the newer version %d", merged.Payload, v2)
	}

	// A delivery being attempted does not absorb a repeat.
	e.pump()
	if n := len(rc.requests()); n != 3 {
		t.Fatalf("received %d, want 3", n)
	}
	rc.setRespond(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
	e.saveItem("en-us", id, "v4")
	e.intakeOnly()
	js, err := e.store.claim(e.ctx, e.d.owner, 10, e.store.now(), time.Minute, e.d.limits, nil)
	if err != nil || len(js) != 1 {
		t.Fatalf("claim = %d jobs, %v; want 1", len(js), err)
	}
	e.saveItem("en-us", id, "v5")
	e.intakeOnly()
	if got := len(e.history(w.RowKey)); got != 5 {
		t.Errorf("history has %d deliveries after a repeat of one being attempted, want 5", got)
	}
}

// TestListen checks that a dispatcher with ListenURL wakes on a
// notification: with an hour between polls, a redelivery queued by another
// process (the store here) goes out at once.
func TestListen(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rc := newReceiver(t)
	w := e.webhook(rc.URL(), Input{})
	first, err := e.store.Test(e.ctx, e.inst, w.RowKey)
	if err != nil {
		t.Fatal(err)
	}
	redeliver := func() {
		if _, err := e.store.Redeliver(e.ctx, e.inst, w.RowKey, first.RowKey); err != nil && !problem.Is(err, problem.Conflict) {
			t.Fatal(err)
		}
	}
	redeliver() // for the dispatcher's first pass
	d := NewDispatcher(e.store, DispatcherConfig{Poll: time.Hour, ListenURL: e.dsn}, e.d.log)
	quiet := false
	runFor(t, d, func() bool {
		switch n := len(rc.requests()); {
		case n < 2:
			return false
		case n > 2:
			return true
		case !quiet:
			// Let the first pass end: from now on only a notification wakes it.
			time.Sleep(300 * time.Millisecond)
			quiet = true
		}
		// The listener connects in the background; until it has, a
		// notification is lost: redeliver again now and then.
		redeliver()
		time.Sleep(200 * time.Millisecond)
		return false
	})
}

// TestNothingLostUnderConcurrentWriters checks that every event written
// while a dispatcher runs gets its delivery: many content writers at once,
// one dispatcher reading the log as they write.
func TestNothingLostUnderConcurrentWriters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.content.Now = time.Now
	e.store.Now = time.Now
	e.db.SetMaxOpenConns(64)
	rc := newReceiver(t)
	e.webhook(rc.URL(), Input{ContentSaveEvents: ptr(true)})
	const writers, each = 16, 40
	ids := make([]int64, writers*each)
	for i := range ids {
		ids[i] = e.createItem("en-us", "v1")
	}
	d := NewDispatcher(e.store, DispatcherConfig{Poll: time.Millisecond}, e.d.log)
	// Once the items' own Saved events are delivered (so that nothing
	// merges), every writer saves its items at once.
	var wg sync.WaitGroup
	written := make(chan struct{})
	started, waited := false, time.Time{}
	missing := func() int {
		var n int
		// Channel events (the instance's website channel) go to no webhook.
		if err := e.db.Get(&n, `SELECT count(*) FROM events e WHERE e.subject <> 'channel' AND NOT EXISTS
			(SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = 'succeeded')`); err != nil {
			t.Fatal(err)
		}
		return n
	}
	runFor(t, d, func() bool {
		if !started {
			if missing() > 0 {
				return false
			}
			started = true
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for _, id := range ids[w*each : (w+1)*each] {
						if _, err := e.content.SaveItem(e.ctx, e.inst, "en-us", id, map[string]json.RawMessage{"title": jsonOf("v2")}); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			go func() { wg.Wait(); close(written) }()
			return false
		}
		select {
		case <-written:
		default:
			return false
		}
		if waited.IsZero() {
			waited = time.Now()
		}
		n := missing()
		if n > 0 && time.Since(waited) > 20*time.Second {
			var cur string
			e.db.Get(&cur, `SELECT tx::text || '/' || id FROM event_cursors WHERE consumer = 'webhooks'`)
			t.Fatalf("%d of the %d events written at once never got a delivery; the dispatcher's cursor is at %s, past them", n, writers*each, cur)
		}
		return n == 0
	})
}

// TestStructuralEvents checks what receivers get for changes to an
// instance's structure: nothing for a new channel (the publisher renders its
// sitemaps; no item or page changed), and for a locale added or removed a
// Deleted naming only the locale, like the spec's whole-list changes.
func TestStructuralEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rc := newReceiver(t)
	e.webhook(rc.URL(), Input{ContentPublishEvents: ptr(true), ContentSaveEvents: ptr(true)})

	if _, err := e.content.CreateChannel(e.ctx, e.inst, "mobile"); err != nil {
		t.Fatal(err)
	}
	e.pump()
	if got := rc.requests(); len(got) != 0 {
		t.Fatalf("a new channel made %d deliveries, want none: %s", len(got), got[0].body)
	}

	if _, err := e.content.CreateLocale(e.ctx, e.inst, content.Locale{Code: "de-de", Name: "Deutsch"}); err != nil {
		t.Fatal(err)
	}
	if err := e.content.DeleteLocale(e.ctx, e.inst, "de-de"); err != nil {
		t.Fatal(err)
	}
	e.pump()
	got := rc.requests()
	if len(got) == 0 {
		t.Fatal("adding and deleting a locale made no delivery")
	}
	want := map[string]any{"state": "Deleted", "instanceGuid": "acme", "languageCode": "de-de",
		"changeDateUTC": t0.Format("2006-01-02T15:04:05.000Z")}
	for _, r := range got {
		if p := r.payload(t); !reflect.DeepEqual(p, want) {
			t.Errorf("locale change delivered %v, want %v", p, want)
		}
	}
}

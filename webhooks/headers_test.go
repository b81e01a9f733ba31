package webhooks

import (
	"strconv"
	"testing"
)

// TestUnsignedHeaders checks that deliveries to a webhook without a secret,
// test deliveries and event deliveries alike, carry webhook-id and
// webhook-timestamp, and no webhook-signature (issue 19, finding 13).
func TestUnsignedHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rc := newReceiver(t)
	w := e.webhook(rc.URL(), Input{SecureDeliveryEnabled: ptr(false), Enabled: ptr(true), ContentSaveEvents: ptr(true)})
	d, err := e.store.Test(e.ctx, e.inst, w.RowKey)
	if err != nil {
		t.Fatal(err)
	}
	e.createItem("en-us", "Hello")
	e.pump()
	reqs := rc.requests()
	if len(reqs) < 2 {
		t.Fatalf("receiver got %d requests, want the test delivery and at least one event", len(reqs))
	}
	want := strconv.FormatInt(e.clock.Now().Unix(), 10)
	for i, r := range reqs {
		id, ts, sig := r.header.Get("webhook-id"), r.header.Get("webhook-timestamp"), r.header.Get("webhook-signature")
		if id == "" || ts != want || sig != "" {
			t.Errorf("delivery %d: webhook-id %q, webhook-timestamp %q, webhook-signature %q; want an id, %s, none",
				i, id, ts, sig, want)
		}
	}
	if got := reqs[0].header.Get("webhook-id"); got != d.RowKey {
		t.Errorf("test delivery: webhook-id %q, want its record's %q", got, d.RowKey)
	}
}

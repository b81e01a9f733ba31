package webhooks

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/webhooks/egress"
	"github.com/edgecms/edgecms/webhooks/signature"
)

// checkProblem checks that err is a problem of kind k naming field (when
// not empty).
func checkProblem(t *testing.T, what string, err error, k problem.Kind, field string) {
	t.Helper()
	if !problem.Is(err, k) {
		t.Errorf("%s: error %v (kind %v), want kind %v", what, err, problem.KindOf(err), k)
		return
	}
	if field == "" {
		return
	}
	doc := problem.DocumentOf(err)
	fields, _ := doc["errors"].([]problem.FieldError)
	for _, f := range fields {
		if f.Field == field {
			return
		}
	}
	t.Errorf("%s: %v does not name the field %q", what, err, field)
}

func TestSaveValidation(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, DispatcherConfig{}, nil) // the default policy: no private networks
	s := func(v string) *string { return &v }
	long := strings.Repeat("x", 201)
	tests := []struct {
		name  string
		in    Input
		field string
	}{
		{"no url", Input{}, "url"},
		{"empty url", Input{URL: s(" ")}, "url"},
		{"ftp", Input{URL: s("ftp://example.com/hook")}, "url"},
		{"relative", Input{URL: s("/hook")}, "url"},
		{"credentials", Input{URL: s("https://u:p@example.com/")}, "url"},
		{"loopback", Input{URL: s("http://127.0.0.1:8080/hook")}, "url"},
		{"localhost", Input{URL: s("http://localhost/hook")}, "url"},
		{"metadata", Input{URL: s("http://169.254.169.254/latest/meta-data")}, "url"},
		{"private", Input{URL: s("http://10.0.0.1/")}, "url"},
		{"mapped", Input{URL: s("http://[::ffff:127.0.0.1]/")}, "url"},
		{"unspecified", Input{URL: s("http://0.0.0.0/")}, "url"},
		{"too long", Input{URL: s("https://example.com/" + strings.Repeat("a", 2048))}, "url"},
		{"retryCount 0", Input{URL: s("https://example.com/"), RetryCount: ptr(0)}, "retryCount"},
		{"retryCount 9", Input{URL: s("https://example.com/"), RetryCount: ptr(9)}, "retryCount"},
		{"retrySpeed", Input{URL: s("https://example.com/"), RetrySpeed: s("warp")}, "retrySpeed"},
		{"name", Input{URL: s("https://example.com/"), Name: &long}, "name"},
		{"another instance's guid", Input{URL: s("https://example.com/"), InstanceGuid: s("other")}, "instanceGuid"},
		{"empty instanceGuid", Input{URL: s("https://example.com/"), InstanceGuid: s("")}, "instanceGuid"},
		{"malformed instanceGuid", Input{URL: s("https://example.com/"), InstanceGuid: s("ac me")}, "instanceGuid"},
		{"instanceGuid with a prefix", Input{URL: s("https://example.com/"), InstanceGuid: s("acme-2")}, "instanceGuid"},
	}
	for _, tt := range tests {
		_, _, err := e.store.Save(e.ctx, e.inst, tt.in)
		checkProblem(t, tt.name, err, problem.Invalid, tt.field)
	}
	_, _, err := e.store.Save(e.ctx, e.inst, Input{RowKey: s("wh_nosuch"), URL: s("https://example.com/")})
	checkProblem(t, "unknown rowKey", err, problem.NotFound, "")
	var n int
	e.db.Get(&n, `SELECT count(*) FROM webhooks`)
	if n != 0 {
		t.Errorf("%d webhooks saved by invalid saves", n)
	}
	// A loopback error names what to change.
	_, _, err = e.store.Save(e.ctx, e.inst, Input{URL: s("http://127.0.0.1/")})
	if err == nil || !strings.Contains(err.Error(), egress.AllowNetsEnv) {
		t.Errorf("loopback refusal %v does not name %s", err, egress.AllowNetsEnv)
	}
}

func TestSaveAndUpdate(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, DispatcherConfig{}, nil)
	url := "https://example.com/hook"
	w, created, err := e.store.Save(e.ctx, e.inst, Input{Name: ptr(" Site "), URL: &url})
	if err != nil || !created {
		t.Fatalf("Save = %v, %v", created, err)
	}
	want := Webhook{RowKey: w.RowKey, Name: "Site", URL: url, Enabled: true, RetryCount: 3, RetrySpeed: SpeedStandard,
		CreatedUtc: t0, ModifiedUtc: t0}
	if w != want {
		t.Errorf("new webhook = %+v, want %+v", w, want)
	}
	if !strings.HasPrefix(w.RowKey, "wh_") {
		t.Errorf("rowKey %q", w.RowKey)
	}
	e.clock.Advance(time.Minute)
	u, created, err := e.store.Save(e.ctx, e.inst, Input{RowKey: &w.RowKey, ContentSaveEvents: ptr(true), RetryCount: ptr(8), RetrySpeed: ptr("slow")})
	if err != nil || created {
		t.Fatalf("update = %v, %v", created, err)
	}
	want.ContentSaveEvents, want.RetryCount, want.RetrySpeed, want.ModifiedUtc = true, 8, SpeedSlow, t0.Add(time.Minute)
	if u != want {
		t.Errorf("updated webhook = %+v, want %+v", u, want)
	}
	got, err := e.store.Webhook(e.ctx, e.inst, w.RowKey)
	if err != nil || got != want {
		t.Errorf("Webhook = %+v, %v; want %+v", got, err, want)
	}
	// @agility/management-sdk sends the instance's guid with every save;
	// it is compared as instances compare guids.
	for _, g := range []string{"acme", "ACME", " Acme "} {
		if _, _, err := e.store.Save(e.ctx, e.inst, Input{RowKey: &w.RowKey, InstanceGuid: &g}); err != nil {
			t.Errorf("save with instanceGuid %q: %v", g, err)
		}
	}
	_, _, err = e.store.Save(e.ctx, e.inst, Input{RowKey: &w.RowKey, Name: ptr("renamed"), InstanceGuid: ptr("other")})
	checkProblem(t, "update naming another instance", err, problem.Invalid, "instanceGuid")
	if got, err := e.store.Webhook(e.ctx, e.inst, w.RowKey); err != nil || got != want {
		t.Errorf("after a refused update, Webhook = %+v, %v; want %+v", got, err, want)
	}
	other, err := e.content.CreateInstance(e.ctx, "other", []content.Locale{{Code: "en-us", Name: "English"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.store.Webhook(e.ctx, other, w.RowKey)
	checkProblem(t, "another instance's webhook", err, problem.NotFound, "")
	_, _, err = e.store.Save(e.ctx, other, Input{RowKey: &w.RowKey})
	checkProblem(t, "save another instance's webhook", err, problem.NotFound, "")
}

// TestSigningSecret checks the secret's life: generated on the first save
// with signing on and shown in full only then, a supplied one ignored,
// masked elsewhere, encrypted at rest, and rotation only for signed
// webhooks.
func TestSigningSecret(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, DispatcherConfig{}, nil)
	url := "https://example.com/hook"
	w, _, err := e.store.Save(e.ctx, e.inst, Input{URL: &url})
	if err != nil {
		t.Fatal(err)
	}
	if w.SigningSecret != "" {
		t.Errorf("unsigned webhook has a secret %q", w.SigningSecret)
	}
	_, err = e.store.RotateSecret(e.ctx, e.inst, w.RowKey)
	checkProblem(t, "rotate unsigned", err, problem.Conflict, "")

	supplied := "whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))
	s, _, err := e.store.Save(e.ctx, e.inst, Input{RowKey: &w.RowKey, SecureDeliveryEnabled: ptr(true), SigningSecret: []byte(`"` + supplied + `"`)})
	if err != nil {
		t.Fatal(err)
	}
	secret := s.SigningSecret
	key, err := signature.ParseSecret(secret)
	if !strings.HasPrefix(secret, "whsec_") || err != nil || len(key) != 32 || secret == supplied {
		t.Fatalf("generated secret %q (%d bytes, %v), want whsec_ and 32 random bytes, not the supplied one", secret, len(key), err)
	}
	again, _, err := e.store.Save(e.ctx, e.inst, Input{RowKey: &w.RowKey, Name: ptr("x")})
	if err != nil {
		t.Fatal(err)
	}
	read, _ := e.store.Webhook(e.ctx, e.inst, w.RowKey)
	list, _ := e.store.Webhooks(e.ctx, e.inst, 0, "")
	for what, got := range map[string]string{"save": again.SigningSecret, "get": read.SigningSecret, "list": list.Items[0].SigningSecret} {
		if got != mask(secret) || strings.Contains(got, secret[6:14]) {
			t.Errorf("%s shows secret %q, want masked %q", what, got, mask(secret))
		}
	}
	var raw []byte
	if err := e.db.Get(&raw, `SELECT secret FROM webhooks WHERE id = $1`, w.RowKey); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(secret[6:])) || bytes.Contains(raw, key) {
		t.Errorf("the secret is stored in clear")
	}
	// Signing off and on again keeps the secret (and shows it masked).
	e.store.Save(e.ctx, e.inst, Input{RowKey: &w.RowKey, SecureDeliveryEnabled: ptr(false)})
	on, _, _ := e.store.Save(e.ctx, e.inst, Input{RowKey: &w.RowKey, SecureDeliveryEnabled: ptr(true)})
	if on.SigningSecret != mask(secret) {
		t.Errorf("turned on again: secret %q, want the same one masked", on.SigningSecret)
	}
	r, err := e.store.RotateSecret(e.ctx, e.inst, w.RowKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signature.ParseSecret(r.SigningSecret); err != nil || r.SigningSecret == secret || strings.Contains(r.SigningSecret, "*") {
		t.Errorf("rotate shows %q, want a new secret in full", r.SigningSecret)
	}
	if read, _ := e.store.Webhook(e.ctx, e.inst, w.RowKey); read.SigningSecret != mask(r.SigningSecret) || read.PreviousSigningSecret != mask(secret) {
		t.Errorf("after rotation GET shows %q and %q, want both masked", read.SigningSecret, read.PreviousSigningSecret)
	}
	// Under another key the secret cannot be read: an error, never a wrong secret.
	other, _ := NewStore(e.db, Options{Key: bytes.Repeat([]byte{9}, KeySize)})
	if _, err := other.Webhook(e.ctx, e.inst, w.RowKey); err == nil || !strings.Contains(err.Error(), KeyEnv) {
		t.Errorf("Webhook under another key = %v, want an error naming %s", err, KeyEnv)
	}
}

func TestWebhookList(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, DispatcherConfig{}, nil)
	var ids []string
	for i := range 5 {
		url := fmt.Sprintf("https://example.com/%d", i)
		w, _, err := e.store.Save(e.ctx, e.inst, Input{URL: &url})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, w.RowKey)
		e.clock.Advance(time.Second)
	}
	var got []string
	token, pages := "", 0
	for {
		p, err := e.store.Webhooks(e.ctx, e.inst, 2, token)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, w := range p.Items {
			got = append(got, w.RowKey)
		}
		if p.Token == nil {
			break
		}
		token = *p.Token
	}
	if fmt.Sprint(got) != fmt.Sprint(ids) || pages != 3 {
		t.Errorf("listed %v in %d pages, want %v in 3", got, pages, ids)
	}
	first, _ := e.store.Webhooks(e.ctx, e.inst, 2, "")
	tok := *first.Token
	other, _ := e.content.CreateInstance(e.ctx, "other", []content.Locale{{Code: "en-us", Name: "English"}})
	for name, bad := range map[string]string{
		"garbage":   "abc",
		"tampered":  tok[:5] + string(tok[5]^1) + tok[6:],
		"truncated": tok[:len(tok)-2],
		"empty mac": strings.Split(tok, ".")[0] + ".",
	} {
		_, err := e.store.Webhooks(e.ctx, e.inst, 2, bad)
		checkProblem(t, name+" token", err, problem.Invalid, "token")
	}
	_, err := e.store.Webhooks(e.ctx, other, 2, tok)
	checkProblem(t, "another instance's token", err, problem.Invalid, "token")
	for _, take := range []int{-1, 101} {
		_, err := e.store.Webhooks(e.ctx, e.inst, take, "")
		checkProblem(t, fmt.Sprint("take ", take), err, problem.Invalid, "take")
	}
}

// TestHistory checks paging over several pages, newest first, the default
// range and the 400 cases.
func TestHistory(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rc := newReceiver(t)
	w := e.webhook(rc.URL(), Input{ContentSaveEvents: ptr(true)})
	other := e.webhook(rc.URL(), Input{})
	// 45 deliveries, one every 5 hours: 9.4 days.
	id := e.createItem("en-us", "v0")
	e.pump()
	for i := 1; i < 45; i++ {
		e.clock.Advance(5 * time.Hour)
		e.saveItem("en-us", id, fmt.Sprint("v", i))
		e.pump()
	}
	now := e.clock.Now()
	all := e.history(w.RowKey)
	if len(all) != 45 {
		t.Fatalf("history has %d records, want 45", len(all))
	}
	for i := 1; i < len(all); i++ {
		if !all[i].QueuedDate.Before(all[i-1].QueuedDate) {
			t.Fatalf("history not newest first at %d", i)
		}
	}
	// Defaults: today and the 7 days before it, 20 a page.
	p0, err := e.store.History(e.ctx, e.inst, w.RowKey, HistoryQuery{})
	if err != nil || len(p0.Items) != DefaultTake || p0.Token == nil {
		t.Fatalf("first page with defaults: %d records, token %v, %v; want %d and a token", len(p0.Items), p0.Token, err, DefaultTake)
	}
	// Paging over several pages.
	var got []Delivery
	q, pages := HistoryQuery{Take: "10"}, 0
	for {
		p, err := e.store.History(e.ctx, e.inst, w.RowKey, q)
		if err != nil {
			t.Fatal(err)
		}
		if pages++; p.Token != nil && len(p.Items) != 10 {
			t.Errorf("page %d has %d records, want 10", pages, len(p.Items))
		}
		got = append(got, p.Items...)
		if p.Token == nil {
			break
		}
		q.Token = *p.Token
	}
	y, m, d := now.Date()
	from := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).AddDate(0, 0, -DefaultHistoryDays)
	var want []string
	for _, d := range all {
		if !d.QueuedDate.Before(from) {
			want = append(want, d.RowKey)
		}
	}
	var gotKeys []string
	for _, d := range got {
		gotKeys = append(gotKeys, d.RowKey)
	}
	if fmt.Sprint(gotKeys) != fmt.Sprint(want) || pages != 4 || len(want) == len(all) {
		t.Errorf("default range gave %d records in %d pages, want the %d of %d queued since %v in 4 pages", len(got), pages, len(want), len(all), from)
	}
	// An explicit range, both days included.
	day := all[0].QueuedDate.Format(time.DateOnly)
	p, err := e.store.History(e.ctx, e.inst, w.RowKey, HistoryQuery{FromDate: day, ToDate: day, Take: "100"})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range p.Items {
		if d.QueuedDate.Format(time.DateOnly) != day {
			t.Errorf("record of %v in the range of %s", d.QueuedDate, day)
		}
	}
	if len(p.Items) == 0 {
		t.Errorf("no records on %s", day)
	}

	first, err := e.store.History(e.ctx, e.inst, w.RowKey, HistoryQuery{Take: "2"})
	if err != nil || first.Token == nil {
		t.Fatal(err)
	}
	tok := *first.Token
	otherTok := e.store.encodeToken("history", e.inst, other.RowKey, position{T: now, ID: "x"})
	listTok := e.store.encodeToken("list", e.inst, "", position{T: now, ID: "x"})
	tests := []struct {
		name  string
		q     HistoryQuery
		field string
	}{
		{"range over 366 days", HistoryQuery{FromDate: "2029-01-01", ToDate: "2030-01-03"}, "fromDate"},
		{"from after to", HistoryQuery{FromDate: "2030-05-18", ToDate: "2030-05-17"}, "fromDate"},
		{"bad fromDate", HistoryQuery{FromDate: "yesterday"}, "fromDate"},
		{"bad toDate", HistoryQuery{ToDate: "2030-13-01"}, "toDate"},
		{"take 0", HistoryQuery{Take: "0"}, "take"},
		{"take 101", HistoryQuery{Take: "101"}, "take"},
		{"take abc", HistoryQuery{Take: "abc"}, "take"},
		{"malformed token", HistoryQuery{Token: "%%%"}, "token"},
		{"tampered token", HistoryQuery{Token: tok[:len(tok)-3] + "AAA"}, "token"},
		{"tampered position", HistoryQuery{Token: "X" + tok[1:]}, "token"},
		{"another webhook's token", HistoryQuery{Token: otherTok}, "token"},
		{"a list token", HistoryQuery{Token: listTok}, "token"},
	}
	for _, tt := range tests {
		_, err := e.store.History(e.ctx, e.inst, w.RowKey, tt.q)
		checkProblem(t, tt.name, err, problem.Invalid, tt.field)
	}
	if _, err := e.store.History(e.ctx, e.inst, w.RowKey, HistoryQuery{FromDate: "2029-05-16", ToDate: "2030-05-17"}); err != nil {
		t.Errorf("a range of exactly 366 days: %v", err)
	}
	_, err = e.store.History(e.ctx, e.inst, "wh_nosuch", HistoryQuery{})
	checkProblem(t, "unknown webhook", err, problem.NotFound, "")

	// Deleting the webhook deletes its history.
	if err := e.store.Delete(e.ctx, e.inst, w.RowKey); err != nil {
		t.Fatal(err)
	}
	var n int
	e.db.Get(&n, `SELECT count(*) FROM webhook_deliveries`)
	if n != 0 {
		t.Errorf("%d history records left after deleting the webhook", n)
	}
	checkProblem(t, "delete again", e.store.Delete(e.ctx, e.inst, w.RowKey), problem.NotFound, "")
}

// TestRetention checks that records older than 90 days are removed, by
// Trim and by a running dispatcher.
func TestRetention(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rc := newReceiver(t)
	w := e.webhook(rc.URL(), Input{ContentSaveEvents: ptr(true)})
	id := e.createItem("en-us", "old")
	e.pump()
	e.clock.Advance(Retention)
	e.saveItem("en-us", id, "new")
	e.pump()
	if n, err := e.store.Trim(e.ctx, e.clock.Now().Add(-Retention)); err != nil || n != 0 {
		t.Fatalf("Trim at exactly 90 days = %d, %v; want 0", n, err)
	}
	e.clock.Advance(time.Microsecond)
	if n, err := e.store.Trim(e.ctx, e.clock.Now().Add(-Retention)); err != nil || n != 1 {
		t.Fatalf("Trim after 90 days = %d, %v; want 1", n, err)
	}
	if h := e.history(w.RowKey); len(h) != 1 || !strings.Contains(h[0].Payload, fmt.Sprint(id)) {
		t.Fatalf("history after trim = %v", h)
	}

	// A running dispatcher trims at start and every TrimEvery.
	e.clock.Advance(Retention)
	d := NewDispatcher(e.store, DispatcherConfig{TrimEvery: time.Hour}, e.d.log)
	runFor(t, d, func() bool {
		var n int
		e.db.Get(&n, `SELECT count(*) FROM webhook_deliveries`)
		return n == 0
	})
}

// runFor runs d until done reports true (checked every 10 ms, for at most
// two minutes), then stops it.
func runFor(t *testing.T, d *Dispatcher, done func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { d.Run(ctx); close(stopped) }()
	defer func() { cancel(); <-stopped }()
	deadline := time.Now().Add(2 * time.Minute)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatal("the dispatcher did not finish in two minutes")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTestAndRedeliver checks a test delivery (sent now, recorded, signed
// like any other) and a redelivery (queued again under the same webhook-id).
func TestTestAndRedeliver(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rc := newReceiver(t)
	w := e.webhook(rc.URL(), Input{SecureDeliveryEnabled: ptr(true), Enabled: ptr(false)})
	d, err := e.store.Test(e.ctx, e.inst, w.RowKey)
	if err != nil {
		t.Fatal(err)
	}
	reqs := rc.requests()
	if len(reqs) != 1 {
		t.Fatalf("test delivery: receiver got %d requests", len(reqs))
	}
	r := reqs[0]
	if r.header.Get("webhook-id") != d.RowKey || d.Status != StatusSucceeded || d.AttemptCount != 1 || !d.Signed || d.SignatureKeyCount != 1 || d.SendDate == nil {
		t.Errorf("test delivery record %+v for webhook-id %s", d, r.header.Get("webhook-id"))
	}
	if err := signature.Verify([]string{w.SigningSecret}, r.header, r.body, e.clock.Now()); err != nil {
		t.Errorf("test delivery does not verify: %v", err)
	}
	if p := r.payload(t); p["state"] != TestState || p["instanceGuid"] != "acme" {
		t.Errorf("test payload %s", r.body)
	}
	if r.header.Get("Content-Type") != "application/json" {
		t.Errorf("Content-Type %q", r.header.Get("Content-Type"))
	}

	_, err = e.store.Redeliver(e.ctx, e.inst, w.RowKey, d.RowKey)
	checkProblem(t, "redeliver to a disabled webhook", err, problem.Conflict, "")
	e.store.Save(e.ctx, e.inst, Input{RowKey: &w.RowKey, Enabled: ptr(true)})
	e.clock.Advance(time.Hour)
	q, err := e.store.Redeliver(e.ctx, e.inst, w.RowKey, d.RowKey)
	if err != nil {
		t.Fatal(err)
	}
	if q.Status != StatusQueued || q.RowKey != d.RowKey || q.SendDate != nil || !q.QueuedDate.Equal(e.clock.Now()) {
		t.Errorf("redelivery record %+v", q)
	}
	e.pump()
	reqs = rc.requests()
	if len(reqs) != 2 || reqs[1].header.Get("webhook-id") != d.RowKey || !bytes.Equal(reqs[1].body, reqs[0].body) {
		t.Fatalf("redelivery: %d requests, second with webhook-id %s", len(reqs), reqs[len(reqs)-1].header.Get("webhook-id"))
	}
	if reqs[1].header.Get("webhook-timestamp") == reqs[0].header.Get("webhook-timestamp") {
		t.Errorf("redelivery not signed afresh")
	}
	after, _ := e.store.Delivery(e.ctx, e.inst, w.RowKey, d.RowKey)
	if after.AttemptCount != 2 || after.Status != StatusSucceeded {
		t.Errorf("after redelivery: %+v", after)
	}
	_, err = e.store.Redeliver(e.ctx, e.inst, w.RowKey, "msg_nosuch")
	checkProblem(t, "redeliver unknown", err, problem.NotFound, "")
	_, err = e.store.Test(e.ctx, e.inst, "wh_nosuch")
	checkProblem(t, "test unknown", err, problem.NotFound, "")

	// A delivery being attempted cannot be redelivered.
	if _, err := e.db.Exec(`UPDATE webhook_deliveries SET lease_owner = 'x', lease_until = $1`, e.clock.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	_, err = e.store.Redeliver(e.ctx, e.inst, w.RowKey, d.RowKey)
	checkProblem(t, "redeliver in flight", err, problem.Conflict, "")
}

// loopbackName returns a host name other than localhost that resolves to a
// loopback address on this machine, or "".
func loopbackName() string {
	candidates := []string{"vm", "runsc"}
	if h, err := os.Hostname(); err == nil {
		candidates = append([]string{h}, candidates...)
	}
	for _, name := range candidates {
		addrs, err := net.LookupHost(name)
		if err != nil || len(addrs) == 0 {
			continue
		}
		all := true
		for _, a := range addrs {
			ip := net.ParseIP(a)
			all = all && ip != nil && ip.IsLoopback()
		}
		if all {
			return name
		}
	}
	return ""
}

// TestSSRF checks that the dispatcher refuses to connect to loopback,
// private, link-local, unspecified and IPv4-mapped addresses, literal or
// behind a host name, records the refusal as a failure with a clear
// lastError, and that nothing reaches the endpoint. The webhooks are saved
// through a store that allows everything, as if the addresses had been
// allowed when they were saved or a name re-bound since.
func TestSSRF(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, DispatcherConfig{}, nil)
	permissive, err := NewStore(e.db, Options{Key: testKey, Policy: egress.NewPolicy(mustPrefixes(t, "0.0.0.0/0", "::/0")...)})
	if err != nil {
		t.Fatal(err)
	}
	permissive.Now = e.clock.Now
	hit := 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit++ }))
	ln, err := net.Listen("tcp", "[::]:0") // loopback over v4 and v6, and 0.0.0.0
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	type target struct {
		host, reason  string
		refusedAtSave bool // only literal addresses and localhost are known at save
	}
	tests := []target{
		{"127.0.0.1", "loopback address", true},
		{"[::1]", "loopback address", true},
		{"[::ffff:127.0.0.1]", "loopback address", true},
		{"169.254.169.254", "link-local address (cloud metadata service)", true},
		{"10.0.0.1", "private address", true},
		{"0.0.0.0", "unspecified address", true},
		{"localhost", "loopback address", true},
	}
	if name := loopbackName(); name != "" {
		tests = append(tests, target{name, "loopback address", false})
	} else {
		t.Log("no host name other than localhost resolves to loopback here; covered by localhost")
	}
	hooks := map[string]string{}
	for _, tt := range tests {
		url := "http://" + tt.host + ":" + port + "/hook"
		w, _, err := permissive.Save(e.ctx, e.inst, Input{URL: &url, ContentSaveEvents: ptr(true), RetriesEnabled: ptr(true)})
		if err != nil {
			t.Fatal(err)
		}
		hooks[tt.host] = w.RowKey
		// Under the default policy a literal address is refused at save; a
		// host name only when dialled, since what it resolves to can change.
		_, _, err = e.store.Save(e.ctx, e.inst, Input{URL: &url})
		if refused := problem.Is(err, problem.Invalid); refused != tt.refusedAtSave {
			t.Errorf("saving %s under the default policy: %v, want refused %v", url, err, tt.refusedAtSave)
		}
	}
	e.createItem("en-us", "One")
	e.pump()
	for _, tt := range tests {
		h := e.history(hooks[tt.host])
		if len(h) != 1 {
			t.Errorf("%s: %d history records, want 1", tt.host, len(h))
			continue
		}
		d := h[0]
		if d.Success || d.HTTPResponseCode != 0 || d.Status != StatusRetrying || !strings.Contains(d.LastError, "refused to connect") ||
			!strings.Contains(d.LastError, tt.reason) || !strings.Contains(d.LastError, egress.AllowNetsEnv) {
			t.Errorf("%s: status %s, code %d, lastError %q; want a refusal (%s) naming %s", tt.host, d.Status, d.HTTPResponseCode, d.LastError, tt.reason, egress.AllowNetsEnv)
		}
	}
	if hit != 0 {
		t.Errorf("the endpoint was reached %d times", hit)
	}
}

func mustPrefixes(t *testing.T, s ...string) []netip.Prefix {
	t.Helper()
	ps, err := egress.ParseAllowNets(strings.Join(s, ","))
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

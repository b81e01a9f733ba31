package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/metrics"
)

// hangingServer is a receiver, over real sockets, that accepts requests
// and answers none of them until it is released (or told to answer), as
// the endpoints of issue 19 did. It counts what it holds, in all and per
// path.
type hangingServer struct {
	srv     *httptest.Server
	release chan struct{}
	once    sync.Once

	mu         sync.Mutex
	answer     int // when not 0, requests are answered at once with this status
	received   int
	held       int
	maxHeld    int
	ended      int // held requests that ended (the sender gave up, or released)
	perPath    map[string]int
	maxPerPath map[string]int
	ids        map[string]int // webhook-id -> requests answered 2xx
}

func newHangingServer(t testing.TB) *hangingServer {
	h := &hangingServer{release: make(chan struct{}), perPath: map[string]int{}, maxPerPath: map[string]int{},
		ids: map[string]int{}}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	// Cleanups run last first: the held requests end before Close waits
	// for them.
	t.Cleanup(h.srv.Close)
	t.Cleanup(h.Release)
	return h
}

func (h *hangingServer) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	h.mu.Lock()
	h.received++
	if code := h.answer; code != 0 {
		if code/100 == 2 {
			h.ids[r.Header.Get("webhook-id")]++
		}
		h.mu.Unlock()
		w.WriteHeader(code)
		return
	}
	h.held++
	h.maxHeld = max(h.maxHeld, h.held)
	h.perPath[p]++
	h.maxPerPath[p] = max(h.maxPerPath[p], h.perPath[p])
	h.mu.Unlock()
	select {
	case <-h.release:
	case <-r.Context().Done():
	}
	h.mu.Lock()
	h.held--
	h.perPath[p]--
	h.ended++
	h.mu.Unlock()
	w.WriteHeader(http.StatusServiceUnavailable)
}

// Release ends every held request, and holds no more.
func (h *hangingServer) Release() { h.once.Do(func() { close(h.release) }) }

// Answer makes the server answer every later request at once with code.
func (h *hangingServer) Answer(code int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.answer = code
}

type hangingStats struct{ received, held, maxHeld, ended, maxPerPath int }

func (h *hangingServer) stats() hangingStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := hangingStats{received: h.received, held: h.held, maxHeld: h.maxHeld, ended: h.ended}
	for _, n := range h.maxPerPath {
		s.maxPerPath = max(s.maxPerPath, n)
	}
	return s
}

// addInstance creates another instance, guid, with the model Article and
// its container Articles, as newEnv does for the first.
func (e *env) addInstance(guid string) content.Instance {
	e.t.Helper()
	inst, err := e.content.CreateInstance(e.ctx, guid, []content.Locale{{Code: "en-us", Name: "English"}})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.content.CreateModel(e.ctx, inst, content.Model{Name: "Article", Kind: "content",
		Fields: []content.Field{{Name: "title", Type: content.TypeText}}}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.content.CreateContainer(e.ctx, inst, "Articles", "Article"); err != nil {
		e.t.Fatal(err)
	}
	return inst
}

// webhookOf saves a webhook of inst to url with in's other members.
func (e *env) webhookOf(inst content.Instance, url string, in Input) Webhook {
	e.t.Helper()
	in.URL = &url
	w, _, err := e.store.Save(e.ctx, inst, in)
	if err != nil {
		e.t.Fatalf("Save webhook: %v", err)
	}
	return w
}

// createItemIn creates an Article in inst's en-us.
func (e *env) createItemIn(inst content.Instance, title string) {
	e.t.Helper()
	if _, err := e.content.CreateItem(e.ctx, inst, "en-us", "Articles",
		map[string]json.RawMessage{"title": jsonOf(title)}); err != nil {
		e.t.Fatal(err)
	}
}

// count returns, of claimed jobs, how many each instance and each webhook got.
func count(js []job) (byInstance map[int64]int, byHook map[string]int) {
	byInstance, byHook = map[int64]int{}, map[string]int{}
	for _, j := range js {
		byInstance[j.InstanceID]++
		byHook[j.ID]++
	}
	return byInstance, byHook
}

// TestClaimLimits checks the fair claim: at most EndpointConcurrency
// deliveries of a webhook and InstanceConcurrency of an instance in flight,
// round robin across instances (a newer delivery of another instance goes
// before the second of a busy one) and across an instance's webhooks,
// whichever dispatcher has them in flight.
// Today's main claims the oldest due first, whoever they are for.
func TestClaimLimits(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, DispatcherConfig{EndpointConcurrency: 2, InstanceConcurrency: 3}, loopback())
	rc := newReceiver(t)
	a := e.inst
	var hooksA []string
	for i := range 3 {
		hooksA = append(hooksA, e.webhook(fmt.Sprintf("%s/a%d", rc.srv.URL, i), Input{ContentSaveEvents: ptr(true)}).RowKey)
	}
	for i := range 4 {
		e.createItem("en-us", fmt.Sprint("a", i))
	}
	e.intakeOnly()
	e.clock.Advance(time.Second) // b's delivery is the newest
	b := e.addInstance("beta")
	hb := e.webhookOf(b, rc.srv.URL+"/b", Input{ContentSaveEvents: ptr(true)})
	e.createItemIn(b, "b")
	e.intakeOnly()

	claim := func(n int, lim limits) []job {
		t.Helper()
		js, err := e.store.claim(e.ctx, e.d.owner, n, e.store.now(), time.Minute, lim, nil)
		if err != nil {
			t.Fatal(err)
		}
		return js
	}
	// Two claimed of 13 due: one of each instance, though a's 12 are older.
	byInst, _ := count(claim(2, e.d.limits))
	if byInst[a.ID] != 1 || byInst[b.ID] != 1 {
		t.Fatalf("claim of 2 took %v by instance, want one of each (a %d, b %d)", byInst, a.ID, b.ID)
	}
	// The rest of a's share: 2 more, on the webhooks it has none in flight on.
	js := claim(100, e.d.limits)
	byInst, byHook := count(js)
	if len(js) != 2 || byInst[a.ID] != 2 {
		t.Fatalf("second claim took %v by instance, want 2 of a (its cap of 3 in flight)", byInst)
	}
	for _, h := range hooksA {
		if byHook[h] > 1 {
			t.Errorf("second claim took %d of webhook %s while others of a had none in flight", byHook[h], h)
		}
	}
	if n := len(claim(100, e.d.limits)); n != 0 {
		t.Fatalf("claimed %d more with every cap reached, want 0", n)
	}
	// The caps count every dispatcher's deliveries in flight.
	if js, err := e.store.claim(e.ctx, "d_another", 100, e.store.now(), time.Minute, e.d.limits, nil); err != nil || len(js) != 0 {
		t.Fatalf("another dispatcher claimed %d (%v) with every cap reached, want 0", len(js), err)
	}
	// With a larger instance cap, the endpoint cap binds: 2 per webhook.
	js = claim(100, limits{endpoint: 2, instance: 100})
	if len(js) != 3 {
		t.Fatalf("claim under a larger instance cap took %d, want 3 (one more for each webhook of a)", len(js))
	}
	var inFlight []struct {
		ID string `db:"webhook_id"`
		N  int    `db:"n"`
	}
	if err := e.db.Select(&inFlight, `SELECT webhook_id, count(*) AS n FROM webhook_deliveries
		WHERE lease_until IS NOT NULL GROUP BY webhook_id`); err != nil {
		t.Fatal(err)
	}
	for _, f := range inFlight {
		want := 2
		if f.ID == hb.RowKey {
			want = 1
		}
		if f.N != want {
			t.Errorf("webhook %s has %d deliveries in flight, want %d", f.ID, f.N, want)
		}
	}
	if n := len(claim(100, limits{endpoint: 2, instance: 100})); n != 0 {
		t.Fatalf("claimed %d more with every webhook at its cap, want 0", n)
	}
}

// TestHangingNeighbour reproduces issue 19's finding 3 with real sockets:
// instance a's 100 endpoints accept and never answer (each attempt would
// wait 5 minutes); instance b's delivery must go out while all of them are
// still held, not after they time out. It also checks the caps on what a
// holds: InstanceConcurrency in all, EndpointConcurrency per endpoint.
func TestHangingNeighbour(t *testing.T) {
	t.Parallel()
	e := newEnvOpts(t, DispatcherConfig{Poll: 10 * time.Millisecond}, Options{Policy: loopback(), Timeout: 5 * time.Minute})
	e.content.Now, e.store.Now = time.Now, time.Now
	hang := newHangingServer(t)
	const endpoints = 100
	for i := range endpoints {
		e.webhook(fmt.Sprintf("%s/h%d", hang.srv.URL, i), Input{ContentSaveEvents: ptr(true)})
	}
	for i := range 3 {
		e.createItem("en-us", fmt.Sprint("a", i)) // 300 deliveries
	}
	b := e.addInstance("beta")
	type receipt struct{ held, ended int }
	got := make(chan receipt, 1)
	rc := newReceiver(t)
	rc.setRespond(func(w http.ResponseWriter, r *http.Request) {
		s := hang.stats()
		select {
		case got <- receipt{s.held, s.ended}:
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	})
	e.webhookOf(b, rc.URL(), Input{ContentSaveEvents: ptr(true)})

	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { e.d.Run(ctx); close(stopped) }()
	defer func() { hang.Release(); cancel(); <-stopped }()

	// Wait until a's endpoints hold what the dispatcher lets them.
	want := e.d.cfg.InstanceConcurrency
	deadline := time.Now().Add(2 * time.Minute)
	for hang.stats().held < want {
		if time.Now().After(deadline) {
			t.Fatalf("a's endpoints hold %d requests after 2 minutes, want %d", hang.stats().held, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.createItemIn(b, "b")
	select {
	case r := <-got:
		if r.ended != 0 || r.held < want {
			t.Errorf("b's delivery arrived when a's endpoints held %d requests and %d had ended, want %d held, none ended",
				r.held, r.ended, want)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("b's delivery did not arrive in 2 minutes while a's endpoints hang (they hold %+v)", hang.stats())
	}
	s := hang.stats()
	if s.maxHeld > want || s.maxPerPath > e.d.cfg.EndpointConcurrency {
		t.Errorf("a's endpoints held %d requests at most, %d on one endpoint; want at most %d and %d",
			s.maxHeld, s.maxPerPath, want, e.d.cfg.EndpointConcurrency)
	}
}

// TestBreaker checks the breaker of an endpoint that accepts and never
// answers: after BreakerTimeouts timeouts in a row it opens, its waiting
// deliveries are held until the pause ends (the history says why) and none
// is claimed meanwhile; then a single probe goes out, which reopens it for
// twice as long when it times out, and closes it when it gets an answer.
// Every delivery still succeeds exactly once, under its own webhook-id.
func TestBreaker(t *testing.T) {
	t.Parallel()
	e := newEnvOpts(t, DispatcherConfig{EndpointConcurrency: 2}, Options{Policy: loopback(), Timeout: time.Second, BreakerTimeouts: 3})
	hang := newHangingServer(t)
	w := e.webhook(hang.srv.URL+"/hook", Input{ContentSaveEvents: ptr(true), RetriesEnabled: ptr(true),
		RetryCount: ptr(8), RetrySpeed: ptr(string(SpeedStandard))})
	for i := range 5 {
		e.createItem("en-us", fmt.Sprint("item", i))
	}
	opened0 := testutil.ToFloat64(metrics.WebhookBreaker.WithLabelValues("opened"))
	closed0 := testutil.ToFloat64(metrics.WebhookBreaker.WithLabelValues("closed"))
	breaker := func() *breakerRow {
		t.Helper()
		var rows []breakerRow
		if err := e.db.Select(&rows, `SELECT webhook_id, timeouts, trips, open_until FROM webhook_breakers WHERE webhook_id = $1`, w.RowKey); err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 {
			return nil
		}
		return &rows[0]
	}

	// Two attempts at a time (the endpoint cap) time out: 2, then 4 >= 3.
	if n := e.pump(); n != 4 {
		t.Fatalf("attempted %d before the breaker opened, want 4", n)
	}
	openedAt := e.clock.Now()
	b := breaker()
	if b == nil || b.OpenUntil == nil || !b.OpenUntil.Equal(openedAt.Add(BreakerPause)) || b.Trips != 1 {
		t.Fatalf("breaker = %+v, want open until %v after its first trip", b, openedAt.Add(BreakerPause))
	}
	if d := testutil.ToFloat64(metrics.WebhookBreaker.WithLabelValues("opened")) - opened0; d < 1 {
		t.Errorf("edgecms_webhook_breaker_transitions_total{to=opened} rose by %v, want at least 1", d)
	}
	var waiting Delivery
	for _, d := range e.history(w.RowKey) {
		switch {
		case d.AttemptCount == 0:
			waiting = d
		case !strings.HasPrefix(d.LastError, "timeout: no complete answer within 1s") || d.Status != StatusRetrying:
			t.Errorf("attempted delivery: status %s, lastError %q; want retrying after a timeout", d.Status, d.LastError)
		}
	}
	wantNote := pausedNote + openedAt.Add(BreakerPause).Format(time.RFC3339) + ": 4 attempts in a row got no answer in time (circuit breaker)"
	if waiting.Status != StatusQueued || waiting.LastError != wantNote {
		t.Errorf("waiting delivery: status %s, lastError %q; want queued, %q", waiting.Status, waiting.LastError, wantNote)
	}

	// Open: nothing is attempted, up to its last moment.
	e.clock.Advance(BreakerPause - time.Millisecond)
	if n := e.pump(); n != 0 {
		t.Fatalf("attempted %d while the breaker is open, want 0", n)
	}
	// Half-open: one probe, which times out: open again, for twice as long.
	e.clock.Advance(time.Millisecond)
	if n := e.pump(); n != 1 {
		t.Fatalf("attempted %d once the pause ended, want 1 probe", n)
	}
	if b := breaker(); b == nil || b.Trips != 2 || !b.OpenUntil.Equal(e.clock.Now().Add(2*BreakerPause)) {
		t.Fatalf("after a probe timed out, breaker = %+v, want open for %v after its second trip", b, 2*BreakerPause)
	}
	// A delivery queued while the breaker is open waits as well.
	e.createItem("en-us", "while paused")
	if n := e.pump(); n != 0 {
		t.Fatalf("attempted %d while the breaker is open again, want 0", n)
	}
	// The endpoint answers again: the next probe closes the breaker.
	hang.Answer(http.StatusNoContent)
	e.clock.Advance(2 * BreakerPause)
	if n := e.pump(); n != 1 {
		t.Fatalf("attempted %d after the second pause, want 1 (the probe; the others wait for their retry)", n)
	}
	if b := breaker(); b != nil {
		t.Fatalf("after an answer, breaker = %+v, want closed (no row)", b)
	}
	if d := testutil.ToFloat64(metrics.WebhookBreaker.WithLabelValues("closed")) - closed0; d < 1 {
		t.Errorf("edgecms_webhook_breaker_transitions_total{to=closed} rose by %v, want at least 1", d)
	}
	e.clock.Advance(MaxDelay)
	e.pump()
	hist := e.history(w.RowKey)
	for _, d := range hist {
		if d.Status != StatusSucceeded {
			t.Errorf("delivery %s: %s (%s), want succeeded", d.RowKey, d.Status, d.LastError)
		}
	}
	hang.mu.Lock()
	defer hang.mu.Unlock()
	if len(hang.ids) != len(hist) || len(hist) != 6 {
		t.Fatalf("%d webhook-ids answered 2xx for %d deliveries, want 6 and 6", len(hang.ids), len(hist))
	}
	for id, n := range hang.ids {
		if n != 1 {
			t.Errorf("webhook-id %s answered 2xx %d times, want once", id, n)
		}
	}
}

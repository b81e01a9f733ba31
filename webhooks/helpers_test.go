package webhooks

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/webhooks/egress"
)

// t0 is the fake clock's start.
var t0 = time.Date(2030, 5, 17, 9, 30, 0, 0, time.UTC)

// testKey is the secret-encryption key of the tests.
var testKey = []byte("0123456789abcdef0123456789abcdef")

// clock is a fake clock shared by the content store and the webhooks store.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// env is one test's database with an instance (en-us, fr-ca) holding the
// model Article and its container Articles, the page model Standard, a
// webhooks store allowed to reach loopback, a dispatcher and a fake clock.
type env struct {
	t       testing.TB
	ctx     context.Context
	db      *sqlx.DB
	dsn     string
	content *content.Store
	store   *Store
	d       *Dispatcher
	inst    content.Instance
	clock   *clock
}

// loopback allows deliveries to the test receivers.
func loopback() *egress.Policy {
	return egress.NewPolicy(netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"))
}

func newEnv(t *testing.T) *env { return newEnvWith(t, DispatcherConfig{}, loopback()) }

func newEnvWith(t testing.TB, cfg DispatcherConfig, policy *egress.Policy) *env {
	return newEnvOpts(t, cfg, Options{Policy: policy, Timeout: 5 * time.Second})
}

// newEnvOpts is newEnvWith with the store's options (the key is the tests').
func newEnvOpts(t testing.TB, cfg DispatcherConfig, opt Options) *env {
	t.Helper()
	db, dsn := pgtest.New(t)
	e := &env{t: t, ctx: context.Background(), db: db, dsn: dsn, content: content.NewStore(db), clock: &clock{t: t0}}
	e.content.Now = e.clock.Now
	var err error
	opt.Key = testKey
	e.store, err = NewStore(db, opt)
	if err != nil {
		t.Fatal(err)
	}
	e.store.Now = e.clock.Now
	if cfg.Rand == nil {
		cfg.Rand = func() float64 { return 0.5 } // no jitter
	}
	e.d = NewDispatcher(e.store, cfg, slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	e.inst, err = e.content.CreateInstance(e.ctx, "acme", []content.Locale{{Code: "en-us", Name: "English"}, {Code: "fr-ca", Name: "Français"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.content.CreateModel(e.ctx, e.inst, content.Model{Name: "Article", Kind: "content",
		Fields: []content.Field{{Name: "title", Type: content.TypeText}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.content.CreateContainer(e.ctx, e.inst, "Articles", "Article"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.content.CreatePageModel(e.ctx, e.inst, "Standard", []string{"MainContentZone"}); err != nil {
		t.Fatal(err)
	}
	return e
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

// createItem creates an Article in locale and returns its contentID.
func (e *env) createItem(locale, title string) int64 {
	e.t.Helper()
	st, err := e.content.CreateItem(e.ctx, e.inst, locale, "Articles", map[string]json.RawMessage{"title": jsonOf(title)})
	if err != nil {
		e.t.Fatal(err)
	}
	return st.ContentID
}

func (e *env) saveItem(locale string, id int64, title string) {
	e.t.Helper()
	if _, err := e.content.SaveItem(e.ctx, e.inst, locale, id, map[string]json.RawMessage{"title": jsonOf(title)}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) itemAction(locale string, id int64, a content.Action) {
	e.t.Helper()
	if _, err := e.content.ItemAction(e.ctx, e.inst, locale, id, a); err != nil {
		e.t.Fatalf("%s item %d: %v", a, id, err)
	}
}

func jsonOf(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func ptr[T any](v T) *T { return &v }

// webhook saves a webhook to url with in's other members.
func (e *env) webhook(url string, in Input) Webhook {
	e.t.Helper()
	in.URL = &url
	w, _, err := e.store.Save(e.ctx, e.inst, in)
	if err != nil {
		e.t.Fatalf("Save webhook: %v", err)
	}
	return w
}

// pump runs the dispatcher's steps synchronously until nothing is left to
// do at the clock's time: it queues the deliveries of new (and confirmed)
// events, then attempts every due delivery. It returns how many attempts it
// made.
func (e *env) pump() int {
	e.t.Helper()
	e.intakeOnly()
	if e.d.cfg.RequireConfirmation {
		for {
			n, _, err := e.d.promote(e.ctx)
			if err != nil {
				e.t.Fatalf("promote: %v", err)
			}
			if n == 0 {
				break
			}
		}
	}
	total := 0
	for {
		js, err := e.store.claim(e.ctx, e.d.owner, 200, e.store.now(), e.d.cfg.Lease, e.d.limits, nil)
		if err != nil {
			e.t.Fatalf("claim: %v", err)
		}
		if len(js) == 0 {
			return total
		}
		rs := make([]result, len(js))
		var wg sync.WaitGroup
		for i, j := range js {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rs[i] = e.d.handle(e.ctx, j)
			}()
		}
		wg.Wait()
		if _, err := e.store.record(e.ctx, e.d.owner, rs); err != nil {
			e.t.Fatalf("record: %v", err)
		}
		total += len(js)
	}
}

// history returns every history record of webhook id, newest first.
func (e *env) history(id string) []Delivery {
	e.t.Helper()
	var out []Delivery
	q := HistoryQuery{FromDate: "2000-01-01", ToDate: "2000-12-31", Take: "100"}
	q.FromDate = e.clock.Now().AddDate(0, 0, -300).Format(time.DateOnly)
	q.ToDate = e.clock.Now().AddDate(0, 0, 1).Format(time.DateOnly)
	for {
		p, err := e.store.History(e.ctx, e.inst, id, q)
		if err != nil {
			e.t.Fatalf("History: %v", err)
		}
		out = append(out, p.Items...)
		if p.Token == nil {
			return out
		}
		q.Token = *p.Token
	}
}

// request is one request a receiver got.
type request struct {
	path   string
	header http.Header
	body   []byte
	at     time.Time
}

// receiver is an HTTP endpoint that records what it receives and answers
// with its respond function (204 by default).
type receiver struct {
	mu      sync.Mutex
	got     []request
	respond func(w http.ResponseWriter, r *http.Request)
	srv     *httptest.Server
}

func newReceiver(t testing.TB) *receiver {
	rc := &receiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, request{path: r.URL.Path, header: r.Header.Clone(), body: body, at: time.Now()})
		respond := rc.respond
		rc.mu.Unlock()
		if respond != nil {
			respond(w, r)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) URL() string { return rc.srv.URL + "/hook" }

func (rc *receiver) requests() []request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]request(nil), rc.got...)
}

func (rc *receiver) setRespond(f func(w http.ResponseWriter, r *http.Request)) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.respond = f
}

// payload decodes a request body.
func (r request) payload(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("payload %s: %v", r.body, err)
	}
	return m
}

// intakeOnly queues the deliveries of every event in the log without
// attempting them. The event log shows a row only once every transaction
// older than it has ended, in the whole Postgres server (where other tests
// run), so it waits until the dispatcher's cursor has passed the last row.
func (e *env) intakeOnly() {
	e.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		n, _, err := e.d.intake(e.ctx)
		if err != nil {
			e.t.Fatalf("intake: %v", err)
		}
		if n > 0 {
			continue
		}
		var behind bool
		if err := e.db.Get(&behind, `SELECT EXISTS (SELECT 1 FROM events e WHERE (e.tx, e.id) >
			coalesce((SELECT (c.tx, c.id) FROM event_cursors c WHERE c.consumer = $1), ('0'::xid8, 0::bigint)))`, e.d.cfg.Consumer); err != nil {
			e.t.Fatal(err)
		}
		if !behind {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatal("the event log stayed invisible for a minute: a transaction is stuck somewhere on the server")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

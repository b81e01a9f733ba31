package edge_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/edge"
	"github.com/edgecms/edgecms/store"
)

// Cache policy the publisher writes with fetch objects (origin's cacheFetch).
const cacheFetch = "public, max-age=0, s-maxage=30, stale-while-revalidate=60, stale-if-error=86400"

const jsonType = "application/json; charset=utf-8"

// testWriter sends log lines to the test log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func testLog(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// runningEdge is an edge listening on a loopback port and following the
// change feed, until the test ends (or stop is called).
type runningEdge struct {
	srv  *edge.Server
	url  string
	stop func()
}

// startEdge starts an edge on st and returns once it serves, after its
// first read of the change feed. cfg's Store is set to st; FeedPoll
// defaults to 10 ms so that tests do not wait long.
func startEdge(t testing.TB, st store.Store, cfg edge.Config) *runningEdge {
	t.Helper()
	return startEdgeLogging(t, st, cfg, testLog(t))
}

// startEdgeLogging is startEdge with the edge logging to log.
func startEdgeLogging(t testing.TB, st store.Store, cfg edge.Config, log *slog.Logger) *runningEdge {
	t.Helper()
	cfg.Store = st
	if cfg.FeedPoll == 0 {
		cfg.FeedPoll = 10 * time.Millisecond
	}
	srv, err := edge.New(cfg, log)
	if err != nil {
		t.Fatalf("edge.New: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); srv.Run(ctx) }()
	// As edgecms does: serve once the feed was read (Ready).
	<-srv.Ready()
	go func() { defer wg.Done(); srv.Serve(ln) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			if err := srv.Shutdown(context.Background()); err != nil {
				t.Errorf("edge shutdown: %v", err)
			}
			cancel()
			wg.Wait()
		})
	}
	t.Cleanup(stop)
	return &runningEdge{srv: srv, url: "http://" + ln.Addr().String(), stop: stop}
}

// addr is the edge's host:port.
func (e *runningEdge) addr() string { return strings.TrimPrefix(e.url, "http://") }

// deadURL returns a loopback URL where nothing listens.
func deadURL(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// response is an answer read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

var client = &http.Client{Timeout: 30 * time.Second}

// do sends a request with headers given as name, value pairs.
func do(t testing.TB, method, url string, body io.Reader, headers ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if strings.EqualFold(headers[i], "Host") {
			req.Host = headers[i+1]
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, url, err)
	}
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// get sends a GET with an APIKey header (none when key is empty).
func get(t testing.TB, url, key string) response {
	t.Helper()
	if key == "" {
		return do(t, http.MethodGet, url, nil)
	}
	return do(t, http.MethodGet, url, nil, "APIKey", key)
}

// put writes a fetch object as the publisher does.
func put(t testing.TB, st store.Store, key, body string, tags ...string) store.Object {
	t.Helper()
	o := store.Object{Key: key, Body: []byte(body), ContentType: jsonType, CacheControl: cacheFetch, Tags: tags}
	if _, err := st.Put(context.Background(), o); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	got, err := st.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// key is one API key of a test manifest.
type key struct {
	secret, typ string
	expires     *time.Time
	disabled    bool
}

func hashSecret(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// putManifest writes guid's key manifest.
func putManifest(t testing.TB, st store.Store, guid string, keys ...key) {
	t.Helper()
	m := delivery.Manifest{Guid: guid, Keys: []delivery.ManifestEntry{}}
	for _, k := range keys {
		m.Keys = append(m.Keys, delivery.ManifestEntry{Hash: hashSecret(k.secret), Type: k.typ, ExpiresAt: k.expires, Enabled: !k.disabled})
	}
	putJSON(t, st, delivery.ManifestKey(guid), m)
}

func putJSON(t testing.TB, st store.Store, key string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(context.Background(), store.Object{Key: key, Body: b, ContentType: jsonType, CacheControl: "no-store"}); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

// feedWriter writes the change feed as a publisher does: every change gets
// the next sequence number, and the feed lists the last max changes.
type feedWriter struct {
	t   testing.TB
	st  store.Store
	max int

	mu   sync.Mutex
	feed delivery.Feed
}

func newFeedWriter(t testing.TB, st store.Store) *feedWriter {
	return &feedWriter{t: t, st: st, max: 2000, feed: delivery.Feed{Changes: []delivery.Change{}}}
}

// changed lists keys as changed and writes the feed.
func (w *feedWriter) changed(keys ...string) {
	w.t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range keys {
		w.feed.Seq++
		w.feed.Changes = append(w.feed.Changes, delivery.Change{Seq: w.feed.Seq, Key: k})
	}
	if n := len(w.feed.Changes); n > w.max {
		w.feed.Changes = w.feed.Changes[n-w.max:]
	}
	if len(w.feed.Changes) > 0 {
		w.feed.Oldest = w.feed.Changes[0].Seq
	}
	putJSON(w.t, w.st, delivery.FeedKey, w.feed)
}

// waitFor calls cond until it is true, for at most limit (a bound on the
// wait, not an assertion on speed), and returns how long it took.
func waitFor(t testing.TB, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: still not true after %v", what, limit)
		}
		time.Sleep(time.Millisecond)
	}
	return time.Since(start)
}

// gatedStore is a store whose reads of key (Get or Stat) are counted and
// wait until open is closed (or the read is cancelled).
type gatedStore struct {
	store.Store
	key   string
	open  chan struct{}
	reads atomic.Int64
}

// wait counts a read of key and waits for open.
func (s *gatedStore) wait(ctx context.Context, key string) error {
	if key != s.key {
		return nil
	}
	s.reads.Add(1)
	select {
	case <-s.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *gatedStore) Get(ctx context.Context, key string) (store.Object, error) {
	if err := s.wait(ctx, key); err != nil {
		return store.Object{}, err
	}
	return s.Store.Get(ctx, key)
}

func (s *gatedStore) Stat(ctx context.Context, key string) (store.Info, error) {
	if err := s.wait(ctx, key); err != nil {
		return store.Info{}, err
	}
	return s.Store.Stat(ctx, key)
}

// withoutFeedSignal answers the feed wait (delivery.FeedWaitPath) as an
// origin that does not follow the feed channel does, for the stand-in
// origins of tests that count or check what the edge forwards: it reports
// whether r was that wait.
func withoutFeedSignal(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Path != delivery.FeedWaitPath {
		return false
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusServiceUnavailable)
	return true
}

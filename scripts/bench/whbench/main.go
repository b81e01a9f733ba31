// Command whbench measures webhook delivery on this machine, against a
// scratch database: deliveries per second from a backlog to a local receiver
// with signing on (every delivery verified), and the time from a publish
// call to receipt at a steady rate of publishes.
//
// The dispatcher runs in this process, as in edgecms serve; the receiver is
// a net/http server in the same process that verifies each signature. No
// publisher runs, so the publish-to-receipt time excludes the publisher's
// confirmation (RequireConfirmation off): add the publish-to-visible time
// of the publisher benchmark for the whole path.
//
//	go run ./scripts/bench/whbench            # or bash scripts/bench/webhooks.sh
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/schema"
	"github.com/edgecms/edgecms/webhooks"
	"github.com/edgecms/edgecms/webhooks/egress"
	"github.com/edgecms/edgecms/webhooks/signature"
)

func main() {
	dsn := flag.String("db", "postgres://postgres@127.0.0.1:5432/edgecms_bench_webhooks?sslmode=disable", "scratch database (dropped and created)")
	backlog := flag.Int("n", 30000, "deliveries in the throughput run")
	workers := flag.Int("workers", 64, "dispatcher workers")
	rate := flag.Int("rate", 200, "publishes per second in the latency run")
	seconds := flag.Int("seconds", 20, "length of the latency run")
	poll := flag.Duration("poll", 0, "dispatcher poll interval (0: its default)")
	listen := flag.Bool("listen", true, "the dispatcher LISTENs for notifications, as in edgecms serve")
	endpoint := flag.Int("endpoint-concurrency", 0, "deliveries to one webhook in flight at most (0: the default, webhooks.DefaultEndpointConcurrency)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	flag.Parse()
	log.SetFlags(0)
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		check(err)
		check(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}

	ctx := context.Background()
	db := scratch(ctx, *dsn)
	defer db.Close()
	cs := content.NewStore(db)
	key := make([]byte, webhooks.KeySize)
	rand.Read(key)
	wh, err := webhooks.NewStore(db, webhooks.Options{Key: key, Policy: egress.NewPolicy(netip.MustParsePrefix("127.0.0.1/32")), Conns: *workers})
	check(err)
	rcv := newReceiver()

	// Throughput: a backlog of Saved events, one webhook, signing on.
	inst, err := cs.CreateInstance(ctx, "bench", []content.Locale{{Code: "en-us", Name: "English"}})
	check(err)
	hook := save(ctx, wh, inst, rcv.url+"/backlog", webhooks.Input{ContentSaveEvents: ptr(true), SecureDeliveryEnabled: ptr(true)})
	rcv.trust(hook.SigningSecret)
	_, err = db.Exec(`INSERT INTO events (instance_id, instance_guid, state, subject, locale, reference_name,
		content_id, version_id, change_date)
		SELECT $1, 'bench', 'Saved', 'item', 'en-us', 'Articles', g, g, now() FROM generate_series(1, $2) g`, inst.ID, *backlog)
	check(err)
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg := webhooks.DispatcherConfig{Workers: *workers, Poll: *poll, EndpointConcurrency: *endpoint,
		InstanceConcurrency: max(*workers, webhooks.DefaultInstanceConcurrency)}
	if *listen {
		cfg.ListenURL = *dsn
	}
	dctx, stop := context.WithCancel(ctx)
	d := webhooks.NewDispatcher(wh, cfg, quiet)
	done := make(chan struct{})
	start := time.Now()
	go func() { d.Run(dctx); close(done) }()
	for rcv.count("/backlog") < *backlog {
		time.Sleep(time.Millisecond)
	}
	received := time.Since(start)
	for {
		var n int
		check(db.Get(&n, `SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded'`))
		if n == *backlog {
			break
		}
		time.Sleep(time.Millisecond)
	}
	recorded := time.Since(start)
	fmt.Printf("throughput: %d signed deliveries to one webhook, each verified by the receiver, %d workers, %d in flight at most\n",
		*backlog, *workers, d.EndpointConcurrency())
	fmt.Printf("  all received in %.2f s: %.0f deliveries/s\n", received.Seconds(), float64(*backlog)/received.Seconds())
	fmt.Printf("  all recorded as succeeded in %.2f s: %.0f deliveries/s\n", recorded.Seconds(), float64(*backlog)/recorded.Seconds())
	if n := rcv.invalid.Load(); n > 0 {
		log.Fatalf("%d deliveries did not verify", n)
	}

	// Latency: publishes of distinct items at a steady rate, one webhook
	// subscribed to publish events, signing on.
	n := *rate * *seconds
	pinst, err := cs.CreateInstance(ctx, "pub", []content.Locale{{Code: "en-us", Name: "English"}})
	check(err)
	_, err = cs.CreateModel(ctx, pinst, content.Model{Name: "Article", Kind: "content", Fields: []content.Field{{Name: "title", Type: content.TypeText}}})
	check(err)
	_, err = cs.CreateContainer(ctx, pinst, "articles", "Article")
	check(err)
	ids := make([]int64, n)
	for i := range ids {
		st, err := cs.CreateItem(ctx, pinst, "en-us", "articles", map[string]json.RawMessage{"title": json.RawMessage(fmt.Sprintf("%q", fmt.Sprint("item ", i)))})
		check(err)
		ids[i] = st.ContentID
	}
	phook := save(ctx, wh, pinst, rcv.url+"/publish", webhooks.Input{ContentPublishEvents: ptr(true), SecureDeliveryEnabled: ptr(true)})
	rcv.trust(phook.SigningSecret)
	time.Sleep(time.Second) // let the dispatcher pass the items' Saved events

	sent := make([]time.Time, n)
	returned := make([]time.Time, n)
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / time.Duration(*rate))
	begin := time.Now()
	for i, id := range ids {
		<-tick.C
		wg.Add(1)
		go func() {
			defer wg.Done()
			sent[i] = time.Now()
			_, err := cs.ItemAction(ctx, pinst, "en-us", id, content.ActionPublish)
			check(err)
			returned[i] = time.Now()
		}()
	}
	tick.Stop()
	wg.Wait()
	achieved := float64(n) / time.Since(begin).Seconds()
	for deadline := time.Now().Add(30 * time.Second); rcv.count("/publish") < n && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	stop()
	<-done
	at := rcv.arrivals("/publish")
	var fromCall, fromReturn, call []time.Duration
	for i, id := range ids {
		call = append(call, returned[i].Sub(sent[i]))
		if t, ok := at[id]; ok {
			fromCall, fromReturn = append(fromCall, t.Sub(sent[i])), append(fromReturn, t.Sub(returned[i]))
		}
	}
	fmt.Printf("latency: %d publishes at %.0f/s (asked %d/s), signed and verified; publisher confirmation not included\n", n, achieved, *rate)
	if missing := n - len(fromCall); missing > 0 {
		fmt.Printf("  %d publishes never arrived within 30 s (events the event log's reader skipped)\n", missing)
	}
	fmt.Printf("  publish call to receipt:          %s\n", quantiles(fromCall))
	fmt.Printf("  publish call's return to receipt: %s\n", quantiles(fromReturn))
	fmt.Printf("  the publish call itself:          %s\n", quantiles(call))
}

// quantiles formats p50, p90, p99 and the maximum of ds.
func quantiles(ds []time.Duration) string {
	ds = append([]time.Duration(nil), ds...)
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	q := func(p float64) string { return ds[int(p*float64(len(ds)-1))].Round(100 * time.Microsecond).String() }
	return fmt.Sprintf("p50 %s  p90 %s  p99 %s  max %s", q(0.5), q(0.9), q(0.99), q(1))
}

// receiver verifies every delivery and records when each arrived.
type receiver struct {
	url     string
	mu      sync.Mutex
	v       []*signature.Verifier
	got     map[string]map[int64]time.Time // path -> contentID -> first arrival
	invalid atomic.Int64
}

func newReceiver() *receiver {
	r := &receiver{got: map[string]map[int64]time.Time{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	r.url = "http://" + ln.Addr().String()
	go http.Serve(ln, r)
	return r
}

func (r *receiver) trust(secret string) {
	v, err := signature.NewVerifier(secret)
	check(err)
	r.mu.Lock()
	r.v = append(r.v, v)
	r.mu.Unlock()
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	vs := r.v
	r.mu.Unlock()
	ok := false
	for _, v := range vs {
		ok = ok || v.Verify(req.Header, body, now) == nil
	}
	if !ok {
		r.invalid.Add(1)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var p struct {
		ContentID int64 `json:"contentID"`
	}
	json.Unmarshal(body, &p)
	r.mu.Lock()
	m := r.got[req.URL.Path]
	if m == nil {
		m = map[int64]time.Time{}
		r.got[req.URL.Path] = m
	}
	if _, seen := m[p.ContentID]; !seen {
		m[p.ContentID] = now
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) count(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got[path])
}

func (r *receiver) arrivals(path string) map[int64]time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[path]
}

// scratch drops and creates the database of dsn, and migrates it.
func scratch(ctx context.Context, dsn string) *sqlx.DB {
	u, err := url.Parse(dsn)
	check(err)
	name := strings.TrimPrefix(u.Path, "/")
	if !strings.HasPrefix(name, "edgecms_bench") {
		check(errors.New("the scratch database's name must start with edgecms_bench: it is dropped"))
	}
	admin := *u
	admin.Path = "/postgres"
	adb, err := sqlx.Open("postgres", admin.String())
	check(err)
	_, err = adb.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`)
	check(err)
	_, err = adb.Exec(`CREATE DATABASE ` + name)
	check(err)
	adb.Close()
	db, err := sqlx.Open("postgres", dsn)
	check(err)
	db.SetMaxOpenConns(64)
	db.SetMaxIdleConns(64)
	_, err = schema.Migrate(ctx, db)
	check(err)
	return db
}

func save(ctx context.Context, wh *webhooks.Store, inst content.Instance, u string, in webhooks.Input) webhooks.Webhook {
	in.URL = &u
	w, _, err := wh.Save(ctx, inst, in)
	check(err)
	return w
}

func ptr[T any](v T) *T { return &v }

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

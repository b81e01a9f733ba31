// Command freshness measures publish-to-visible latency: the time from a
// publish call returning to every edge serving the new version of the item.
//
// It runs the service as separate processes of one edgecms binary (-bin),
// as a deployment would: an origin (the management API), a publisher
// (LISTEN on), and -edges edges on a folder store, started without
// DATABASE_URL. It fills a scratch database with the demo site, then, -n
// times, edits the title of a demo item that other objects embed (category
// 1: products link to it, lists and pages show it) through the management
// API, publishes it, and polls every edge every -poll until each serves the
// new title. Publishes are spaced: the next one starts -gap (plus up to
// 50 ms of jitter, to spread publishes over the edges' poll phase) after
// the previous batch was confirmed.
//
// The polling bounds the error of each figure: a served time is late by at
// most one poll interval plus one request. Besides the total it prints the
// stages it can see from outside: when the publisher began to write the
// chunk holding the item (object_changes.at, the chunk transaction's
// start: pickup, plan and render are before it), when the item's file
// began to be written (its mtime: the folder store then syncs the body
// and its metadata to disk and renames them into place), when the feed
// version first listing it began to be written (mtime) and when the driver
// first read it, and when the batch was confirmed (event_confirmations).
// File times come from the kernel's coarse clock: they may read a few ms
// early.
//
// With -other-tx D, transactions of length D run throughout in another
// database of the same server, as another application's (or another
// test's) work would.
//
// Run it through scripts/bench/freshness.sh.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"
)

const (
	guid    = "fresh"
	locale  = "en-us"
	itemID  = 1
	itemKey = guid + "/fetch/" + locale + "/item/1/d1.json"
	feedKey = "_feed/changes.json"
)

func main() {
	bin := flag.String("bin", "", "the edgecms binary (required)")
	dsn := flag.String("database-url", envOr("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/edgecms_bench_freshness?sslmode=disable"),
		"scratch database (its name must start with edgecms_bench: it is dropped and created)")
	n := flag.Int("n", 100, "measured publishes")
	warm := flag.Int("warmup", 3, "publishes before the measured ones (not counted)")
	gap := flag.Duration("gap", 300*time.Millisecond, "pause after a publish's batch is confirmed before the next publish")
	poll := flag.Duration("poll", 3*time.Millisecond, "how often the driver polls each edge and the feed file")
	edges := flag.Int("edges", 3, "edge processes")
	feedPoll := flag.String("feed-poll", "", "EDGECMS_EDGE_FEED_POLL of the edges (empty: their default)")
	otherTx := flag.Duration("other-tx", 0, "keep transactions of this length running in another database of the server throughout (0: none)")
	csvPath := flag.String("csv", "", "also write each measured publish to this CSV file (times in µs: the publish call returning as Unix time, the rest from it)")
	keep := flag.Bool("keep", false, "keep the temporary folder (store, process logs); its path is printed")
	flag.Parse()
	log.SetFlags(0)
	if *bin == "" {
		log.Fatal("freshness: -bin is required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	tmp, err := os.MkdirTemp("", "freshness")
	check(err)
	r := &run{bin: *bin, dir: tmp, dsn: *dsn, storeDir: filepath.Join(tmp, "objects")}
	defer func() {
		r.stopAll()
		if *keep {
			fmt.Println("kept", tmp)
		} else {
			os.RemoveAll(tmp)
		}
	}()
	if *otherTx > 0 {
		stopOther, err := otherWork(ctx, *dsn, *otherTx)
		check(err)
		defer stopOther()
		fmt.Printf("other work: a transaction of %v always open in another database of the server\n", *otherTx)
	}
	r.csv = *csvPath
	if err := r.main(ctx, *n, *warm, *gap, *poll, *edges, *feedPoll); err != nil {
		r.stopAll()
		r.tails()
		log.Print("freshness: ", err)
		if !*keep {
			os.RemoveAll(tmp)
		}
		os.Exit(1)
	}
}

type run struct {
	bin, dir, dsn, storeDir string
	procs                   []*proc
	db                      *sqlx.DB
	origin                  string
	edges                   []string
	token, fetchKey         string
	http                    *http.Client
	csv                     string
}

type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func (r *run) main(ctx context.Context, n, warm int, gap, poll time.Duration, edges int, feedPoll string) error {
	if err := scratch(r.dsn); err != nil {
		return err
	}
	db, err := sqlx.Open("postgres", r.dsn)
	if err != nil {
		return err
	}
	r.db = db
	defer db.Close()
	r.http = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}

	var creds struct {
		ManagementToken string `json:"managementToken"`
		FetchKey        string `json:"fetchKey"`
	}
	out, err := r.command(ctx, "demo", "--guid", guid, "--locales", "en-us,fr-ca")
	if err != nil {
		return err
	}
	if err := json.Unmarshal(out, &creds); err != nil {
		return fmt.Errorf("demo printed %q: %w", out, err)
	}
	r.token, r.fetchKey = creds.ManagementToken, creds.FetchKey

	addr := freeAddr()
	r.origin = "http://" + addr
	if err := r.start("origin", nil, "origin", "--addr", addr, "--fetch-rate-limit", "0"); err != nil {
		return err
	}
	if err := r.start("publisher", nil, "publisher"); err != nil {
		return err
	}
	for i := range edges {
		addr := freeAddr()
		env := []string{"EDGECMS_ORIGIN_URL=" + r.origin}
		if feedPoll != "" {
			env = append(env, "EDGECMS_EDGE_FEED_POLL="+feedPoll)
		}
		if err := r.start(fmt.Sprintf("edge%d", i+1), env, "edge", "--addr", addr); err != nil {
			return err
		}
		r.edges = append(r.edges, "http://"+addr)
	}
	// The publisher renders the demo site (until then edges forward
	// misses to the origin); then every edge serves the item from the
	// store.
	deadline := time.Now().Add(5 * time.Minute)
	for {
		var drained bool
		err := db.GetContext(ctx, &drained, `SELECT EXISTS (SELECT 1 FROM event_cursors c WHERE c.consumer = 'publisher'
			AND NOT EXISTS (SELECT 1 FROM events e WHERE (e.tx, e.id) > (c.tx, c.id)))`)
		if err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(r.storeDir, filepath.FromSlash(itemKey))); drained && err == nil {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("the publisher has not rendered the demo site after 5 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, e := range r.edges {
		for {
			status, _, err := r.get(ctx, e)
			if err == nil && status == 200 {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("edge %s does not serve the item after 2 minutes (status %d, %v)", e, status, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	fmt.Printf("origin, publisher and %d edges (folder store, no DATABASE_URL; feed poll %s) up; %d publishes (after %d warm-up), gap %v, driver poll %v\n",
		edges, orDefault(feedPoll, "default"), n, warm, gap, poll)

	var samples []sample
	for i := -warm; i < n; i++ {
		s, err := r.publishOnce(ctx, i, poll)
		if err != nil {
			return fmt.Errorf("publish %d: %w", i, err)
		}
		if i >= 0 {
			samples = append(samples, s)
		}
		time.Sleep(gap + rand.N(50*time.Millisecond))
	}
	report(samples, poll)
	if r.csv != "" {
		return writeCSV(r.csv, samples)
	}
	return nil
}

func writeCSV(path string, ss []sample) error {
	var b strings.Builder
	b.WriteString("start_unix_us,served,chunk,written,listed,listed_seen,confirmed,publish_call")
	for i := range ss[0].edges {
		fmt.Fprintf(&b, ",edge%d", i+1)
	}
	b.WriteString("\n")
	us := func(d time.Duration) string { return fmt.Sprint(d.Microseconds()) }
	for _, s := range ss {
		b.WriteString(strings.Join([]string{fmt.Sprint(s.start.UnixMicro()), us(s.served), us(s.chunk), us(s.written),
			us(s.listed), us(s.listedSeen), us(s.confirmed), us(s.publishReq)}, ","))
		for _, e := range s.edges {
			b.WriteString("," + us(e))
		}
		b.WriteString("\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// sample is one publish's timings, each from the publish call returning.
type sample struct {
	start      time.Time       // the publish call returned
	served     time.Duration   // every edge serves the new version
	edges      []time.Duration // each edge
	chunk      time.Duration   // the chunk transaction writing the item began
	written    time.Duration   // the item's file was written
	listed     time.Duration   // the feed version first listing the item began to be written (0: not seen)
	listedSeen time.Duration   // the driver first read a feed listing the item
	confirmed  time.Duration   // the batch's events were confirmed
	publishReq time.Duration   // the publish call itself
}

func (r *run) publishOnce(ctx context.Context, i int, poll time.Duration) (sample, error) {
	title := fmt.Sprintf("Single Origin, freshness run %d at %d", i, time.Now().UnixNano())
	want, _ := json.Marshal(title)
	body, _ := json.Marshal(map[string]any{"fields": map[string]string{"Title": title}})
	base := fmt.Sprintf("%s/api/v1/instance/%s/%s/items/%d", r.origin, guid, locale, itemID)
	if err := r.manage(ctx, http.MethodPut, base, body); err != nil {
		return sample{}, err
	}
	before := r.feedSeq()
	var lastEvent int64
	if err := r.db.GetContext(ctx, &lastEvent, `SELECT coalesce(max(id), 0) FROM events`); err != nil {
		return sample{}, err
	}
	callStart := time.Now()
	if err := r.manage(ctx, http.MethodPost, base+"/publish", nil); err != nil {
		return sample{}, err
	}
	start := time.Now()
	s := sample{start: start, publishReq: start.Sub(callStart), edges: make([]time.Duration, len(r.edges))}

	// The feed file: its mtime when a version first lists the item, and
	// when the driver first read it.
	watchCtx, stopWatch := context.WithCancel(ctx)
	listed := make(chan [2]time.Time, 1)
	go func() { listed <- r.watchFeed(watchCtx, before, poll) }()

	var wg sync.WaitGroup
	errs := make([]error, len(r.edges))
	for j, e := range r.edges {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(poll)
			defer t.Stop()
			for {
				status, b, err := r.get(ctx, e)
				if err == nil && status == 200 && bytes.Contains(b, want) {
					s.edges[j] = time.Since(start)
					return
				}
				if time.Since(start) > 20*time.Second {
					errs[j] = fmt.Errorf("edge %s: new version not served after 20 s (status %d, %v)", e, status, err)
					return
				}
				<-t.C
			}
		}()
	}
	wg.Wait()
	stopWatch()
	if err := errors.Join(errs...); err != nil {
		return s, err
	}
	s.served = slices.Max(s.edges)
	if at := <-listed; !at[0].IsZero() {
		s.listed, s.listedSeen = at[0].Sub(start), at[1].Sub(start)
	}
	if fi, err := os.Stat(filepath.Join(r.storeDir, filepath.FromSlash(itemKey))); err == nil {
		s.written = fi.ModTime().Sub(start)
	}
	var at time.Time
	err := r.db.GetContext(ctx, &at, `SELECT at FROM object_changes WHERE key = $1 ORDER BY seq DESC LIMIT 1`, itemKey)
	if err != nil {
		return s, fmt.Errorf("object_changes: %w", err)
	}
	s.chunk = at.Sub(start)
	// The batch is confirmed once every object the publish affects is
	// written; wait for it, so that publishes do not overlap.
	for {
		var confirmed *time.Time
		err := r.db.GetContext(ctx, &confirmed, `SELECT max(c.confirmed_at) FROM events e JOIN event_confirmations c ON c.event_id = e.id
			WHERE e.id > $1 AND e.state = 'Published' AND e.content_id = $2`, lastEvent, itemID)
		if err != nil {
			return s, fmt.Errorf("confirmations: %w", err)
		}
		if confirmed != nil {
			s.confirmed = confirmed.Sub(start)
			break
		}
		if time.Since(start) > 20*time.Second {
			return s, errors.New("publish event not confirmed after 20 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if i >= 0 && (i+1)%10 == 0 {
		fmt.Printf("  %3d publishes: last served after %v\n", i+1, s.served.Round(time.Millisecond))
	}
	return s, nil
}

// watchFeed polls the feed file until ctx ends and returns the mtime of
// the first version seen that lists the item after seq before, and when it
// was read.
func (r *run) watchFeed(ctx context.Context, before int64, poll time.Duration) [2]time.Time {
	path := filepath.Join(r.storeDir, filepath.FromSlash(feedKey))
	var last time.Time
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if fi, err := os.Stat(path); err == nil && !fi.ModTime().Equal(last) {
			last = fi.ModTime()
			if b, err := os.ReadFile(path); err == nil && feedLists(b, before) {
				return [2]time.Time{last, time.Now()}
			}
		}
		select {
		case <-ctx.Done():
			return [2]time.Time{}
		case <-t.C:
		}
	}
}

type feed struct {
	Seq     int64 `json:"seq"`
	Changes []struct {
		Seq int64  `json:"seq"`
		Key string `json:"key"`
	} `json:"changes"`
}

func feedLists(b []byte, before int64) bool {
	var f feed
	if json.Unmarshal(b, &f) != nil {
		return false
	}
	for _, c := range f.Changes {
		if c.Seq > before && c.Key == itemKey {
			return true
		}
	}
	return false
}

func (r *run) feedSeq() int64 {
	b, err := os.ReadFile(filepath.Join(r.storeDir, filepath.FromSlash(feedKey)))
	if err != nil {
		return 0
	}
	var f feed
	json.Unmarshal(b, &f)
	return f.Seq
}

func report(ss []sample, poll time.Duration) {
	pick := func(f func(sample) time.Duration) []time.Duration {
		var out []time.Duration
		for _, s := range ss {
			if d := f(s); d != 0 {
				out = append(out, d)
			}
		}
		slices.Sort(out)
		return out
	}
	line := func(name string, ds []time.Duration) {
		if len(ds) == 0 {
			fmt.Printf("  %-46s (not seen)\n", name)
			return
		}
		fmt.Printf("  %-46s p50 %6.1f  p90 %6.1f  p99 %6.1f  max %6.1f ms  (n=%d)\n", name,
			ms(pct(ds, 0.50)), ms(pct(ds, 0.90)), ms(pct(ds, 0.99)), ms(ds[len(ds)-1]), len(ds))
	}
	served := pick(func(s sample) time.Duration { return s.served })
	fmt.Printf("\npublish call returned -> every edge serves the new version, %d publishes:\n", len(ss))
	line("ALL EDGES SERVE IT", served)
	fmt.Println("stages, each from the publish call returning:")
	line("chunk with the item begins (pickup+plan+render)", pick(func(s sample) time.Duration { return s.chunk }))
	line("item object write begins (file mtime)", pick(func(s sample) time.Duration { return s.written }))
	line("feed listing it: write begins (file mtime)", pick(func(s sample) time.Duration { return s.listed }))
	line("feed listing it: read by the driver", pick(func(s sample) time.Duration { return s.listedSeen }))
	line("first edge serves it", pick(func(s sample) time.Duration { return slices.Min(s.edges) }))
	line("all edges serve it", served)
	line("batch confirmed (whole batch written)", pick(func(s sample) time.Duration { return s.confirmed }))
	line("feed read by the driver -> all edges serve it", pick(func(s sample) time.Duration {
		if s.listedSeen == 0 {
			return 0
		}
		return max(s.served-s.listedSeen, time.Microsecond)
	}))
	line("(the publish call itself)", pick(func(s sample) time.Duration { return s.publishReq }))
	fmt.Printf("measurement error: a served time is late by at most one driver poll (%v) plus one GET; p99 is the %d-th of %d sorted\n",
		poll, int(math.Ceil(0.99*float64(len(served)))), len(served))
	if len(served) > 0 && pct(served, 0.99) <= 250*time.Millisecond {
		fmt.Println("target p99 <= 250 ms: met")
	} else {
		fmt.Println("target p99 <= 250 ms: NOT met")
	}
}

// pct is the nearest-rank percentile of sorted ds.
func pct(ds []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(ds)))) - 1
	return ds[max(0, min(i, len(ds)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (r *run) get(ctx context.Context, edge string) (int, []byte, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/%s/fetch/%s/item/%d", edge, guid, locale, itemID), nil)
	req.Header.Set("APIKey", r.fetchKey)
	res, err := r.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

func (r *run) manage(ctx context.Context, method, u string, body []byte) error {
	req, _ := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+r.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := r.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, u, res.StatusCode, b)
	}
	return nil
}

// env is the environment of the processes: this one's without any edgecms
// setting or database URL, plus the store and the extra variables.
func (r *run) env(extra []string, db bool) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "EDGECMS_") || strings.HasPrefix(kv, "DATABASE_URL=") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "EDGECMS_STORE="+r.storeDir)
	if db {
		env = append(env, "DATABASE_URL="+r.dsn)
	}
	return append(env, extra...)
}

// command runs an edgecms command to its end and returns its output.
func (r *run) command(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, r.bin, args...)
	cmd.Dir, cmd.Env = r.dir, r.env(nil, true)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("edgecms %s: %w: %s", args[0], err, stderr.Bytes())
	}
	return out, nil
}

// start starts a long-running edgecms process; edges get no database URL.
func (r *run) start(name string, extra []string, args ...string) error {
	logPath := filepath.Join(r.dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return err
	}
	cmd := exec.Command(r.bin, args...)
	cmd.Dir, cmd.Env = r.dir, r.env(extra, args[0] != "edge")
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { cmd.Wait(); f.Close(); close(p.done) }()
	r.procs = append(r.procs, p)
	if args[0] == "publisher" {
		return nil
	}
	addr := args[slices.Index(args, "--addr")+1]
	for range 200 {
		select {
		case <-p.done:
			return fmt.Errorf("%s exited at start", name)
		default:
		}
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s does not listen on %s", name, addr)
}

// stopAll stops the processes in reverse order of start.
func (r *run) stopAll() {
	for i := len(r.procs) - 1; i >= 0; i-- {
		p := r.procs[i]
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
	}
	r.procs = nil
}

// tails prints the end of each process's log, after a failure.
func (r *run) tails() {
	for _, name := range []string{"origin", "publisher", "edge1", "edge2", "edge3"} {
		f, err := os.Open(filepath.Join(r.dir, name+".log"))
		if err != nil {
			continue
		}
		var lines []string
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		f.Close()
		fmt.Fprintf(os.Stderr, "--- %s (last lines)\n%s\n", name, strings.Join(lines[max(0, len(lines)-15):], "\n"))
	}
}

// otherWork keeps a transaction with a transaction id open at all times in
// another scratch database (dsn's name + "_other"): a new one starts every
// d/2 and lasts d. It returns a function that stops it.
func otherWork(ctx context.Context, dsn string, d time.Duration) (func(), error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, err
	}
	u.Path += "_other"
	if err := scratch(u.String()); err != nil {
		return nil, err
	}
	db, err := sqlx.Open("postgres", u.String())
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(d / 2)
		defer t.Stop()
		for {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tx, err := db.BeginTxx(ctx, nil)
				if err != nil {
					return
				}
				defer tx.Rollback()
				if _, err := tx.ExecContext(ctx, `SELECT pg_current_xact_id()`); err != nil {
					return
				}
				select {
				case <-ctx.Done():
				case <-time.After(d):
				}
			}()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); wg.Wait(); db.Close() }, nil
}

// scratch drops and creates the database dsn names.
func scratch(dsn string) error {
	u, err := url.Parse(dsn)
	if err != nil {
		return err
	}
	name := strings.TrimPrefix(u.Path, "/")
	if !strings.HasPrefix(name, "edgecms_bench") {
		return errors.New("the scratch database's name must start with edgecms_bench: it is dropped")
	}
	admin := *u
	admin.Path = "/postgres"
	adb, err := sqlx.Open("postgres", admin.String())
	if err != nil {
		return err
	}
	defer adb.Close()
	if _, err := adb.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`); err != nil {
		return err
	}
	_, err = adb.Exec(`CREATE DATABASE ` + name)
	return err
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	defer l.Close()
	return l.Addr().String()
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

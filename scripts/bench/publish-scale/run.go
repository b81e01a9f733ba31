//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// config is what a run of the benchmark measures, and how.
type config struct {
	Bins          []binary
	Sizes         []int
	Edits, News   int
	Sustain       time.Duration
	Rate          float64
	NewShare      float64
	Edges         int
	Mode          string
	DatabaseURL   string
	PGPort        int
	BasePort      int
	Timeout       time.Duration
	SettleTimeout time.Duration
	Quiet         time.Duration // how long the publisher must be idle to count as quiet
	// RepublishTimeout bounds the seed's full republish: a binary whose
	// republish is not linear in N may take hours at 100,000.
	RepublishTimeout time.Duration
	Poll             time.Duration
	Dir              string
	Keep             bool
	Out              io.Writer
}

// binary is an edgecms binary under test.
type binary struct{ Label, Path string }

const (
	guid      = "scale"
	locale    = "en-us"
	container = "posts"
	channel   = "website"
)

// Run measures every binary at every size, one after the other, and prints
// each run's figures and a summary.
func Run(ctx context.Context, cfg config) ([]*result, error) {
	if cfg.Mode != "split" && cfg.Mode != "serve" {
		return nil, fmt.Errorf("-mode must be split or serve, not %q", cfg.Mode)
	}
	if cfg.Mode == "serve" {
		cfg.Edges = 1
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.Chmod(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	server := cfg.DatabaseURL
	where := "the Postgres server of -database-url"
	if server == "" {
		cl, err := startCluster(ctx, filepath.Join(cfg.Dir, "pg"), cfg.PGPort)
		if err != nil {
			return nil, err
		}
		defer cl.stop()
		server = cl.url()
		where = fmt.Sprintf("a throwaway Postgres 15 cluster on port %d", cfg.PGPort)
		pgPostmaster = cl.pid
	}
	fmt.Fprintf(cfg.Out, "cpus 2, load %s; database: %s\n", loadavg(), where)
	var results []*result
	var failed error
	for _, n := range cfg.Sizes {
		for _, b := range cfg.Bins {
			r := &run{cfg: cfg, bin: b, n: n, server: server}
			res, err := r.do(ctx)
			if err != nil {
				// The other runs still tell something; the
				// error is printed and returned at the end.
				err = fmt.Errorf("%s at N=%d: %w", b.Label, n, err)
				fmt.Fprintf(cfg.Out, "FAILED: %v\n", err)
				failed = errors.Join(failed, err)
				if ctx.Err() != nil {
					return results, failed
				}
				continue
			}
			results = append(results, res)
		}
	}
	summary(cfg.Out, results)
	return results, failed
}

// pgPostmaster is the pid of the throwaway cluster's server (0: none), for
// the CPU time of its backends.
var pgPostmaster int

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// run is one binary at one size.
type run struct {
	cfg    config
	bin    binary
	n      int
	server string
	res    *result

	dir, store string
	dbName     string
	db         *sqlx.DB
	procs      []*proc
	publisher  *proc // the process that publishes: publisher, or serve
	origin     string
	edges      []string
	rcv        *receiver
	http       *http.Client

	token, fetchKey string
	tmplID          int64
	pathPrefix      string // the dynamic page's path, to which "/" + slug is added
	published       atomic.Int64
	ids             []int64 // the seeded items, for edits
	hasBacklog      bool    // the schema has publish_backlog (the background lane of issue 11's publisher)
}

func (r *run) port(i int) int            { return r.cfg.BasePort + i }
func (r *run) addr(i int) string         { return fmt.Sprintf("127.0.0.1:%d", r.port(i)) }
func (r *run) printf(f string, a ...any) { fmt.Fprintf(r.cfg.Out, f, a...) }

func (r *run) do(ctx context.Context) (*result, error) {
	r.res = &result{Label: r.bin.Label, N: r.n, Mode: r.cfg.Mode, Edges: r.cfg.Edges}
	r.dir = filepath.Join(r.cfg.Dir, fmt.Sprintf("%s-%d", r.bin.Label, r.n))
	r.store = filepath.Join(r.dir, "objects")
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return nil, err
	}
	r.http = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 20 * time.Second}}
	defer r.stopAll()
	r.printf("\n== %s, N = %d: %s, folder store; load %s\n", r.bin.Label, r.n, r.layout(), loadavg())

	if err := r.createDatabase(ctx); err != nil {
		return nil, err
	}
	defer r.dropDatabase()
	if err := r.seed(ctx); err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	if err := r.startRoles(ctx); err != nil {
		return nil, err
	}
	if err := r.measureOneByOne(ctx); err != nil {
		r.printTails()
		return nil, err
	}
	if r.cfg.Sustain > 0 {
		if err := r.sustain(ctx); err != nil {
			r.printTails()
			return nil, err
		}
	}
	r.res.RSS = map[string]int64{}
	for _, p := range r.procs {
		r.res.RSS[p.name] = vmHWM(p.pid())
		r.res.RSSOrder = append(r.res.RSSOrder, p.name)
	}
	r.stopProcs()
	if r.cfg.Mode == "split" {
		if err := r.serveRSS(ctx); err != nil {
			r.printf("serve RSS: %v\n", err)
		}
	}
	r.stopAll()
	r.verify(ctx)
	r.res.print(r.cfg.Out)
	return r.res, nil
}

func (r *run) layout() string {
	if r.cfg.Mode == "serve" {
		return "edgecms serve (one process)"
	}
	return fmt.Sprintf("origin, publisher, dispatcher and %d edges as separate processes", r.cfg.Edges)
}

// createDatabase creates the scratch database bench_p3_<label>_<n>.
func (r *run) createDatabase(ctx context.Context) error {
	r.dbName = "bench_p3_" + strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			return c
		}
		return '_'
	}, strings.ToLower(r.bin.Label)) + fmt.Sprintf("_%d", r.n)
	admin, err := sqlx.Open("postgres", r.server)
	if err != nil {
		return err
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+pq.QuoteIdentifier(r.dbName)+" WITH (FORCE)"); err != nil {
		return err
	}
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(r.dbName)); err != nil {
		return err
	}
	r.db, err = sqlx.Open("postgres", r.dsn())
	if err != nil {
		return err
	}
	r.db.SetMaxOpenConns(16)
	return nil
}

func (r *run) dsn() string {
	u, _ := url.Parse(r.server)
	u.Path = "/" + r.dbName
	return u.String()
}

func (r *run) dropDatabase() {
	r.stopAll()
	if r.db != nil {
		r.db.Close()
	}
	if r.cfg.Keep {
		r.printf("kept database %s\n", r.dbName)
		return
	}
	admin, err := sqlx.Open("postgres", r.server)
	if err != nil {
		return
	}
	defer admin.Close()
	admin.Exec("DROP DATABASE IF EXISTS " + pq.QuoteIdentifier(r.dbName) + " WITH (FORCE)")
	os.RemoveAll(r.dir)
}

// env is the environment of the binary's processes: this one's without any
// edgecms setting, plus the store, the database (not for edges) and extra.
func (r *run) env(db bool, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "EDGECMS_") || strings.HasPrefix(kv, "DATABASE_URL=") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "EDGECMS_STORE="+r.store, "EDGECMS_PUBLIC_URL=http://"+r.addr(0),
		"EDGECMS_WEBHOOK_ALLOW_NETS=127.0.0.0/8", "EDGECMS_FETCH_RATE_LIMIT=0", "EDGECMS_PREVIEW_RATE_LIMIT=0")
	if db {
		env = append(env, "DATABASE_URL="+r.dsn())
	}
	return append(env, extra...)
}

// command runs an edgecms command to its end and returns its stdout.
func (r *run) command(ctx context.Context, args ...string) ([]byte, error) {
	var out bytes.Buffer
	err := runCmd(ctx, r.dir, r.env(true), &out, r.bin.Path, args...)
	return out.Bytes(), err
}

// start starts a long-running role; name is also its log file's name.
// Every role gets its own admin address, so that binaries that serve one
// do not collide.
func (r *run) start(ctx context.Context, name string, adminPort int, db bool, extra []string, args ...string) (*proc, error) {
	env := r.env(db, append(extra, fmt.Sprintf("EDGECMS_ADMIN_ADDR=127.0.0.1:%d", r.port(adminPort)))...)
	p, err := startProc(r.dir, name, env, r.bin.Path, args...)
	if err != nil {
		return nil, err
	}
	r.procs = append(r.procs, p)
	if i := indexOf(args, "--addr"); i >= 0 {
		if err := p.waitListen(ctx, args[i+1], time.Minute); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func (r *run) stopProcs() {
	for i := len(r.procs) - 1; i >= 0; i-- {
		r.procs[i].stop()
	}
	r.procs = nil
}

func (r *run) stopAll() {
	r.stopProcs()
	if r.rcv != nil {
		r.rcv.close()
		r.rcv = nil
	}
}

func (r *run) printTails() {
	for _, p := range r.procs {
		r.printf("--- %s (last lines of %s)\n%s\n", p.name, p.log, tail(p.log, 12))
	}
}

// seed creates the instance: structure and one post through the API of a
// temporary origin, N-1 copies of the post in SQL, then a timed republish.
func (r *run) seed(ctx context.Context) error {
	if _, err := r.command(ctx, "migrate"); err != nil {
		return err
	}
	if err := r.db.GetContext(ctx, &r.hasBacklog, `SELECT to_regclass('publish_backlog') IS NOT NULL`); err != nil {
		return err
	}
	out, err := r.command(ctx, "instance", "create", "--guid", guid, "--locales", locale)
	if err != nil {
		return err
	}
	var creds struct {
		ManagementToken string `json:"managementToken"`
		FetchKey        string `json:"fetchKey"`
	}
	if err := json.Unmarshal(out, &creds); err != nil {
		return fmt.Errorf("instance create printed %q: %w", out, err)
	}
	r.token, r.fetchKey = creds.ManagementToken, creds.FetchKey

	rcv, err := startReceiver(r.addr(10))
	if err != nil {
		return err
	}
	r.rcv = rcv
	o, err := r.start(ctx, "seed-origin", 11, true, nil, "origin", "--addr", r.addr(0))
	if err != nil {
		return err
	}
	r.origin = "http://" + r.addr(0)
	if err := r.structure(ctx); err != nil {
		return err
	}
	o.stop()
	r.procs = r.procs[:0]

	start := time.Now()
	if err := r.copyItems(ctx); err != nil {
		return err
	}
	r.res.SeedTime = time.Since(start)

	// The full republish, timed: every object of the instance.
	start = time.Now()
	p, err := startProc(r.dir, "republish", r.env(true), r.bin.Path, "republish", "--guid", guid)
	if err != nil {
		return err
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		p.stop()
		return ctx.Err()
	case <-time.After(r.cfg.RepublishTimeout):
		p.stop()
		return fmt.Errorf("republish not done after %v: %s", r.cfg.RepublishTimeout, lastLines(tail(p.log, 1), 1))
	}
	r.res.RepublishTime = time.Since(start)
	r.res.RepublishRSS = p.maxRSS
	if !p.cmd.ProcessState.Success() {
		return fmt.Errorf("republish failed: %s", tail(p.log, 10))
	}
	r.res.RepublishObjects = countFiles(filepath.Join(r.store, guid, "fetch"))
	if m := regexp.MustCompile(`objects=(\d+)`).FindStringSubmatch(tail(p.log, 5)); m != nil {
		fmt.Sscan(m[1], &r.res.RepublishObjects)
	}
	r.printf("seed: %d items copied in SQL in %v; republish: %d objects in %v = %.0f objects/s, its peak RSS %.0f MiB\n",
		r.n-1, r.res.SeedTime.Round(time.Millisecond), r.res.RepublishObjects, r.res.RepublishTime.Round(time.Millisecond),
		r.res.republishRate(), mib(r.res.RepublishRSS))
	return r.findPathPrefix()
}

// structure creates the model, the container, the pages, the template post
// and the webhook through the management API.
func (r *run) structure(ctx context.Context) error {
	base := r.origin + "/api/v1/instance/" + guid
	steps := []struct {
		path string
		body string
	}{
		{"/models", `{"name":"Post","kind":"content","fields":[{"name":"title","type":"text","required":true},
			{"name":"slug","type":"text"},{"name":"body","type":"html"}]}`},
		{"/containers", `{"referenceName":"posts","model":"Post"}`},
		{"/page-models", `{"name":"Main","zones":["main"]}`},
		{"/webhook", fmt.Sprintf(`{"name":"bench","url":%q,"enabled":true,"contentPublishEvents":true}`, r.rcv.url)},
	}
	for _, s := range steps {
		if _, err := r.call(ctx, http.MethodPost, base+s.path, s.body); err != nil {
			return err
		}
	}
	page := func(title string, parent int64, extra string) (int64, error) {
		body := fmt.Sprintf(`{"title":%q,"pageModel":"Main"`, title)
		if parent != 0 {
			body += fmt.Sprintf(`,"parentPageID":%d`, parent)
		}
		b, err := r.call(ctx, http.MethodPost, base+"/"+locale+"/pages", body+extra+"}")
		if err != nil {
			return 0, err
		}
		var p struct {
			PageID int64 `json:"pageID"`
		}
		json.Unmarshal(b, &p)
		_, err = r.call(ctx, http.MethodPost, fmt.Sprintf("%s/%s/pages/%d/publish", base, locale, p.PageID), "")
		return p.PageID, err
	}
	home, err := page("Home", 0, "")
	if err != nil {
		return err
	}
	for _, t := range []string{"About", "Contact"} {
		if _, err := page(t, home, ""); err != nil {
			return err
		}
	}
	blog, err := page("Blog", home, "")
	if err != nil {
		return err
	}
	if _, err := page("Post", blog, `,"dynamic":{"referenceName":"posts","pathField":"slug"}`); err != nil {
		return err
	}
	id, err := r.createItem(ctx, "Post template", "post-template")
	if err != nil {
		return err
	}
	if _, err := r.call(ctx, http.MethodPost, fmt.Sprintf("%s/%s/items/%d/publish", base, locale, id), ""); err != nil {
		return err
	}
	r.tmplID = id
	return nil
}

// body is the post body: about 1.5 KB of HTML, as a blog post's would be.
var body = "<p>" + strings.Repeat("Coffee roast bean origin cup brew light dark aroma crema grind filter espresso. ", 19) + "</p>"

func (r *run) createItem(ctx context.Context, title, slug string) (int64, error) {
	b, _ := json.Marshal(map[string]any{"referenceName": container, "fields": map[string]string{"title": title, "slug": slug, "body": body}})
	out, err := r.call(ctx, http.MethodPost, r.origin+"/api/v1/instance/"+guid+"/"+locale+"/items", string(b))
	if err != nil {
		return 0, err
	}
	var st struct {
		ContentID int64 `json:"contentID"`
	}
	if err := json.Unmarshal(out, &st); err != nil || st.ContentID == 0 {
		return 0, fmt.Errorf("create item answered %s", out)
	}
	return st.ContentID, nil
}

// call sends a management API request and returns the answer's body; a
// status of 300 or more is an error.
func (r *run) call(ctx context.Context, method, u, body string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := r.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		return nil, fmt.Errorf("%s %s: %d %s", method, u, res.StatusCode, b)
	}
	return b, nil
}

// copyItemsChunk is how many items one INSERT copies.
const copyItemsChunk = 20000

// copyItems copies the template post N-1 times: the items and their
// published copies, in chunks, each copy with its own title and slug.
// The item_copies columns are read from the catalog, so that columns a
// binary's schema adds are copied from the template as they are.
func (r *run) copyItems(ctx context.Context) error {
	var cols []string
	err := r.db.SelectContext(ctx, &cols, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = 'public' AND table_name = 'item_copies' ORDER BY ordinal_position`)
	if err != nil {
		return err
	}
	var exprs []string
	for _, c := range cols {
		switch c {
		case "content_id":
			exprs = append(exprs, "ins.content_id")
		case "item_order":
			exprs = append(exprs, "ins.item_order")
		case "fields", "published_fields":
			exprs = append(exprs, fmt.Sprintf(`c.%s || jsonb_build_object('title', 'Post ' || ins.content_id, 'slug', 'post-' || ins.content_id)`, c))
		default:
			exprs = append(exprs, "c."+pq.QuoteIdentifier(c))
		}
	}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = pq.QuoteIdentifier(c)
	}
	q := `WITH t AS (SELECT instance_id, model_id, container_id, item_order FROM items WHERE content_id = $1),
		ins AS (INSERT INTO items (instance_id, model_id, container_id, item_order)
			SELECT t.instance_id, t.model_id, t.container_id, t.item_order + g FROM t, generate_series($2::int, $3::int) g
			ORDER BY g RETURNING content_id, item_order)
		INSERT INTO item_copies (` + strings.Join(quoted, ", ") + `)
		SELECT ` + strings.Join(exprs, ", ") + ` FROM ins, item_copies c WHERE c.content_id = $1`
	for from := 1; from <= r.n-1; from += copyItemsChunk {
		to := min(from+copyItemsChunk-1, r.n-1)
		if _, err := r.db.ExecContext(ctx, q, r.tmplID, from, to); err != nil {
			return fmt.Errorf("copy items: %w", err)
		}
	}
	if _, err := r.db.ExecContext(ctx, `VACUUM ANALYZE items, item_copies`); err != nil {
		return err
	}
	if err := r.db.SelectContext(ctx, &r.ids, `SELECT content_id FROM items WHERE content_id <> $1
		AND container_id = (SELECT container_id FROM items WHERE content_id = $1) ORDER BY content_id`, r.tmplID); err != nil {
		return err
	}
	var visible int64
	if err := r.db.GetContext(ctx, &visible, `SELECT count(*) FROM item_copies WHERE published_version_id IS NOT NULL
		AND container_id = (SELECT container_id FROM items WHERE content_id = $1)`, r.tmplID); err != nil {
		return err
	}
	if visible != int64(r.n) {
		return fmt.Errorf("the container has %d published items after the copy, want %d", visible, r.n)
	}
	r.published.Store(visible)
	return nil
}

// findPathPrefix reads the dynamic page's path from the flat sitemap: the
// template post is at prefix + "/post-template".
func (r *run) findPathPrefix() error {
	b, err := os.ReadFile(r.objectPath(fmt.Sprintf("sitemap/flat/%s.json", channel)))
	if err != nil {
		return fmt.Errorf("flat sitemap after the republish: %w", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("flat sitemap: %w", err)
	}
	for p := range m {
		if pre, ok := strings.CutSuffix(p, "/post-template"); ok {
			r.pathPrefix = pre
			return nil
		}
	}
	return errors.New("the flat sitemap has no path for the template post")
}

// objectPath is the file of an object of the instance's locale, from the
// part of its key after {guid}/fetch/{locale}/.
func (r *run) objectPath(rest string) string {
	return filepath.Join(r.store, guid, "fetch", locale, filepath.FromSlash(rest))
}

func countFiles(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".json") {
			n++
		}
		return nil
	})
	return n
}

// startRoles starts the processes under test and waits until the publisher
// has handled the events the seed wrote (the structure, the template post).
func (r *run) startRoles(ctx context.Context) error {
	r.edges = nil
	if r.cfg.Mode == "serve" {
		p, err := r.start(ctx, "serve", 11, true, nil, "serve", "--addr", r.addr(0))
		if err != nil {
			return err
		}
		r.publisher = p
		r.origin = "http://" + r.addr(0)
		r.edges = []string{r.origin}
	} else {
		if _, err := r.start(ctx, "origin", 11, true, nil, "origin", "--addr", r.addr(0)); err != nil {
			return err
		}
		r.origin = "http://" + r.addr(0)
		p, err := r.start(ctx, "publisher", 12, true, []string{"EDGECMS_LOG_LEVEL=debug"}, "publisher")
		if err != nil {
			return err
		}
		r.publisher = p
		if _, err := r.start(ctx, "dispatcher", 13, true, nil, "dispatcher"); err != nil {
			return err
		}
		for i := range r.cfg.Edges {
			if _, err := r.start(ctx, fmt.Sprintf("edge%d", i+1), 14+i, false, []string{"EDGECMS_ORIGIN_URL=" + r.origin},
				"edge", "--addr", r.addr(1+i)); err != nil {
				return err
			}
			r.edges = append(r.edges, "http://"+r.addr(1+i))
		}
	}
	ctx2, cancel := context.WithTimeout(ctx, r.cfg.SettleTimeout)
	defer cancel()
	start := time.Now()
	if _, ok := r.rcv.wait(ctx2, r.tmplID, time.Time{}, 50*time.Millisecond); !ok {
		return fmt.Errorf("the template post's webhook did not arrive within %v: %s", r.cfg.SettleTimeout, tail(r.publisher.log, 10))
	}
	for _, e := range r.edges {
		if _, ok := r.waitEdge(ctx2, e, r.listPath(0), time.Time{}, 50*time.Millisecond, func(b []byte) bool { return true }); !ok {
			return fmt.Errorf("edge %s does not serve list page 0", e)
		}
	}
	if _, err := r.settle(ctx); err != nil {
		return err
	}
	r.printf("roles up; the publisher handled the seed's events (structure, template post) in %v\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// output runs an edgecms command to its end and returns its stdout and
// stderr together.
func (r *run) output(ctx context.Context, args ...string) (string, error) {
	var out bytes.Buffer
	cmd := osexec.CommandContext(ctx, r.bin.Path, args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = r.dir, r.env(true), &out, &out
	err := cmd.Run()
	return out.String(), err
}

// serveRSS runs edgecms serve on the instance for a few edits and new
// items, each waited for until its webhook arrives, and records its peak
// RSS: the one-process deployment's memory at this N, publisher included.
func (r *run) serveRSS(ctx context.Context) error {
	p, err := r.start(ctx, "serve", 11, true, nil, "serve", "--addr", r.addr(0))
	if err != nil {
		return err
	}
	defer r.stopProcs()
	r.origin = "http://" + r.addr(0)
	ctx, cancel := context.WithTimeout(ctx, r.cfg.SettleTimeout)
	defer cancel()
	for i := range 5 {
		id := r.ids[(i*7919)%len(r.ids)]
		b, _ := json.Marshal(map[string]any{"fields": map[string]string{"title": fmt.Sprintf("serve edit %d", i)}})
		if _, err := r.call(ctx, http.MethodPut, r.manageURL("/items/%d", id), string(b)); err != nil {
			return err
		}
		nid, err := r.createItem(ctx, fmt.Sprintf("serve new %d", i), fmt.Sprintf("serve-new-%d-%d", i, time.Now().UnixNano()))
		if err != nil {
			return err
		}
		for _, x := range []int64{id, nid} {
			start := time.Now()
			if _, err := r.call(ctx, http.MethodPost, r.manageURL("/items/%d/publish", x), ""); err != nil {
				return err
			}
			if _, ok := r.rcv.wait(ctx, x, start, 10*time.Millisecond); !ok {
				return fmt.Errorf("no webhook for item %d from serve", x)
			}
		}
	}
	if _, err := r.settle(ctx); err != nil {
		return err
	}
	r.res.ServeRSS = vmHWM(p.pid())
	return nil
}

//go:build unix

// Command republish measures a full republish of a large generated instance
// into MinIO, and MinIO's own PUT rate for the same object sizes, and prints
// both (the target is a republish at >= 70 % of MinIO's rate).
//
// It creates a scratch database, fills an instance with -items content
// items in two locales through content.Store (so through the same
// validation, workflow and event log as an editor's work), starts a MinIO
// server (store/miniotest, the binary of scripts/minio.sh) and then:
//
//  1. republishes the instance into an empty bucket (publisher.Republish,
//     every object rendered and Put), and reports objects/s;
//  2. Puts objects of the same sizes (random bytes, same content type) into
//     new buckets with a plain minio-go loop at concurrency 16, 32 and 64;
//  3. republishes into a second empty bucket, then runs the PUT loop again
//     at its best concurrency (the machine's load may change between
//     measurements: the ratio compares the means of both pairs);
//  4. republishes once more, nothing changed (one listing of the store,
//     no request per object).
//
// Each measurement also reports the CPU time per 1000 objects of this
// process, MinIO and the database's Postgres backends, and of the whole
// machine (whatever else runs). -keep keeps the generated database and
// -reuse runs on a kept one (its publisher tables emptied) without the
// minutes of generating; -once stops after the first republish, for
// profiling (-cpuprofile). The figures to report come from a plain run.
//
// Run it through scripts/bench/republish.sh.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/publisher"
	"github.com/edgecms/edgecms/schema"
	"github.com/edgecms/edgecms/store"
	"github.com/edgecms/edgecms/store/miniotest"
)

func main() {
	items := flag.Int("items", 10000, "content items (each in two locales)")
	workers := flag.Int("workers", 8, "publisher render workers")
	storeWorkers := flag.Int("store-workers", 32, "publisher store writers (also the first concurrency of the plain PUT loop)")
	dbURL := flag.String("database-url", envOr("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"),
		"Postgres server (any database; a scratch one is created and dropped)")
	keep := flag.Bool("keep", false, "keep the scratch database (its name is printed; see -reuse)")
	flag.StringVar(&reuse, "reuse", "", "use this database, kept by an earlier -keep run, instead of generating one (it is kept)")
	flag.BoolVar(&once, "once", false, "republish once into an empty bucket and stop (for profiling; no ratio)")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the first republish to this file")
	flag.Parse()
	if err := run(context.Background(), *dbURL, *items, *workers, *storeWorkers, *keep || reuse != ""); err != nil {
		fmt.Fprintln(os.Stderr, "republish bench:", err)
		os.Exit(1)
	}
}

var (
	cpuProfile string
	reuse      string
	once       bool
)

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func run(ctx context.Context, serverURL string, items, workers, storeWorkers int, keep bool) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	dbName := fmt.Sprintf("edgecms_bench_republish_%d", time.Now().UnixNano()%1e9)
	if reuse != "" {
		dbName = reuse
	}
	dsn, err := withDatabase(serverURL, dbName)
	if err != nil {
		return err
	}
	admin, err := sqlx.Open("postgres", serverURL)
	if err != nil {
		return err
	}
	defer admin.Close()
	var guid string
	if reuse != "" {
		if guid, err = reused(ctx, dsn); err != nil {
			return err
		}
		fmt.Printf("reused instance %q of database %s\n", guid, dbName)
	} else {
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+dbName); err != nil {
			return fmt.Errorf("create scratch database: %w", err)
		}
		if keep {
			fmt.Printf("keeping database %s (run again with -reuse %s)\n", dbName, dbName)
		} else {
			defer admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+dbName+" WITH (FORCE)")
		}
		if guid, err = fill(ctx, admin, dsn, dbName, items); err != nil {
			return err
		}
	}
	db, err := openDB(dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	cs := content.NewStore(db)
	srv, err := miniotest.StartServer("")
	if err != nil {
		return err
	}
	defer srv.Stop()
	st, err := store.Open(ctx, "s3://republish?endpoint="+srv.Endpoint+"&secure=false&create=true",
		store.Options{AccessKey: srv.AccessKey, SecretKey: srv.SecretKey})
	if err != nil {
		return err
	}

	meter := newCPUMeter(admin, dbName, srv.Endpoint)
	p := publisher.New(publisher.Config{Store: st, Workers: workers, StoreWorkers: storeWorkers}, cs, log)
	defer p.Close()
	var total atomic.Int64
	progress := func(done, n int) { total.Store(int64(n)) }
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		pprof.StartCPUProfile(f)
	}
	cpu0 := meter.sample(ctx)
	start := time.Now()
	if err := p.Republish(ctx, guid, progress); err != nil {
		return err
	}
	first := time.Since(start)
	cpuPub := meter.sample(ctx).sub(cpu0)
	if cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	n := int(total.Load())
	var sizes []int
	err = st.List(ctx, guid+"/", func(i store.Info) error { sizes = append(sizes, int(i.Size)); return nil })
	if err != nil {
		return err
	}
	sort.Ints(sizes)
	sum := 0
	for _, s := range sizes {
		sum += s
	}
	fmt.Printf("objects: %d (in the store: %d), size min %d / median %d / p99 %d / max %d bytes, total %.1f MiB\n",
		n, len(sizes), sizes[0], sizes[len(sizes)/2], sizes[len(sizes)*99/100], sizes[len(sizes)-1], float64(sum)/(1<<20))
	report := func(what string, d time.Duration) float64 {
		rate := float64(n) / d.Seconds()
		fmt.Printf("publisher republish, %-24s %d objects in %v = %.0f objects/s (workers %d, store workers %d)\n",
			what+":", n, d.Round(time.Millisecond), rate, workers, storeWorkers)
		return rate
	}
	pub1 := report("into an empty bucket", first)
	fmt.Printf("  %s\n", perThousand(cpuPub, n))
	if once {
		return nil
	}

	// The machine may be shared and its load changes: measure MinIO's
	// own rate before and after a second republish into another empty
	// bucket, and compare like with like.
	best, bestC := 0.0, 0
	for _, c := range []int{16, 32, 64} {
		cpu0 := meter.sample(ctx)
		rate, err := rawPuts(ctx, srv, sizes, c, "a")
		if err != nil {
			return err
		}
		fmt.Printf("MinIO plain PutObject loop, same sizes:    %.0f objects/s (concurrency %d)\n", rate, c)
		fmt.Printf("  %s\n", perThousand(meter.sample(ctx).sub(cpu0), len(sizes)))
		if rate > best {
			best, bestC = rate, c
		}
	}
	st2, err := store.Open(ctx, "s3://republish2?endpoint="+srv.Endpoint+"&secure=false&create=true",
		store.Options{AccessKey: srv.AccessKey, SecretKey: srv.SecretKey})
	if err != nil {
		return err
	}
	p2 := publisher.New(publisher.Config{Store: st2, Workers: workers, StoreWorkers: storeWorkers}, cs, log)
	defer p2.Close()
	cpu0 = meter.sample(ctx)
	start = time.Now()
	if err := p2.Republish(ctx, guid, nil); err != nil {
		return err
	}
	pub2 := report("into another empty one", time.Since(start))
	fmt.Printf("  %s\n", perThousand(meter.sample(ctx).sub(cpu0), n))
	after, err := rawPuts(ctx, srv, sizes, bestC, "b")
	if err != nil {
		return err
	}
	fmt.Printf("MinIO plain PutObject loop, same sizes:    %.0f objects/s (concurrency %d, again)\n", after, bestC)
	cpu0 = meter.sample(ctx)
	start = time.Now()
	if err := p2.Republish(ctx, guid, nil); err != nil {
		return err
	}
	report("nothing changed", time.Since(start))
	fmt.Printf("  %s\n", perThousand(meter.sample(ctx).sub(cpu0), n))

	pub, raw := (pub1+pub2)/2, (best+after)/2
	fmt.Printf("republish %.0f objects/s / MinIO PUT %.0f objects/s (concurrency %d) = %.0f %%  (target >= 70 %%)\n",
		pub, raw, bestC, 100*pub/raw)
	return nil
}

// fill migrates the new database dbName and generates the instance in it.
func fill(ctx context.Context, admin *sqlx.DB, dsn, dbName string, items int) (string, error) {
	// Filling 10,000 items is 40,000 small transactions: commit them
	// without waiting for the disk. The measured republish runs with the
	// server's default again (a new pool after the RESET).
	if _, err := admin.ExecContext(ctx, "ALTER DATABASE "+dbName+" SET synchronous_commit = off"); err != nil {
		return "", err
	}
	db, err := openDB(dsn)
	if err != nil {
		return "", err
	}
	if _, err := schema.Migrate(ctx, db); err != nil {
		return "", err
	}
	start := time.Now()
	guid, err := generate(ctx, content.NewStore(db), items)
	db.Close()
	if err != nil {
		return "", fmt.Errorf("generate: %w", err)
	}
	fmt.Printf("generated instance %q: %d items x 2 locales in %v\n", guid, items, time.Since(start).Round(time.Second))
	if _, err := admin.ExecContext(ctx, "ALTER DATABASE "+dbName+" RESET synchronous_commit"); err != nil {
		return "", err
	}
	return guid, nil
}

// reused returns the guid of the one instance of a kept database.
func reused(ctx context.Context, dsn string) (string, error) {
	db, err := openDB(dsn)
	if err != nil {
		return "", err
	}
	defer db.Close()
	var guids []string
	if err := db.SelectContext(ctx, &guids, `SELECT guid FROM instances`); err != nil {
		return "", err
	}
	if len(guids) != 1 {
		return "", fmt.Errorf("database has %d instances, want 1", len(guids))
	}
	// Start as a fresh database would: nothing published yet.
	if _, err := db.ExecContext(ctx, `TRUNCATE objects, list_members, object_changes, event_confirmations`); err != nil {
		return "", err
	}
	return guids[0], nil
}

func withDatabase(serverURL, name string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

func openDB(dsn string) (*sqlx.DB, error) {
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	return db, db.Ping()
}

// rawPuts Puts objects of the given sizes into a new bucket with c
// goroutines and returns objects/s.
func rawPuts(ctx context.Context, srv *miniotest.Server, sizes []int, c int, run string) (float64, error) {
	tr, err := minio.DefaultTransport(false)
	if err != nil {
		return 0, err
	}
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 1024, 256
	client, err := minio.New(srv.Endpoint, &minio.Options{
		Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, ""), Transport: tr, BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		return 0, err
	}
	bucket := fmt.Sprintf("raw-%s-%d", run, c)
	if err := client.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		return 0, err
	}
	bodies := make([][]byte, len(sizes))
	for i, s := range sizes {
		bodies[i] = make([]byte, s)
		rand.Read(bodies[i])
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, c)
	start := time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(bodies) {
					return
				}
				_, err := client.PutObject(ctx, bucket, fmt.Sprintf("acme/fetch/en-us/item/%d/d1.json", i),
					bytes.NewReader(bodies[i]), int64(len(bodies[i])), minio.PutObjectOptions{ContentType: "application/json; charset=utf-8"})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	select {
	case err := <-errs:
		return 0, err
	default:
	}
	return float64(len(bodies)) / elapsed.Seconds(), nil
}

// The generated instance: categories and authors, products in a category,
// and posts by an author in a category with two related products; a page
// tree with components and a dynamic page over the categories.
const (
	nCategories = 200
	nAuthors    = 300
)

func generate(ctx context.Context, cs *content.Store, items int) (string, error) {
	guid := "bench" + hex.EncodeToString(randomBytes(3))
	inst, err := cs.CreateInstance(ctx, guid, []content.Locale{{Code: "en-us", Name: "English"}, {Code: "fr-ca", Name: "Français"}})
	if err != nil {
		return "", err
	}
	text := func(n string) content.Field { return content.Field{Name: n, Type: content.TypeText} }
	html := func(n string) content.Field { return content.Field{Name: n, Type: content.TypeHTML} }
	item := func(n, c string) content.Field { return content.Field{Name: n, Type: content.TypeItem, Container: c} }
	nPosts := (items - nCategories - nAuthors) * 6 / 10
	nProducts := items - nCategories - nAuthors - nPosts
	postContainers := 6
	type containerSpec struct {
		ref, model string
		n          int
	}
	models := []content.Model{
		{Name: "Category", Kind: "content", Fields: content.Fields{text("Title"), text("Slug"), text("Description")}},
		{Name: "Author", Kind: "content", Fields: content.Fields{text("Name"), text("Role"), html("Bio")}},
		{Name: "Product", Kind: "content", Fields: content.Fields{text("Title"), text("Slug"),
			{Name: "Price", Type: content.TypeDecimal, Shared: true}, html("Description"), item("Category", "categories")}},
		{Name: "Post", Kind: "content", Fields: content.Fields{text("Title"), text("Slug"), text("Excerpt"), html("Body"),
			{Name: "PostDate", Type: content.TypeDate}, item("Author", "authors"), item("Category", "categories"),
			{Name: "Related", Type: content.TypeList, Container: "products"}}},
		{Name: "Hero", Kind: "component", Fields: content.Fields{text("Heading"), html("Body")}},
	}
	specs := []containerSpec{{"categories", "Category", nCategories}, {"authors", "Author", nAuthors}, {"products", "Product", nProducts}}
	for i := range postContainers {
		n := nPosts / postContainers
		if i == 0 {
			n += nPosts % postContainers
		}
		specs = append(specs, containerSpec{fmt.Sprintf("posts%d", i), "Post", n})
	}
	for _, m := range models {
		if _, err := cs.CreateModel(ctx, inst, m); err != nil {
			return "", err
		}
		for _, s := range specs {
			if s.model == m.Name {
				if _, err := cs.CreateContainer(ctx, inst, s.ref, s.model); err != nil {
					return "", err
				}
			}
		}
	}
	if _, err := cs.CreatePageModel(ctx, inst, "Main", []string{"main"}); err != nil {
		return "", err
	}

	ids := map[string][]int64{}
	var mu sync.Mutex
	fill := func(s containerSpec) error {
		for i := range s.n {
			mu.Lock()
			f := fields(s.model, i, ids)
			mu.Unlock()
			st, err := cs.CreateItem(ctx, inst, "en-us", s.ref, f["en-us"])
			if err != nil {
				return err
			}
			if _, err := cs.SaveItem(ctx, inst, "fr-ca", st.ContentID, f["fr-ca"]); err != nil {
				return err
			}
			for _, l := range []string{"en-us", "fr-ca"} {
				if _, err := cs.ItemAction(ctx, inst, l, st.ContentID, content.ActionPublish); err != nil {
					return err
				}
			}
			mu.Lock()
			ids[s.ref] = append(ids[s.ref], st.ContentID)
			mu.Unlock()
		}
		return nil
	}
	// Categories and authors first (others link to them), then the rest
	// in parallel, one goroutine per container.
	for _, group := range [][]containerSpec{specs[:2], specs[2:]} {
		var wg sync.WaitGroup
		errs := make(chan error, len(group))
		for _, s := range group {
			wg.Add(1)
			go func() { defer wg.Done(); errs <- fill(s) }()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				return "", err
			}
		}
	}

	title := func(s string) *string { return &s }
	model := "Main"
	var home int64
	for i, p := range []struct {
		title string
		dyn   *content.Dynamic
	}{{"Home", nil}, {"Blog", nil}, {"Products", nil}, {"About", nil}, {"Contact", nil}, {"Categories", &content.Dynamic{ReferenceName: "categories", PathField: "Slug"}}} {
		in := content.PageInput{Title: title(p.title), PageModel: &model, Dynamic: p.dyn}
		if i > 0 {
			in.ParentPageID = json.RawMessage(fmt.Sprint(home))
		}
		pg, err := cs.CreatePage(ctx, inst, "en-us", in)
		if err != nil {
			return "", err
		}
		if i == 0 {
			home = pg.PageID
		}
		if _, err := cs.SavePage(ctx, inst, "fr-ca", pg.PageID, content.PageInput{Title: title(p.title + " (fr)")}); err != nil {
			return "", err
		}
		for _, l := range []string{"en-us", "fr-ca"} {
			if _, _, err := cs.AddComponent(ctx, inst, l, pg.PageID, "main", "Hero", map[string]json.RawMessage{
				"Heading": raw(p.title), "Body": raw(lorem(400))}); err != nil {
				return "", err
			}
			if _, err := cs.PageAction(ctx, inst, l, pg.PageID, content.ActionPublish); err != nil {
				return "", err
			}
		}
	}
	return guid, nil
}

// fields returns the field values of item i of a model in each locale.
func fields(model string, i int, ids map[string][]int64) map[string]map[string]json.RawMessage {
	out := map[string]map[string]json.RawMessage{}
	for _, l := range []string{"en-us", "fr-ca"} {
		f := map[string]json.RawMessage{}
		suffix := ""
		if l == "fr-ca" {
			suffix = " (fr)"
		}
		switch model {
		case "Category":
			f["Title"], f["Slug"], f["Description"] = raw(fmt.Sprintf("Category %d%s", i, suffix)), raw(fmt.Sprintf("category-%d", i)), raw(lorem(120))
		case "Author":
			f["Name"], f["Role"], f["Bio"] = raw(fmt.Sprintf("Author %d", i)), raw("Writer"+suffix), raw(lorem(300))
		case "Product":
			f["Title"], f["Slug"], f["Description"] = raw(fmt.Sprintf("Product %d%s", i, suffix)), raw(fmt.Sprintf("product-%d", i)), raw(lorem(600))
			f["Price"] = raw(float64(5+i%50) + 0.99)
			f["Category"] = raw(content.ItemLink{ContentID: pick(ids["categories"], i)})
		case "Post":
			f["Title"], f["Slug"], f["Excerpt"] = raw(fmt.Sprintf("Post %d%s", i, suffix)), raw(fmt.Sprintf("post-%d", i)), raw(lorem(160))
			f["Body"] = raw(lorem(1500))
			f["PostDate"] = raw(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour).Format(time.RFC3339))
			f["Author"] = raw(content.ItemLink{ContentID: pick(ids["authors"], i)})
			f["Category"] = raw(content.ItemLink{ContentID: pick(ids["categories"], i*7)})
			if rel := ids["products"]; len(rel) > 2 {
				a, b := rel[i%len(rel)], rel[(i+1)%len(rel)]
				f["Related"] = raw(content.ListLink{ContentIDs: []int64{a, b}})
			}
		}
		out[l] = f
	}
	return out
}

func pick(ids []int64, i int) int64 { return ids[i%len(ids)] }

func raw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

var words = strings.Fields("coffee roast bean origin cup brew light dark aroma crema grind filter espresso milk sugar water kettle " +
	"farm harvest sample taste note citrus chocolate berry caramel nut floral body acidity finish")

// lorem returns about n bytes of words.
func lorem(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[(i*7+n)%len(words)])
	}
	return b.String()
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	io.ReadFull(rand.Reader, b)
	return b
}

// cpuMeter reads the CPU time (user + system) spent by this process, the
// MinIO server and the Postgres backends of the scratch database, so that
// the report can say where the work went whatever else loads the machine.
type cpuMeter struct {
	admin    *sqlx.DB
	dbName   string
	minioPID int
}

// cpuSample is CPU time in seconds; machine is the busy time of all CPUs
// (other processes included), wall the time of the sample.
type cpuSample struct {
	self, minio, postgres, machine float64
	wall                           time.Time
}

func (a cpuSample) sub(b cpuSample) cpuSample {
	return cpuSample{a.self - b.self, a.minio - b.minio, a.postgres - b.postgres, a.machine - b.machine,
		time.Unix(0, int64(a.wall.Sub(b.wall)))}
}

func newCPUMeter(admin *sqlx.DB, dbName, endpoint string) *cpuMeter {
	m := &cpuMeter{admin: admin, dbName: dbName}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		cmd, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err == nil && strings.Contains(string(cmd), "minio") && strings.Contains(string(cmd), endpoint) {
			fmt.Sscan(d.Name(), &m.minioPID)
		}
	}
	return m
}

// pg backends may come and go; a sample sums those alive, so the pool
// keeps them (SetMaxIdleConns equals SetMaxOpenConns).
func (m *cpuMeter) sample(ctx context.Context) cpuSample {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	s := cpuSample{self: tv(ru.Utime) + tv(ru.Stime), minio: procCPU(m.minioPID), machine: machineCPU(), wall: time.Now()}
	var pids []int
	m.admin.SelectContext(ctx, &pids, `SELECT pid FROM pg_stat_activity WHERE datname = $1`, m.dbName)
	for _, pid := range pids {
		s.postgres += procCPU(pid)
	}
	return s
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// procCPU is utime + stime of a process from /proc/<pid>/stat, in seconds
// (clock ticks of 1/100 s, the Linux default).
func procCPU(pid int) float64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	var ut, st float64
	fmt.Sscan(f[11], &ut)
	fmt.Sscan(f[12], &st)
	return (ut + st) / 100
}

// machineCPU is the busy time of all CPUs from /proc/stat, in seconds.
func machineCPU() float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	busy := 0.0
	for i, v := range f[1:] {
		var x float64
		fmt.Sscan(v, &x)
		if i != 3 && i != 4 { // idle, iowait
			busy += x
		}
	}
	return busy / 100
}

// perThousand formats CPU seconds per 1000 objects, and how busy the
// machine's CPUs were meanwhile (all processes, in CPUs).
func perThousand(c cpuSample, n int) string {
	k := float64(n) / 1000
	secs := time.Duration(c.wall.UnixNano()).Seconds()
	return fmt.Sprintf("CPU s per 1000 objects: this process %.2f, MinIO %.2f, Postgres %.2f, total %.2f; machine %.2f (%.1f of %d CPUs busy)",
		c.self/k, c.minio/k, c.postgres/k, (c.self+c.minio+c.postgres)/k, c.machine/k, c.machine/secs, runtime.NumCPU())
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/edgecms/edgecms/admin"
	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/demo"
	"github.com/edgecms/edgecms/edge"
	"github.com/edgecms/edgecms/internal/guard"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/publisher"
	"github.com/edgecms/edgecms/render"
	"github.com/edgecms/edgecms/scheduler"
	"github.com/edgecms/edgecms/schema"
	"github.com/edgecms/edgecms/webhooks"
)

// openDB connects to Postgres and checks the connection.
func openDB(ctx context.Context, cfg config) (*sqlx.DB, error) {
	db, err := sqlx.Open("postgres", cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	db.SetConnMaxIdleTime(5 * time.Minute)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err = db.PingContext(pctx)
	var pe *pq.Error
	if errors.As(err, &pe) && pe.Code == "3D000" {
		// A fresh server: create the database the URL names, once.
		db.Close()
		if err := createDatabase(pctx, cfg.DatabaseURL); err != nil {
			return nil, err
		}
		return openDB(ctx, cfg)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to Postgres (DATABASE_URL): %w", err)
	}
	return db, nil
}

// createDatabase creates the database named in dsn, connecting to the
// server's postgres database to do so.
func createDatabase(ctx context.Context, dsn string) error {
	u, err := url.Parse(dsn)
	if err != nil {
		return err
	}
	name := strings.TrimPrefix(u.Path, "/")
	u.Path = "/postgres"
	admin, err := sqlx.Open("postgres", u.String())
	if err != nil {
		return err
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name)); err != nil {
		var pe *pq.Error
		if errors.As(err, &pe) && pe.Code == "42P04" { // created meanwhile by another process
			return nil
		}
		return fmt.Errorf("create database %q: %w", name, err)
	}
	return nil
}

// newContentStore is the content store on db, making asset URLs below the
// public URL (the origin and the publisher render the same bytes).
func newContentStore(db *sqlx.DB, cfg config) *content.Store {
	s := content.NewStore(db)
	s.PublicURL = cfg.PublicURL
	return s
}

// openMigrated connects and applies the schema.
func openMigrated(ctx context.Context, cfg config, log *slog.Logger) (*sqlx.DB, error) {
	db, err := openDB(ctx, cfg)
	if err != nil {
		return nil, err
	}
	n, err := schema.Migrate(ctx, db)
	if err != nil {
		db.Close()
		return nil, err
	}
	if n > 0 {
		log.Info("applied migrations", "count", n)
	}
	return db, nil
}

func runMigrate(ctx context.Context, cfg config, _ *flag.FlagSet, log *slog.Logger) error {
	db, err := openDB(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	n, err := schema.Migrate(ctx, db)
	if err != nil {
		return err
	}
	log.Info("schema up to date", "applied", n)
	return nil
}

func runOrigin(ctx context.Context, cfg config, _ *flag.FlagSet, log *slog.Logger) error {
	return runRoles(ctx, cfg, log, false)
}

func runServe(ctx context.Context, cfg config, _ *flag.FlagSet, log *slog.Logger) error {
	return runRoles(ctx, cfg, log, true)
}

// runRoles runs the origin and, for serve, the background roles, until ctx
// is cancelled; then it stops them in reverse order: HTTP first, then the
// workers, then the database.
func runRoles(ctx context.Context, cfg config, log *slog.Logger, all bool) error {
	log.Info("starting", "config", cfg)
	db, err := openMigrated(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer db.Close()
	store := newContentStore(db, cfg)
	wh, err := openWebhooks(db, cfg, log)
	if err != nil {
		return err
	}

	pub, err := newPublisher(ctx, cfg, store, log)
	if err != nil {
		return err
	}
	defer pub.Close()
	if all {
		// Before serve's edge lists the instances it knows.
		if err := pub.PublishAllKeys(ctx); err != nil {
			return err
		}
	}

	workers, stopWorkers := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	// Every origin runs a scheduler too, so that a deployment of separate
	// roles carries out scheduled publishes and trims its event log; any
	// number of schedulers may run (see package scheduler).
	wg.Add(1)
	go func() {
		defer wg.Done()
		scheduler.Run(workers, store, schedulerConfig(cfg), log.With("role", "scheduler"))
	}()
	if all {
		startDispatcher(workers, &wg, wh, cfg, true, log)
		wg.Add(1)
		go func() { defer wg.Done(); pub.Run(workers) }()
	} else {
		// The origin alone still stores the variants it renders on a miss.
		wg.Add(1)
		go func() { defer wg.Done(); pub.RunWriteBacks(workers) }()
	}
	defer func() { stopWorkers(); wg.Wait() }()

	// Uploaded assets go to the object store the publisher writes.
	assets, err := openObjectStore(ctx, cfg)
	if err != nil {
		return err
	}
	renderer := render.New(store)
	defer renderer.Close()
	ocfg := cfg.originConfig(renderer)
	ocfg.Webhooks, ocfg.WriteBack, ocfg.Assets = wh, pub.WriteBack, assets
	ocfg.Users = userStore(db, cfg)
	if all {
		// Behind serve's own edge the origin's one client is that edge.
		ocfg.Conns = guard.Options{MaxConns: cfg.Conns.MaxConns, MaxConnsPerAddr: -1}
	}
	ocfg.CORS = cfg.CORS
	ocfg.FeedListenURL = cfg.DatabaseURL
	// The secret openWebhooks read (or generated) also signs preview links.
	if ocfg.SecretKey, _, err = webhooks.LoadKey(cfg.SecretKey, secretKeyFile); err != nil {
		return err
	}
	srv := origin.New(ocfg, store, log.With("role", "origin"))
	wg.Add(1)
	go func() { defer wg.Done(); srv.Run(workers) }()
	errc := make(chan error, 2)
	var public server = srv
	var front *edge.Server
	adm := adminServer{collectors: srv.Collectors()}
	adm.database(db, true)
	adm.backlog(db)
	if all {
		// The edge is the one public address; the origin listens on an
		// internal loopback port behind it.
		if front, err = startFront(ctx, workers, &wg, cfg, srv, errc, log); err != nil {
			return err
		}
		public = front
		adm.checks = append(adm.checks, admin.Check{Name: "edge", Func: front.CheckReady})
		adm.collectors = append(adm.collectors, front.Collectors()...)
	}
	stopAdmin, err := adm.serve(cfg, log)
	if err != nil {
		return err
	}
	defer stopAdmin()
	go func() { errc <- listen(public, cfg, log) }()
	log.Info("the Studio", "url", studioURL(cfg))
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if front != nil {
		if err := front.Shutdown(sctx); err != nil {
			log.Warn("edge shutdown", "err", err)
		}
	}
	return srv.Shutdown(sctx)
}

// schedulerConfig is the scheduler's part of the configuration.
func schedulerConfig(cfg config) scheduler.Config {
	return scheduler.Config{MaintenanceInterval: cfg.MaintenanceInterval, EventRetention: cfg.EventRetention,
		SyncTombstoneRetention: cfg.SyncTombstoneRetention}
}

// newPublisher builds the publisher on the configured object store, with
// the CDN purger of the EDGECMS_PURGE_* settings (checked by loadConfig).
func newPublisher(ctx context.Context, cfg config, cs *content.Store, log *slog.Logger) (*publisher.Publisher, error) {
	st, err := openObjectStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	purger, err := publisher.NewPurger(cfg.PurgeMethod, cfg.PurgeURL, cfg.PurgeHeaders, cfg.PurgeBody, cfg.PurgeMaxTags)
	if err != nil {
		return nil, fmt.Errorf("EDGECMS_PURGE_*: %w", err)
	}
	maxVariants := cfg.MaxVariants
	if maxVariants == 0 {
		maxVariants = -1 // no cap
	}
	return publisher.New(publisher.Config{Store: st, DatabaseURL: cfg.DatabaseURL, Purger: purger,
		SnapshotBytes: cfg.PublishMemory, MaxVariants: maxVariants, ListPages: cfg.PublishListPages}, cs, log.With("role", "publisher")), nil
}

// runPublisher runs a publisher alone (any number may run).
func runPublisher(ctx context.Context, cfg config, _ *flag.FlagSet, log *slog.Logger) error {
	log.Info("starting publisher", "config", cfg)
	db, err := openMigrated(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer db.Close()
	pub, err := newPublisher(ctx, cfg, newContentStore(db, cfg), log)
	if err != nil {
		return err
	}
	defer pub.Close()
	var adm adminServer
	adm.database(db, false)
	adm.backlog(db)
	stopAdmin, err := adm.serve(cfg, log)
	if err != nil {
		return err
	}
	defer stopAdmin()
	return pub.Run(ctx)
}

// runRepublish renders every object of an instance again, with a progress
// bar on a terminal.
func runRepublish(ctx context.Context, cfg config, _ *flag.FlagSet, log *slog.Logger) error {
	pub, closePub, err := instancePublisher(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closePub()
	bar := newProgress(os.Stdout, "republish "+instanceArgs.guid)
	err = pub.Republish(ctx, instanceArgs.guid, bar.report)
	bar.finish()
	return err
}

func republishFlags(fs *flag.FlagSet) {
	fs.StringVar(&instanceArgs.guid, "guid", "", "guid of the instance to republish")
}

// progress shows how far a long job is: a bar redrawn in place when out is
// a terminal, a plain line every 10 % otherwise.
type progress struct {
	out   *os.File
	label string
	tty   bool
	start time.Time

	mu        sync.Mutex
	last      time.Time
	lastTenth int
	done      int
	total     int
	ended     bool // the bar's line is ended
}

func newProgress(out *os.File, label string) *progress {
	fi, err := out.Stat()
	return &progress{out: out, label: label, tty: err == nil && fi.Mode()&os.ModeCharDevice != 0, start: time.Now(), lastTenth: -1}
}

func (p *progress) report(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if done < p.done {
		return // reports of concurrent writers may arrive out of order
	}
	p.done, p.total = done, total
	now := time.Now()
	if p.tty {
		if done < total && now.Sub(p.last) < 100*time.Millisecond {
			return
		}
		p.last = now
		const width = 30
		filled := 0
		if total > 0 {
			filled = width * done / total
		}
		// \x1b[K clears what a longer line before left.
		fmt.Fprintf(p.out, "\r%s [%s%s] %d/%d %s\x1b[K", p.label, strings.Repeat("=", filled), strings.Repeat(" ", width-filled),
			done, total, p.rate(now))
		if done == total && !p.ended {
			p.ended = true
			fmt.Fprintln(p.out)
		}
		return
	}
	tenth := 10
	if total > 0 {
		tenth = 10 * done / total
	}
	if tenth > p.lastTenth {
		p.lastTenth = tenth
		fmt.Fprintf(p.out, "%s: %d/%d objects (%d%%) %s\n", p.label, done, total, tenth*10, p.rate(now))
	}
}

func (p *progress) rate(now time.Time) string {
	secs := now.Sub(p.start).Seconds()
	if secs <= 0 {
		return ""
	}
	return fmt.Sprintf("%.0f objects/s", float64(p.done)/secs)
}

// finish ends the bar's line.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && !p.ended {
		p.ended = true
		fmt.Fprintln(p.out)
	}
}

// instanceArgs are the flags of instance create and demo.
var instanceArgs struct {
	guid, locales string
}

func instanceFlags(fs *flag.FlagSet) {
	fs.StringVar(&instanceArgs.guid, "guid", "", "guid of the instance (letters, digits, hyphens)")
	fs.StringVar(&instanceArgs.locales, "locales", "en-us,fr-ca", "comma-separated locale codes; the first is the default")
}

// credentials is what instance create and demo print.
type credentials struct {
	Guid            string `json:"guid"`
	ManagementToken string `json:"managementToken"`
	FetchKey        string `json:"fetchKey"`
	PreviewKey      string `json:"previewKey"`
	// User is the demo's user, who signs in to the Studio (demo only).
	User *demoUser `json:"user,omitempty"`
}

func parseLocales(s string) ([]content.Locale, error) {
	var ls []content.Locale
	for _, code := range strings.Split(s, ",") {
		code = strings.TrimSpace(code)
		if code == "" {
			continue
		}
		ls = append(ls, content.Locale{Code: code, Name: localeName(code)})
	}
	if len(ls) == 0 {
		return nil, errors.New("--locales: at least one locale code is required")
	}
	return ls, nil
}

var localeNames = map[string]string{
	"en": "English", "fr": "Français", "de": "Deutsch", "es": "Español", "it": "Italiano", "nl": "Nederlands",
	"pt": "Português", "ja": "日本語", "zh": "中文",
}

func localeName(code string) string {
	lang, _, _ := strings.Cut(strings.ToLower(code), "-")
	if n, ok := localeNames[lang]; ok {
		return n + " (" + code + ")"
	}
	return code
}

// createInstance creates an instance with a full-control token and a fetch
// and a preview key.
func createInstance(ctx context.Context, store *content.Store, guid string, locales []content.Locale) (content.Instance, credentials, error) {
	inst, err := store.CreateInstance(ctx, guid, locales)
	if err != nil {
		return inst, credentials{}, err
	}
	creds, err := issueCredentials(ctx, store, inst)
	return inst, creds, err
}

func issueCredentials(ctx context.Context, store *content.Store, inst content.Instance) (credentials, error) {
	_, token, err := store.CreateToken(ctx, inst, "edgecms command line", content.RoleFull)
	if err != nil {
		return credentials{}, err
	}
	name := "default"
	_, fetchKey, err := store.CreateAPIKey(ctx, inst, content.APIKeyInput{Name: &name, Type: "fetch"})
	if err != nil {
		return credentials{}, err
	}
	_, previewKey, err := store.CreateAPIKey(ctx, inst, content.APIKeyInput{Name: &name, Type: "preview"})
	if err != nil {
		return credentials{}, err
	}
	return credentials{Guid: inst.Guid, ManagementToken: token, FetchKey: fetchKey, PreviewKey: previewKey}, nil
}

func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func runInstanceCreate(ctx context.Context, cfg config, _ *flag.FlagSet, log *slog.Logger) error {
	if instanceArgs.guid == "" {
		return errors.New("--guid is required")
	}
	locales, err := parseLocales(instanceArgs.locales)
	if err != nil {
		return err
	}
	db, err := openMigrated(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer db.Close()
	_, creds, err := createInstance(ctx, content.NewStore(db), instanceArgs.guid, locales)
	if err != nil {
		return err
	}
	return printJSON(creds)
}

func runDemo(ctx context.Context, cfg config, _ *flag.FlagSet, log *slog.Logger) error {
	if instanceArgs.guid == "" {
		return errors.New("--guid is required")
	}
	locales, err := parseLocales(instanceArgs.locales)
	if err != nil {
		return err
	}
	db, err := openMigrated(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer db.Close()
	store := content.NewStore(db)
	inst, err := store.Instance(ctx, instanceArgs.guid)
	var creds credentials
	switch {
	case problem.Is(err, problem.NotFound):
		inst, creds, err = createInstance(ctx, store, instanceArgs.guid, locales)
	case err == nil:
		// The instance exists: its old keys cannot be shown again, so issue new ones.
		creds, err = issueCredentials(ctx, store, inst)
	}
	if err != nil {
		return err
	}
	if err := demo.Fill(ctx, store, inst); err != nil {
		return fmt.Errorf("fill demo content: %w", err)
	}
	if creds.User, err = makeDemoUser(ctx, userStore(db, cfg), inst); err != nil {
		return fmt.Errorf("demo user: %w", err)
	}
	return printJSON(creds)
}

// runVerify compares every object of an instance in the store with a
// fresh render: it prints each object that differs, is missing or is extra,
// and fails (exit status 1) when there is any.
func runVerify(ctx context.Context, cfg config, _ *flag.FlagSet, log *slog.Logger) error {
	pub, closePub, err := instancePublisher(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closePub()
	return verify(ctx, pub, instanceArgs.guid, os.Stdout, os.Stderr)
}

// verify runs pub.Verify for guid with a progress bar on errOut, prints a
// line per mismatch on out (problem, key, request, detail; tab-separated),
// and returns an error that counts them when there are any.
func verify(ctx context.Context, pub *publisher.Publisher, guid string, out io.Writer, errOut *os.File) error {
	bar := newProgress(errOut, "verify "+guid)
	v, err := pub.Verify(ctx, guid, bar.report)
	bar.finish()
	if err != nil {
		return err
	}
	for _, m := range v.Mismatches {
		fmt.Fprintf(out, "%s\t%s\t%s\t%s\n", m.Problem, m.Key, m.Request, m.Detail)
	}
	if len(v.Mismatches) > 0 {
		return fmt.Errorf("%s: %d of %d objects differ, %d are missing, %d are extra", v.Guid,
			v.Count(publisher.Differs), v.Rendered, v.Count(publisher.Missing), v.Count(publisher.Extra))
	}
	fmt.Fprintf(errOut, "%s: the store holds the %d objects a fresh render writes, and nothing else\n", v.Guid, v.Stored)
	return nil
}

func verifyFlags(fs *flag.FlagSet) {
	fs.StringVar(&instanceArgs.guid, "guid", "", "guid of the instance to verify")
}

// instancePublisher opens the database and a publisher for a command on
// one instance (--guid, required): republish and verify.
func instancePublisher(ctx context.Context, cfg config, log *slog.Logger) (*publisher.Publisher, func(), error) {
	if instanceArgs.guid == "" {
		return nil, nil, errors.New("--guid is required")
	}
	db, err := openMigrated(ctx, cfg, log)
	if err != nil {
		return nil, nil, err
	}
	pub, err := newPublisher(ctx, cfg, newContentStore(db, cfg), log)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return pub, func() { pub.Close(); db.Close() }, nil
}

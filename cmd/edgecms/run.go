package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/demo"
	"github.com/edgecms/edgecms/edge"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/render"
	"github.com/edgecms/edgecms/scheduler"
	"github.com/edgecms/edgecms/schema"
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
	store := content.NewStore(db)
	wh, err := openWebhooks(db, cfg, log)
	if err != nil {
		return err
	}

	workers, stopWorkers := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	if all {
		wg.Add(1)
		go func() { defer wg.Done(); scheduler.Run(workers, store, time.Second, log.With("role", "scheduler")) }()
		startDispatcher(workers, &wg, wh, true, log)
	}
	defer func() { stopWorkers(); wg.Wait() }()

	srv := origin.New(origin.Config{FetchRateLimit: cfg.FetchRateLimit, Render: renderFunc(store), Webhooks: wh}, store, log.With("role", "origin"))
	wg.Add(1)
	go func() { defer wg.Done(); srv.Run(workers) }()
	errc := make(chan error, 2)
	public := srv.App()
	var front *edge.Server
	if all {
		// The edge is the one public address; the origin listens on an
		// internal loopback port behind it.
		if front, err = startFront(ctx, workers, &wg, cfg, srv, errc, log); err != nil {
			return err
		}
		public = front.App()
	}
	go func() { errc <- listen(public, cfg, log) }()
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

// renderFunc renders Fetch API answers from Postgres for the origin.
func renderFunc(store *content.Store) origin.RenderFunc {
	r := render.New(store)
	return func(ctx context.Context, req fetch.Request) ([]byte, []string, error) {
		site, err := render.LoadSite(ctx, store, req.Guid)
		if err != nil {
			return nil, nil, err
		}
		res, err := r.Render(ctx, site, req)
		return res.Body, res.Tags, err
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
	return printJSON(creds)
}

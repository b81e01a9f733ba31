// Package pgtest gives each test its own fresh, migrated Postgres database.
//
// Every test gets a clone (CREATE DATABASE x TEMPLATE y) of a template
// database, dropped when the test ends. The template is migrated once and
// shared by the test binaries that run at the same time (its name holds a
// hash of the migrations, so a schema change makes a new one). NewFrom adds
// templates that also hold a fixture too costly to build for each test (the
// plan checks' 100,000 items), built once and shared the same way.
//
// Names take a prefix from the database name of DATABASE_URL
// (<db>_test_<random>, <db>_tpl_<hash>[_<fixture>]), so that two checkouts
// that set different names can test against one server. The templates go
// at the end of the run: Run, called by a package's TestMain, leaves them
// to a process that waits for the go command that started the test binary
// to exit, then drops those no test binary uses. The server comes from
// DATABASE_URL, or the local default. Tests fail, never skip, when Postgres
// cannot be reached.
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq" // the Postgres driver

	"github.com/edgecms/edgecms/internal/pg"
	"github.com/edgecms/edgecms/schema"
)

// DefaultURL is the server used when DATABASE_URL is not set.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// reaperEnv, in the environment of a process Run started, is the pid of the
// go command whose end it waits for.
const reaperEnv = "EDGECMS_PGTEST_REAP_AFTER"

var (
	setupMu  sync.Mutex // held while a binary connects and migrates
	mu       sync.Mutex
	srv      *server
	setupErr error
	ready    = map[string]bool{} // templates this binary knows to exist (under mu)
)

// server is the test server as this binary uses it.
type server struct {
	prefix string
	base   string // the migrated template
	admin  *sqlx.DB
	// use holds the shared use lock of the templates for the binary's
	// life, so that no reaper drops them meanwhile.
	use *sqlx.Conn
}

// ServerURL returns the URL of the test server with the database name set to db.
func ServerURL(db string) (string, error) {
	u, err := serverURL()
	if err != nil {
		return "", err
	}
	u.Path = "/" + db
	return u.String(), nil
}

func serverURL() (*url.URL, error) {
	raw := os.Getenv("DATABASE_URL")
	if raw == "" {
		raw = DefaultURL
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	return u, nil
}

var notName = regexp.MustCompile(`[^a-z0-9_]+`)

// names returns the prefix of the test databases (DATABASE_URL's database
// name, made a plain identifier and short enough to leave room for the
// rest of a name) and the name of the migrated template.
func names() (prefix, base string, err error) {
	u, err := serverURL()
	if err != nil {
		return "", "", err
	}
	prefix = notName.ReplaceAllString(strings.ToLower(strings.TrimPrefix(u.Path, "/")), "_")
	if len(prefix) > 20 {
		prefix = prefix[:20]
	}
	if prefix == "" {
		prefix = "edgecms"
	}
	ms, err := schema.Migrations()
	if err != nil {
		return "", "", err
	}
	h := sha256.New()
	for _, m := range ms {
		h.Write([]byte(m.SQL))
	}
	return prefix, prefix + "_tpl_" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// admin opens the server's maintenance database, where the test databases
// are created and dropped and the locks between test binaries are taken.
func admin() (*sqlx.DB, error) {
	dsn, err := ServerURL("postgres")
	if err != nil {
		return nil, err
	}
	return sqlx.Open("postgres", dsn)
}

// setup connects this binary to the server and makes sure the migrated
// template exists.
func setup() (*server, error) {
	setupMu.Lock()
	defer setupMu.Unlock()
	mu.Lock()
	s, err := srv, setupErr
	mu.Unlock()
	if s != nil || err != nil {
		return s, err
	}
	err = func() error {
		prefix, base, err := names()
		if err != nil {
			return err
		}
		db, err := admin()
		if err != nil {
			return err
		}
		ctx := context.Background()
		use, err := db.Connx(ctx)
		if err != nil {
			db.Close()
			return fmt.Errorf("connect to test Postgres: %w", err)
		}
		// Waits while a reaper drops the templates; then none is dropped
		// until this binary ends.
		if _, err := use.ExecContext(ctx, `SELECT pg_advisory_lock_shared($1, hashtext($2))`, pg.LockTestUse, base); err != nil {
			use.Close()
			db.Close()
			return err
		}
		s = &server{prefix: prefix, base: base, admin: db, use: use}
		return nil
	}()
	if err == nil {
		err = s.ensure(s.base, "", func(dsn string) error {
			tdb, err := sqlx.Open("postgres", dsn)
			if err != nil {
				return err
			}
			defer tdb.Close()
			_, err = schema.Migrate(context.Background(), tdb)
			return err
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if s != nil {
		srv = s // Run closes it, even when the template failed
	}
	if err != nil {
		setupErr = err
		return nil, err
	}
	return s, nil
}

// ensure makes sure template name exists, building it when it does not:
// build fills a new database (a clone of from, or an empty one) at dsn,
// renamed to name once build returns nil. Test binaries that run at once
// build each template once: the others wait on the build lock (so do the
// binary's own tests, each on a connection of its own).
func (s *server) ensure(name, from string, build func(dsn string) error) error {
	mu.Lock()
	known := ready[name]
	mu.Unlock()
	if known {
		return nil
	}
	ctx := context.Background()
	conn, err := s.admin.Connx(ctx)
	if err != nil {
		return fmt.Errorf("connect to test Postgres: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1, hashtext($2))`, pg.LockTestBuild, name); err != nil {
		return err
	}
	defer conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1, hashtext($2))`, pg.LockTestBuild, name)
	var exists bool
	if err := conn.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name); err != nil {
		return err
	}
	if !exists {
		tmp := name + "_build"
		if _, err := conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+tmp+` WITH (FORCE)`); err != nil {
			return err
		}
		create := `CREATE DATABASE ` + tmp
		if from != "" {
			create += ` TEMPLATE ` + from
		}
		if _, err := conn.ExecContext(ctx, create); err != nil {
			return fmt.Errorf("create %s: %w", tmp, err)
		}
		dsn, err := ServerURL(tmp)
		if err != nil {
			return err
		}
		if err := build(dsn); err != nil {
			return fmt.Errorf("build template %s: %w", name, err)
		}
		if _, err := conn.ExecContext(ctx, `ALTER DATABASE `+tmp+` RENAME TO `+name); err != nil {
			return err
		}
	}
	mu.Lock()
	ready[name] = true
	mu.Unlock()
	return nil
}

// New returns a connection to a fresh migrated database, dropped at the end
// of the test, and its URL.
func New(t testing.TB) (*sqlx.DB, string) {
	t.Helper()
	s, err := setup()
	if err != nil {
		t.Fatalf("pgtest: prepare template database (is Postgres running? set DATABASE_URL): %v", err)
	}
	return s.clone(t, s.base)
}

// NewFrom returns a connection to a fresh database, dropped at the end of
// the test, that holds the fixture named fixture, and its URL. The first
// test of a run that asks for the fixture builds it: build fills a fresh
// migrated database (and must close what it opened on it), which becomes a
// template that every test cloning the fixture gets a copy of. fixture is
// a short name ([a-z0-9]) that changes whenever build changes what it
// makes.
func NewFrom(t testing.TB, fixture string, build func(t testing.TB, db *sqlx.DB)) (*sqlx.DB, string) {
	t.Helper()
	s, err := setup()
	if err != nil {
		t.Fatalf("pgtest: prepare template database (is Postgres running? set DATABASE_URL): %v", err)
	}
	name := s.base + "_" + fixture
	if err := s.ensure(name, s.base, func(dsn string) error {
		db, err := sqlx.Open("postgres", dsn)
		if err != nil {
			return err
		}
		defer db.Close()
		build(t, db)
		return nil
	}); err != nil {
		t.Fatalf("pgtest: fixture %s: %v", fixture, err)
	}
	return s.clone(t, name)
}

// clone creates a copy of template for t, dropped when t ends.
func (s *server) clone(t testing.TB, template string) (*sqlx.DB, string) {
	t.Helper()
	var b [6]byte
	rand.Read(b[:])
	name := s.prefix + "_test_" + hex.EncodeToString(b[:])
	if _, err := s.admin.Exec(`CREATE DATABASE ` + name + ` TEMPLATE ` + template); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	dsn, err := ServerURL(name)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		if _, err := s.admin.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`); err != nil {
			t.Logf("pgtest: drop %s: %v", name, err)
		}
	})
	return db, dsn
}

// Run runs the tests of m and returns their exit code, for TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }
//
// When the tests used a template, it then lets go of it and leaves its
// removal to a process of its own that waits for the end of the go command
// that ran this binary (the end of the test run), so that the packages of
// one run share the templates, and drops them if no test binary uses them
// then.
func Run(m *testing.M) int {
	if pid := os.Getenv(reaperEnv); pid != "" {
		reap(pid)
		return 0
	}
	code := m.Run()
	mu.Lock()
	s := srv
	mu.Unlock()
	if s != nil {
		s.use.Close()
		s.admin.Close() // ends the session, and so its use lock
		if err := startReaper(os.Getppid()); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: templates left on the server: %v\n", err)
		}
	}
	return code
}

// reap waits for the end of process pid (the go command), then drops the
// templates of this prefix and migrations hash, unless a test binary uses
// them. One reaper per go command waits; the others return at once.
func reap(pidText string) {
	var pid int
	if _, err := fmt.Sscan(pidText, &pid); err != nil {
		return
	}
	_, base, err := names()
	if err != nil {
		return
	}
	db, err := admin()
	if err != nil {
		return
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Connx(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	var mine bool
	if err := conn.GetContext(ctx, &mine, `SELECT pg_try_advisory_lock($1, $2)`, pg.LockTestReaper, pid); err != nil || !mine {
		return
	}
	waitExit(pid)
	var free bool
	if err := conn.GetContext(ctx, &free, `SELECT pg_try_advisory_lock($1, hashtext($2))`, pg.LockTestUse, base); err != nil || !free {
		return // a test binary of another run uses them: its reaper drops them
	}
	var dbs []string
	if err := conn.SelectContext(ctx, &dbs, `SELECT datname FROM pg_database WHERE datname = $1 OR starts_with(datname, $1 || '_')`, base); err != nil {
		return
	}
	for _, name := range dbs {
		conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
	}
}

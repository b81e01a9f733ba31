// Package pgtest gives each test its own fresh, migrated Postgres database.
//
// The first call in a test binary migrates a template database (named after a
// hash of the migrations, so a schema change makes a new one); every test then
// gets a clone of it (CREATE DATABASE x TEMPLATE y), dropped when the test
// ends. The server comes from DATABASE_URL, or the local default. Tests fail,
// never skip, when Postgres cannot be reached.
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq" // the Postgres driver

	"github.com/edgecms/edgecms/internal/pg"
	"github.com/edgecms/edgecms/schema"
)

// DefaultURL is the server used when DATABASE_URL is not set.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

var (
	once     sync.Once
	template string
	onceErr  error
)

// ServerURL returns the URL of the test server with the database name set to db.
func ServerURL(db string) (string, error) {
	raw := os.Getenv("DATABASE_URL")
	if raw == "" {
		raw = DefaultURL
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("DATABASE_URL: %w", err)
	}
	u.Path = "/" + db
	return u.String(), nil
}

func admin() (*sqlx.DB, error) {
	dsn, err := ServerURL("postgres")
	if err != nil {
		return nil, err
	}
	return sqlx.Open("postgres", dsn)
}

func prepareTemplate() (string, error) {
	ms, err := schema.Migrations()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, m := range ms {
		h.Write([]byte(m.SQL))
	}
	name := "edgecms_tmpl_" + hex.EncodeToString(h.Sum(nil))[:16]

	db, err := admin()
	if err != nil {
		return "", err
	}
	defer db.Close()
	ctx := context.Background()
	// Test binaries of several packages run at once: one of them builds the
	// template while the others wait on the lock.
	conn, err := db.Connx(ctx)
	if err != nil {
		return "", fmt.Errorf("connect to test Postgres: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, pg.LockTestTemplate); err != nil {
		return "", err
	}
	defer conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, pg.LockTestTemplate)
	var exists bool
	if err := conn.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	build := name + "_build"
	conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+build)
	if _, err := conn.ExecContext(ctx, `CREATE DATABASE `+build); err != nil {
		return "", err
	}
	dsn, err := ServerURL(build)
	if err != nil {
		return "", err
	}
	tdb, err := sqlx.Open("postgres", dsn)
	if err != nil {
		return "", err
	}
	_, err = schema.Migrate(ctx, tdb)
	tdb.Close()
	if err != nil {
		return "", err
	}
	if _, err := conn.ExecContext(ctx, `ALTER DATABASE `+build+` RENAME TO `+name); err != nil {
		return "", err
	}
	return name, nil
}

// New returns a connection to a fresh migrated database, dropped at the end
// of the test, and its URL.
func New(t testing.TB) (*sqlx.DB, string) {
	t.Helper()
	once.Do(func() { template, onceErr = prepareTemplate() })
	if onceErr != nil {
		t.Fatalf("pgtest: prepare template database (is Postgres running? set DATABASE_URL): %v", onceErr)
	}
	admin, err := admin()
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	rand.Read(b[:])
	name := "edgecms_test_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(`CREATE DATABASE ` + name + ` TEMPLATE ` + template); err != nil {
		admin.Close()
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
		if _, err := admin.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`); err != nil {
			t.Logf("pgtest: drop %s: %v", name, err)
		}
		admin.Close()
	})
	return db, dsn
}

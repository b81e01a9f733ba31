// Package schema holds edgecms's Postgres schema as numbered SQL migrations,
// embedded in the binary, and applies them.
//
// Migrations are files named NNN_description.sql, applied in order, each in
// its own transaction, and recorded in schema_migrations. Code never runs DDL
// at run time: every schema change is a new file here.
package schema

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/edgecms/edgecms/internal/pg"
	"github.com/jmoiron/sqlx"
)

//go:embed *.sql
var files embed.FS

// Migration is one numbered schema change.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the embedded migrations in order.
func Migrations() ([]Migration, error) {
	names, err := fs.Glob(files, "*.sql")
	if err != nil {
		return nil, err
	}
	var ms []Migration
	for _, name := range names {
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with a number and _", name)
		}
		body, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: name, SQL: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i := 1; i < len(ms); i++ {
		if ms[i].Version == ms[i-1].Version {
			return nil, fmt.Errorf("migrations %s and %s share a number", ms[i-1].Name, ms[i].Name)
		}
	}
	return ms, nil
}

// lockKey is the advisory lock that serialises concurrent migrators (several
// origins starting at once).
const lockKey = pg.LockMigrate

// Migrate applies every migration not yet applied and returns how many it
// applied.
func Migrate(ctx context.Context, db *sqlx.DB) (int, error) {
	ms, err := Migrations()
	if err != nil {
		return 0, err
	}
	conn, err := db.Connx(ctx)
	if err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, lockKey); err != nil {
		return 0, fmt.Errorf("migrate: lock: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lockKey)

	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY,
		name text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	var applied []int
	if err := conn.SelectContext(ctx, &applied, `SELECT version FROM schema_migrations`); err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	done := map[int]bool{}
	for _, v := range applied {
		done[v] = true
	}
	n := 0
	for _, m := range ms {
		if done[m.Version] {
			continue
		}
		tx, err := conn.BeginTxx(ctx, nil)
		if err != nil {
			return n, fmt.Errorf("migrate %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			tx.Rollback()
			return n, fmt.Errorf("migrate %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
			tx.Rollback()
			return n, fmt.Errorf("migrate %s: %w", m.Name, err)
		}
		if err := tx.Commit(); err != nil {
			return n, fmt.Errorf("migrate %s: %w", m.Name, err)
		}
		n++
	}
	return n, nil
}

// Pending returns how many embedded migrations the database lacks: 0 when
// its schema is current. A readiness probe calls it, so it only reads.
func Pending(ctx context.Context, db *sqlx.DB) (int, error) {
	ms, err := Migrations()
	if err != nil {
		return 0, err
	}
	var exists bool
	if err := db.GetContext(ctx, &exists, `SELECT to_regclass('schema_migrations') IS NOT NULL`); err != nil {
		return 0, fmt.Errorf("schema: %w", err)
	}
	if !exists {
		return len(ms), nil
	}
	var applied []int
	if err := db.SelectContext(ctx, &applied, `SELECT version FROM schema_migrations`); err != nil {
		return 0, fmt.Errorf("schema: %w", err)
	}
	done := map[int]bool{}
	for _, v := range applied {
		done[v] = true
	}
	n := 0
	for _, m := range ms {
		if !done[m.Version] {
			n++
		}
	}
	return n, nil
}

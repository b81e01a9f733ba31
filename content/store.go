package content

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/problem"
)

// Store is the Postgres repository of the content domain.
type Store struct {
	db *sqlx.DB
	// Now is the clock; tests replace it.
	Now func() time.Time
	// PublicURL is the URL that asset keys are served below
	// (EDGECMS_PUBLIC_URL): assets, galleries and the image values of
	// items are read with URLs made from it, and Readers made after it is
	// set render them so. Empty, URLs are root-relative paths (/{key}).
	PublicURL media.PublicURL
}

// NewStore returns a Store on db.
func NewStore(db *sqlx.DB) *Store {
	return &Store{db: db, Now: func() time.Time { return time.Now().UTC() }}
}

// DB returns the underlying database, for packages that keep their own
// tables beside the content (the publisher, the webhook dispatcher).
func (s *Store) DB() *sqlx.DB { return s.db }

func (s *Store) now() time.Time { return s.Now().UTC().Truncate(time.Microsecond) }

// Transact runs fn in a transaction, committing when fn returns nil and
// rolling back otherwise. Serialization failures are retried a few times.
func Transact(ctx context.Context, db *sqlx.DB, fn func(tx *sqlx.Tx) error) error {
	for attempt := 0; ; attempt++ {
		err := transactOnce(ctx, db, fn)
		if attempt < 3 && isRetryable(err) {
			continue
		}
		return err
	}
}

func transactOnce(ctx context.Context, db *sqlx.DB, fn func(tx *sqlx.Tx) error) (err error) {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			tx.Rollback()
			panic(p)
		}
		if err != nil {
			tx.Rollback()
		}
	}()
	if err = fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// eventWriterLock is the advisory lock every transaction that may write
// events holds (shared, so writers never wait for each other); readers of
// the event log use it to tell event writers from other transactions (see
// schema/005_event_horizon.sql).
const eventWriterLock = 7301968

// transact runs fn in a transaction that may write events.
// It records the change's actor and audit note from ctx (change.go).
func (s *Store) transact(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	err := Transact(ctx, s.db, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock_shared($1)`, eventWriterLock); err != nil {
			return err
		}
		if err := beginChange(ctx, tx); err != nil {
			return err
		}
		return fn(tx)
	})
	endChange(ctx, err)
	return err
}

// Postgres error codes the store classifies.
const (
	codeUniqueViolation      = "23505"
	codeForeignKeyViolation  = "23503"
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
)

func pqCode(err error) string {
	var pe *pq.Error
	if errors.As(err, &pe) {
		return string(pe.Code)
	}
	return ""
}

func isRetryable(err error) bool {
	c := pqCode(err)
	return c == codeSerializationFailure || c == codeDeadlockDetected
}

func isUniqueViolation(err error) bool { return pqCode(err) == codeUniqueViolation }

// notFound turns sql.ErrNoRows into a NotFound problem with the given detail.
func notFound(err error, format string, args ...any) error {
	if errors.Is(err, sql.ErrNoRows) {
		return problem.NotFoundf(format, args...)
	}
	return err
}

// checkAffected returns a NotFound problem when an update touched no row.
func checkAffected(res sql.Result, err error, format string, args ...any) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return problem.NotFoundf(format, args...)
	}
	return nil
}

// NotFound is notFound for the packages that keep their own tables beside
// the content (users): sql.ErrNoRows becomes a NotFound problem.
func NotFound(err error, format string, args ...any) error { return notFound(err, format, args...) }

// CheckAffected is checkAffected for those packages: a change that touched
// no row is a NotFound problem.
func CheckAffected(res sql.Result, err error, format string, args ...any) error {
	return checkAffected(res, err, format, args...)
}

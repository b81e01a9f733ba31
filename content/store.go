package content

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/eventlog"
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

// Events returns the event log the store's changes are appended to.
func (s *Store) Events() *eventlog.Log { return eventlog.New(s.db) }

func (s *Store) now() time.Time { return s.Now().UTC().Truncate(time.Microsecond) }

// transact runs fn in a transaction that may append events. It records
// the change's actor and audit note from ctx (change.go).
func (s *Store) transact(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	err := eventlog.Transact(ctx, s.db, func(tx *sqlx.Tx) error {
		if err := beginChange(ctx, tx); err != nil {
			return err
		}
		return fn(tx)
	})
	endChange(ctx, err)
	return err
}

// appendEvent writes e, a change of inst, to the event log inside the
// change's transaction.
func appendEvent(ctx context.Context, tx *sqlx.Tx, inst Instance, e eventlog.Event) error {
	e.InstanceID, e.InstanceGuid = inst.ID, inst.Guid
	return eventlog.Append(ctx, tx, e)
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

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

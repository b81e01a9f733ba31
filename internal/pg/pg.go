// Package pg holds what every Postgres repository of edgecms shares: one
// Transact helper (rollback on error and on panic, retries of serialization
// failures and deadlocks), the classification of driver errors by their
// SQLSTATE code, and the registry of advisory lock keys (locks.go). The
// repositories (content, eventlog, users, webhooks, publisher) keep their
// own SQL; this package knows no table.
package pg

import (
	"context"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Postgres error codes the repositories classify.
const (
	CodeUniqueViolation      = "23505"
	CodeForeignKeyViolation  = "23503"
	CodeSerializationFailure = "40001"
	CodeDeadlockDetected     = "40P01"
)

// Transact runs fn in a transaction, committing when fn returns nil and
// rolling back otherwise (also when fn panics). Serialization failures and
// deadlocks are retried a few times.
func Transact(ctx context.Context, db *sqlx.DB, fn func(tx *sqlx.Tx) error) error {
	for attempt := 0; ; attempt++ {
		err := transactOnce(ctx, db, fn)
		if attempt < 3 && IsRetryable(err) {
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

// Code returns the SQLSTATE code of a Postgres error in err's chain, or ""
// when there is none.
func Code(err error) string {
	var pe *pq.Error
	if errors.As(err, &pe) {
		return string(pe.Code)
	}
	return ""
}

// IsRetryable reports whether err is a serialization failure or a deadlock,
// which running the transaction again may not meet.
func IsRetryable(err error) bool {
	c := Code(err)
	return c == CodeSerializationFailure || c == CodeDeadlockDetected
}

// IsUniqueViolation reports whether err is a unique constraint violation.
func IsUniqueViolation(err error) bool { return Code(err) == CodeUniqueViolation }

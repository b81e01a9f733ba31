package publisher

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
)

const (
	// lagCursorSQL is the publishers' position in the event log.
	lagCursorSQL = `SELECT tx::text AS tx, id FROM event_cursors WHERE consumer = $1`
	// lagSQL counts the events past a position and tells how long the
	// oldest of them has waited. The position is passed as parameters,
	// not joined: a join scans the whole log (see content.ReadEvents).
	lagSQL = `SELECT count(*) AS events, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS seconds
		FROM events WHERE (tx, id) > ($1::xid8, $2)`
)

// Lag is how far the publishers are behind the event log: the events
// committed that no publisher has handled yet, and how long the oldest of
// them has waited. Both are 0 when the publishers are caught up. Metrics
// read it at every scrape, so that an alert sees a publisher that stopped.
func Lag(ctx context.Context, db *sqlx.DB) (events int64, seconds float64, err error) {
	pos := struct {
		Tx string `db:"tx"`
		ID int64  `db:"id"`
	}{Tx: "0"}
	if err := db.GetContext(ctx, &pos, lagCursorSQL, Consumer); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, 0, fmt.Errorf("publisher lag: %w", err)
	}
	var lag struct {
		Events  int64   `db:"events"`
		Seconds float64 `db:"seconds"`
	}
	if err := db.GetContext(ctx, &lag, lagSQL, pos.Tx, pos.ID); err != nil {
		return 0, 0, fmt.Errorf("publisher lag: %w", err)
	}
	return lag.Events, lag.Seconds, nil
}

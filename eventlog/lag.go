package eventlog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// lagSQL counts the events past a position and tells how long the oldest
// of them has waited. The position is passed as parameters, not joined: a
// join scans the whole log (see Read).
const lagSQL = `SELECT count(*) AS events, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS seconds
	FROM events WHERE (tx, id) > ($1::xid8, $2)`

// Lag is how far consumer is behind the log: the events committed that it
// has not read yet, and how long the oldest of them has waited; both 0
// when it is caught up. A consumer that never read counts the whole log.
// Metrics read it at every scrape, so that an alert sees a consumer that
// stopped.
func Lag(ctx context.Context, q sqlx.QueryerContext, consumer string) (events int64, seconds float64, err error) {
	var pos Position // a consumer that never read is at 0
	if err := sqlx.GetContext(ctx, q, &pos, cursorSQL, consumer); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, 0, fmt.Errorf("lag of %s: %w", consumer, err)
	}
	var lag struct {
		Events  int64   `db:"events"`
		Seconds float64 `db:"seconds"`
	}
	if err := sqlx.GetContext(ctx, q, &lag, lagSQL, pos.Tx, pos.ID); err != nil {
		return 0, 0, fmt.Errorf("lag of %s: %w", consumer, err)
	}
	return lag.Events, lag.Seconds, nil
}

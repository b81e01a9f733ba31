package webhooks

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// backlogSQL counts the deliveries waiting (queued, or waiting for a retry)
// and how long the oldest has been queued; the queue's partial index
// (webhook_deliveries_due) holds exactly these rows.
const backlogSQL = `SELECT count(*) AS depth, coalesce(extract(epoch FROM now() - min(queued_at)), 0)::float8 AS oldest
	FROM webhook_deliveries WHERE status IN ('queued', 'retrying')`

// Backlog is the webhook queue as metrics report it: how many deliveries
// wait, and the age in seconds of the one queued longest (0 when none
// waits).
func Backlog(ctx context.Context, db *sqlx.DB) (depth int64, oldest float64, err error) {
	var b struct {
		Depth  int64   `db:"depth"`
		Oldest float64 `db:"oldest"`
	}
	if err := db.GetContext(ctx, &b, backlogSQL); err != nil {
		return 0, 0, fmt.Errorf("webhook backlog: %w", err)
	}
	return b.Depth, b.Oldest, nil
}

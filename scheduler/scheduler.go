// Package scheduler carries out scheduled publishes and unpublishes when
// their time comes. Any number of schedulers may run against one database:
// each due copy is locked while it is handled.
package scheduler

import (
	"context"
	"log/slog"
	"time"

	"github.com/edgecms/edgecms/content"
)

// Run checks for due schedules every interval until ctx is cancelled.
func Run(ctx context.Context, store *content.Store, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := store.RunDueSchedules(ctx)
		if err != nil && ctx.Err() == nil {
			log.Error("scheduler", "err", err)
		} else if n > 0 {
			log.Info("scheduler ran due schedules", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

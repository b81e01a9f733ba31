// Package scheduler runs the content store's timed work: it carries out
// scheduled publishes and unpublishes when their time comes, and keeps the
// event log and the sync positions from growing without bound (it stamps
// sync positions so that the sync cursor keeps up, trims the events every
// consumer has read, and prunes old sync tombstones).
//
// Any number of schedulers may run against one database. Each due copy is
// locked while it is handled. The maintenance is claimed through
// maintenance_runs, so it runs about once per MaintenanceInterval whatever
// the number of schedulers, and its steps serialise on advisory locks
// should two rounds ever overlap.
package scheduler

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/syncstamp"
)

// Config says how often a scheduler works and how long the log keeps what.
// Zero members take the defaults.
type Config struct {
	// Interval is how often due schedules are checked (default 1 s).
	Interval time.Duration
	// MaintenanceInterval is how often, across all schedulers, the sync
	// positions are stamped, the event log trimmed and the sync tombstones
	// pruned (default 1 min).
	MaintenanceInterval time.Duration
	// EventRetention is how long events stay in the log after they
	// happened, even when every consumer has read them (default 24 h).
	EventRetention time.Duration
	// SyncTombstoneRetention is how long a deleted or unpublished copy
	// stays in the sync streams; a client whose token is older starts again
	// from 0 (default 90 days).
	SyncTombstoneRetention time.Duration
	// AuditRetention is how long the audit log keeps who did what
	// (default 365 days; never less than content.MinAuditRetention, 90
	// days, whatever the event log keeps).
	AuditRetention time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Defaults of Config.
const (
	DefaultInterval               = time.Second
	DefaultMaintenanceInterval    = time.Minute
	DefaultEventRetention         = 24 * time.Hour
	DefaultSyncTombstoneRetention = 90 * 24 * time.Hour
	DefaultAuditRetention         = 365 * 24 * time.Hour
)

func (c Config) withDefaults() Config {
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.MaintenanceInterval <= 0 {
		c.MaintenanceInterval = DefaultMaintenanceInterval
	}
	if c.EventRetention <= 0 {
		c.EventRetention = DefaultEventRetention
	}
	if c.SyncTombstoneRetention <= 0 {
		c.SyncTombstoneRetention = DefaultSyncTombstoneRetention
	}
	if c.AuditRetention <= 0 {
		c.AuditRetention = DefaultAuditRetention
	}
	c.AuditRetention = max(c.AuditRetention, content.MinAuditRetention)
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Run checks for due schedules every Interval and runs the maintenance
// every MaintenanceInterval until ctx is cancelled. Failures are logged and
// the next round tries again.
func Run(ctx context.Context, store *content.Store, cfg Config, log *slog.Logger) {
	cfg = cfg.withDefaults()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		every(ctx, cfg.Interval, func() { runDue(ctx, store, log) })
	}()
	// A long maintenance round (the first trim of a large log) must not
	// hold up scheduled publishes: it has its own loop.
	go func() {
		defer wg.Done()
		every(ctx, cfg.MaintenanceInterval, func() { Maintain(ctx, store, cfg, log) })
	}()
	wg.Wait()
}

// every calls fn now and then every d until ctx is cancelled.
func every(ctx context.Context, d time.Duration, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		fn()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func runDue(ctx context.Context, store *content.Store, log *slog.Logger) {
	n, err := store.RunDueSchedules(ctx)
	if err != nil && ctx.Err() == nil {
		log.Error("scheduler: run due schedules", "err", err)
	} else if n > 0 {
		log.Info("scheduler ran due schedules", "count", n)
	}
}

// maintenanceTask is the row of maintenance_runs the rounds claim.
const maintenanceTask = "events-and-sync"

// Maintain runs one maintenance round if no scheduler ran one in the last
// MaintenanceInterval: it stamps the sync positions (so that the sync
// cursor in the event log keeps up while nobody syncs), trims the events
// older than EventRetention that every consumer has read, and prunes the
// sync tombstones older than SyncTombstoneRetention. It logs what fails
// and goes on with the next step; it reports whether it ran.
func Maintain(ctx context.Context, store *content.Store, cfg Config, log *slog.Logger) bool {
	cfg = cfg.withDefaults()
	ok, err := store.Events().ClaimMaintenance(ctx, maintenanceTask, cfg.MaintenanceInterval)
	if err != nil {
		if ctx.Err() == nil {
			log.Error("scheduler: maintenance", "err", err)
		}
		return false
	}
	if !ok {
		return false // another scheduler ran it
	}
	logErr := func(step string, err error) {
		if err != nil && ctx.Err() == nil {
			log.Error("scheduler: maintenance", "step", step, "err", err)
		}
	}
	// The stamps take the content store's clock, as its changes do.
	stamper := syncstamp.New(store.DB())
	stamper.Now = store.Now
	stamped, err := stamper.Stamp(ctx)
	logErr("stamp sync positions", err)
	now := cfg.Now()
	trimmed, err := store.Events().Trim(ctx, now.Add(-cfg.EventRetention))
	logErr("trim events", err)
	pruned, err := stamper.Prune(ctx, now.Add(-cfg.SyncTombstoneRetention))
	logErr("prune sync tombstones", err)
	_, err = store.TrimAudit(ctx, now.Add(-cfg.AuditRetention), 10000)
	logErr("trim audit log", err)
	if stamped+int(trimmed)+int(pruned) > 0 {
		log.Info("scheduler: maintenance", "stamped", stamped, "trimmedEvents", trimmed, "prunedTombstones", pruned)
	}
	return true
}

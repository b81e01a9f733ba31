package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/edgecms/edgecms/admin"
	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/internal/buildinfo"
	"github.com/edgecms/edgecms/metrics"
	"github.com/edgecms/edgecms/publisher"
	"github.com/edgecms/edgecms/schema"
	"github.com/edgecms/edgecms/webhooks"
)

// runVersion prints the version and build information.
func runVersion(context.Context, config, *flag.FlagSet, *slog.Logger) error {
	_, err := fmt.Println(buildinfo.Read())
	return err
}

// healthArgs are the flags of the health command.
var healthArgs struct {
	ready bool
	addr  string
}

func healthFlags(fs *flag.FlagSet) {
	addr := admin.DefaultAddr
	if v, ok := os.LookupEnv("EDGECMS_ADMIN_ADDR"); ok {
		addr = v // an address, never a secret
	}
	fs.BoolVar(&healthArgs.ready, "ready", false, "probe /readyz (the role can do its job) instead of /livez (the process runs)")
	fs.StringVar(&healthArgs.addr, "admin-addr", addr, "admin address of the role to probe ($EDGECMS_ADMIN_ADDR)")
}

// runHealth probes the admin server of a running role.
func runHealth(ctx context.Context, _ config, _ *flag.FlagSet, _ *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := admin.Probe(ctx, healthArgs.addr, healthArgs.ready); err != nil {
		return err
	}
	fmt.Println("ok")
	return nil
}

// adminServer is what a role's admin address serves: its readiness checks
// and its scrape-time collectors.
type adminServer struct {
	checks     []admin.Check
	collectors []prometheus.Collector
}

// database adds the readiness check and pool gauge of db: it answers a
// query, and (when schemaCurrent) every migration is applied.
func (a *adminServer) database(db *sqlx.DB, schemaCurrent bool) {
	a.checks = append(a.checks, admin.Check{Name: "postgres", Func: func(ctx context.Context) error {
		if _, err := db.ExecContext(ctx, "SELECT 1"); err != nil {
			return err
		}
		if !schemaCurrent {
			return nil
		}
		n, err := schema.Pending(ctx, db)
		if err == nil && n > 0 {
			err = fmt.Errorf("%d migrations not applied (run edgecms migrate)", n)
		}
		return err
	}})
	a.collectors = append(a.collectors, collectors.NewDBStatsCollector(db.DB, "edgecms"))
}

// serve serves the admin address of cfg until the returned function is
// called.
func (a *adminServer) serve(cfg config, log *slog.Logger) (stop func(), err error) {
	reg, err := admin.NewRegistry(a.collectors...)
	if err != nil {
		return nil, err
	}
	stop, err = admin.Serve(cfg.AdminAddr, admin.Handler(a.checks, reg), log.With("role", "admin"))
	if err != nil && !cfg.adminAddrSet && errors.Is(err, syscall.EADDRINUSE) {
		// Several roles run on one host (a development machine, a test,
		// a benchmark) and another took the default: run without rather
		// than fail. A configured address must be served.
		log.Warn("the default admin address is in use (another edgecms on this host?): no /livez, /readyz or /metrics; set EDGECMS_ADMIN_ADDR for each process",
			"addr", cfg.AdminAddr)
		return func() {}, nil
	}
	return stop, err
}

// backlog adds the database-wide gauges of the event log and the webhook
// queue: publisher lag and webhook queue depth, from the start.
func (a *adminServer) backlog(db *sqlx.DB) {
	a.collectors = append(a.collectors,
		metrics.Gauge("publisher_lag_events", "Events committed that no publisher has handled yet (database-wide: every role connected to it reports the same).",
			func(ctx context.Context) (float64, error) {
				n, _, err := eventlog.Lag(ctx, db, publisher.Consumer)
				return float64(n), err
			}),
		metrics.Gauge("publisher_lag_seconds", "How long the oldest event no publisher has handled has waited (0 when caught up).",
			func(ctx context.Context) (float64, error) {
				_, s, err := eventlog.Lag(ctx, db, publisher.Consumer)
				return s, err
			}),
		metrics.Gauge("publisher_backlog_requests", "Objects the publisher's background lane has queued: list pages whose only change is their count, sitemaps and pages by path, which events are confirmed before (database-wide).",
			func(ctx context.Context) (float64, error) {
				n, err := publisher.Backlog(ctx, db)
				return float64(n), err
			}),
		metrics.Gauge("webhook_queue_depth", "Webhook deliveries queued or waiting for a retry (database-wide).",
			func(ctx context.Context) (float64, error) {
				n, _, err := webhooks.Backlog(ctx, db)
				return float64(n), err
			}),
		metrics.Gauge("webhook_queue_oldest_age_seconds", "Age of the webhook delivery queued longest (0 when none waits).",
			func(ctx context.Context) (float64, error) { _, s, err := webhooks.Backlog(ctx, db); return s, err }),
		metrics.Gauge("webhook_endpoints_paused", "Webhooks whose breaker is open: their attempts kept timing out, and their deliveries wait (database-wide).",
			func(ctx context.Context) (float64, error) {
				n, err := webhooks.PausedEndpoints(ctx, db)
				return float64(n), err
			}),
	)
}

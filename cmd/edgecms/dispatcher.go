package main

import (
	"context"
	"flag"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/webhooks"
	"github.com/edgecms/edgecms/webhooks/egress"
)

// secretKeyFile is where the key that encrypts webhook signing secrets is
// generated when EDGECMS_SECRET_KEY is not set.
var secretKeyFile = filepath.Join("data", "secret.key")

// openWebhooks builds the webhooks store: signing secrets encrypted with
// EDGECMS_SECRET_KEY (or a key generated into ./data/secret.key, with a
// warning), deliveries limited by EDGECMS_WEBHOOK_ALLOW_NETS.
func openWebhooks(db *sqlx.DB, cfg config, log *slog.Logger) (*webhooks.Store, error) {
	nets, err := egress.ParseAllowNets(cfg.WebhookAllowNets)
	if err != nil {
		return nil, err
	}
	key, generated, err := webhooks.LoadKey(cfg.SecretKey, secretKeyFile)
	if err != nil {
		return nil, err
	}
	if generated {
		log.Warn("EDGECMS_SECRET_KEY is not set: generated a key that encrypts webhook signing secrets; "+
			"keep it (losing it makes every signing secret unreadable) and give every origin and dispatcher "+
			"of this database the same key in EDGECMS_SECRET_KEY", "file", secretKeyFile)
	} else if cfg.SecretKey == "" {
		log.Info("webhook signing secrets are encrypted with the key in a file; set EDGECMS_SECRET_KEY in production", "file", secretKeyFile)
	}
	return webhooks.NewStore(db, cfg.Webhooks.storeOptions(webhooks.Options{Key: key, Policy: egress.NewPolicy(nets...), Timeout: cfg.WebhookTimeout}))
}

// startDispatcher runs a webhook dispatcher until ctx is cancelled. It
// listens for notifications on the database of cfg, so a change reaches
// the receivers without waiting for a poll.
func startDispatcher(ctx context.Context, wg *sync.WaitGroup, wh *webhooks.Store, cfg config, requireConfirmation bool, log *slog.Logger) {
	d := webhooks.NewDispatcher(wh, cfg.Webhooks.dispatcherConfig(webhooks.DispatcherConfig{RequireConfirmation: requireConfirmation, ListenURL: cfg.DatabaseURL}),
		log.With("role", "dispatcher"))
	wg.Add(1)
	go func() { defer wg.Done(); d.Run(ctx) }()
}

// dispatcherArgs are the flags of the dispatcher command.
var dispatcherArgs struct {
	requireConfirmation bool
}

func dispatcherFlags(fs *flag.FlagSet) {
	fs.BoolVar(&dispatcherArgs.requireConfirmation, "require-confirmation", true,
		"send Published and Deleted only after a publisher has confirmed the object store serves them (turn off when no publisher runs)")
}

// runDispatcher runs one webhook dispatcher until interrupted; any number
// may run against one database.
func runDispatcher(ctx context.Context, cfg config, _ *flag.FlagSet, log *slog.Logger) error {
	log.Info("starting", "config", cfg)
	db, err := openMigrated(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer db.Close()
	wh, err := openWebhooks(db, cfg, log)
	if err != nil {
		return err
	}
	var adm adminServer
	adm.database(db, false)
	adm.backlog(db)
	stopAdmin, err := adm.serve(cfg, log)
	if err != nil {
		return err
	}
	defer stopAdmin()
	var wg sync.WaitGroup
	startDispatcher(ctx, &wg, wh, cfg, dispatcherArgs.requireConfirmation, log)
	wg.Wait()
	return nil
}

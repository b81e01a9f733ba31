package publisher

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/internal/pg"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/store"
)

// keyDigestsSQL summarises every instance's keys, so that one query tells
// which manifests may be out of date.
const keyDigestsSQL = `SELECT i.guid, md5(coalesce(string_agg(
		encode(k.key_hash, 'hex') || k.type || coalesce(k.expires_at::text, '-') || k.enabled::text,
		',' ORDER BY k.id), '')) AS digest
	FROM instances i LEFT JOIN api_keys k ON k.instance_id = i.id GROUP BY i.guid`

// followKeys publishes the manifest of each instance whose keys change
// (named by a notification, or found by comparing digests every KeyPoll),
// and of every instance when it starts.
func (p *Publisher) followKeys(ctx context.Context, wake chan string) {
	t := time.NewTicker(p.cfg.KeyPoll)
	defer t.Stop()
	digests := map[string]string{}
	check := func() {
		var rows []struct {
			Guid   string `db:"guid"`
			Digest string `db:"digest"`
		}
		if err := p.db.SelectContext(ctx, &rows, keyDigestsSQL); err != nil {
			if ctx.Err() == nil {
				p.log.Warn("publisher: read key digests", "err", err)
			}
			return
		}
		for _, r := range rows {
			if digests[r.Guid] == r.Digest {
				continue
			}
			if err := p.PublishKeys(ctx, r.Guid); err != nil {
				if ctx.Err() == nil {
					p.log.Warn("publisher: publish key manifest", "guid", r.Guid, "err", err)
				}
				continue
			}
			digests[r.Guid] = r.Digest
		}
	}
	check()
	for {
		select {
		case <-ctx.Done():
			return
		case guid := <-wake:
			if guid == "" {
				check()
				continue
			}
			if err := p.PublishKeys(ctx, guid); err != nil && ctx.Err() == nil {
				p.log.Warn("publisher: publish key manifest", "guid", guid, "err", err)
				delete(digests, guid) // the next check retries
			}
		case <-t.C:
			check()
		}
	}
}

// PublishAllKeys writes the key manifest of every instance as the
// database has it now. serve calls it before it listens: its edge refuses
// keys of instances it has no manifest of (so that made-up guids never reach
// Postgres), and a key made before the start, like the demo's, must work
// from the first request rather than once the publisher's own start-up
// catches up.
func (p *Publisher) PublishAllKeys(ctx context.Context) error {
	var guids []string
	if err := p.db.SelectContext(ctx, &guids, `SELECT guid FROM instances ORDER BY guid`); err != nil {
		return fmt.Errorf("list instances: %w", err)
	}
	for _, g := range guids {
		if err := p.PublishKeys(ctx, g); err != nil {
			return err
		}
	}
	return nil
}

// PublishKeys writes instance guid's key manifest as the database has it
// now (or deletes it when the instance is gone), lists it in the change
// feed and flushes the feed. Writers of one manifest are serialised, and
// each reads the keys under the lock, so the last write is the newest.
func (p *Publisher) PublishKeys(ctx context.Context, guid string) error {
	key := delivery.ManifestKey(guid)
	if store.CheckKey(key) != nil {
		return nil // not a guid
	}
	changed := false
	err := pg.Transact(ctx, p.db, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, manifestSpace, guid); err != nil {
			return err
		}
		inst, err := p.content.Instance(ctx, guid)
		if problem.Is(err, problem.NotFound) {
			if _, err := p.store.Stat(ctx, key); err == nil {
				changed = true
				if err := p.store.Delete(ctx, key); err != nil {
					return err
				}
			}
			return p.recordChange(ctx, tx, changed, key)
		}
		if err != nil {
			return err
		}
		keys, err := p.content.APIKeys(ctx, inst)
		if err != nil {
			return err
		}
		m := delivery.Manifest{Guid: inst.Guid, Keys: make([]delivery.ManifestEntry, len(keys))}
		for i, k := range keys {
			m.Keys[i] = delivery.ManifestEntry{Hash: hex.EncodeToString(k.Hash), Type: k.Type, Enabled: k.Enabled}
			if k.ExpiresAt != nil {
				at := k.ExpiresAt.UTC()
				m.Keys[i].ExpiresAt = &at
			}
		}
		body, err := json.Marshal(m)
		if err != nil {
			return err
		}
		changed, err = p.store.Put(ctx, store.Object{Key: key, Body: body, ContentType: delivery.ContentType, CacheControl: delivery.NoStore})
		if err != nil {
			return err
		}
		return p.recordChange(ctx, tx, changed, key)
	})
	if err != nil {
		return fmt.Errorf("publish key manifest of %s: %w", guid, err)
	}
	if changed {
		return p.flushNow(ctx)
	}
	return nil
}

func (p *Publisher) recordChange(ctx context.Context, tx *sqlx.Tx, changed bool, key string) error {
	if !changed {
		return nil
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO object_changes (key) VALUES ($1)`, key)
	return err
}

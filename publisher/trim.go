package publisher

import (
	"context"
	"fmt"
	"time"

	"github.com/edgecms/edgecms/internal/pg"
	"github.com/jmoiron/sqlx"
)

// Retention of the publisher's tables. Every publisher trims them once a
// minute (maintain, part of Run, so a deployment of separate roles trims
// wherever a publisher runs): a few index lookups when there is nothing to
// delete, so it is not claimed like the scheduler's maintenance. Each step
// deletes in batches of trimBatch rows, each in its own transaction under
// the trim lock, so that several publishers take turns and no batch holds
// row locks for long.
//
//   - object_changes: the rows with a feed position below the FeedSize
//     latest positions. The feed lists the latest FeedSize positions, and
//     positions only grow, so no feed will list them again; edges read
//     nothing else (one that missed changes drops its whole cache). Rows
//     without a position wait for the next flush and are kept.
//   - event_confirmations: the rows whose event was trimmed from the event
//     log and that no event parked in webhook_awaiting waits for.
//   - objects: tombstones older than a day.

// maintainEvery is how often a publisher trims its tables.
const maintainEvery = time.Minute

// trimBatch is how many rows one transaction of a trim deletes.
var trimBatch = 5000

// maintain trims the publisher's tables every maintainEvery until ctx is
// cancelled. Failures are logged; the next round tries again.
func (p *Publisher) maintain(ctx context.Context) {
	t := time.NewTicker(maintainEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.trim(ctx)
		}
	}
}

// trim runs each step of the retention once, logging what fails and going
// on with the next step.
func (p *Publisher) trim(ctx context.Context) {
	logErr := func(err error) {
		if err != nil && ctx.Err() == nil {
			p.log.Warn("publisher: trim", "err", err)
		}
	}
	changes, err := p.trimChanges(ctx)
	logErr(err)
	confirmations, err := p.trimConfirmations(ctx)
	logErr(err)
	tombstones, err := p.trimTombstones(ctx)
	logErr(err)
	if changes+confirmations+tombstones > 0 {
		p.log.Info("publisher: trimmed", "changes", changes, "confirmations", confirmations, "tombstones", tombstones)
	}
}

// trimChangesSQL deletes up to $2 of the changes whose position is below
// the $1+1-th latest one (none when fewer are positioned). Positions have
// gaps (a flush that failed drew some), so the bound is found by counting
// rows, not subtracted from the latest position.
const trimChangesSQL = `WITH old AS (
		SELECT seq FROM object_changes
		WHERE pos < (SELECT pos FROM object_changes WHERE pos IS NOT NULL ORDER BY pos DESC OFFSET $1 LIMIT 1)
		ORDER BY pos LIMIT $2)
	DELETE FROM object_changes o USING old WHERE o.seq = old.seq`

// trimChanges deletes the changes no feed can list again: those with a
// position below the latest FeedSize positions. It returns how many it
// deleted.
func (p *Publisher) trimChanges(ctx context.Context) (int64, error) {
	n, err := p.trimBatches(ctx, trimChangesSQL, p.cfg.FeedSize-1)
	if err != nil {
		return n, fmt.Errorf("trim changes: %w", err)
	}
	return n, nil
}

// trimConfirmationsSQL deletes up to $1 of the confirmations of events
// gone from the log that no parked event waits for.
//
// A confirmation is read only by the webhook dispatcher's promotion of
// parked events (webhook_awaiting), and an event is parked by the
// dispatcher's intake, in the transaction that moves its cursor past it.
// The log drops an event only once every cursor is past it, so once the
// event is gone its parking, if any, is committed and visible here: a
// confirmation that no parked event waits for then has no reader left. A
// dispatcher that gave up waiting (its confirmation timeout) has removed
// the parked event, and its confirmation goes too.
//
// The log is trimmed oldest first, so the events gone are (but for a few
// whose transactions overlapped) those below the oldest event left; only
// those are looked at, so that a round with nothing to delete does not
// scan the whole table. A confirmation of an event gone above the oldest
// left waits until the events below it go.
const trimConfirmationsSQL = `WITH old AS (
		SELECT c.event_id FROM event_confirmations c
		WHERE c.event_id < (SELECT coalesce(min(id), 9223372036854775807) FROM events)
		  AND NOT EXISTS (SELECT 1 FROM webhook_awaiting a WHERE a.event_id = c.event_id)
		ORDER BY c.event_id LIMIT $1)
	DELETE FROM event_confirmations c USING old WHERE c.event_id = old.event_id`

// trimConfirmations deletes the confirmations nobody can read any more and
// returns how many it deleted.
func (p *Publisher) trimConfirmations(ctx context.Context) (int64, error) {
	n, err := p.trimBatches(ctx, trimConfirmationsSQL)
	if err != nil {
		return n, fmt.Errorf("trim confirmations: %w", err)
	}
	return n, nil
}

// trimTombstonesSQL deletes up to $1 tombstones older than a day. The rows
// are locked, skipping those a chunk holds, so a tombstone that a chunk
// brings back to life meanwhile (its etag set) is not deleted.
const trimTombstonesSQL = `WITH old AS (
		SELECT key FROM objects WHERE etag IS NULL AND updated_at < now() - interval '1 day'
		ORDER BY updated_at LIMIT $1 FOR UPDATE SKIP LOCKED)
	DELETE FROM objects o USING old WHERE o.key = old.key`

// trimTombstones deletes the tombstones older than a day (an older render
// may then bring the object back; a day is far longer than any render
// runs) and returns how many it deleted.
func (p *Publisher) trimTombstones(ctx context.Context) (int64, error) {
	n, err := p.trimBatches(ctx, trimTombstonesSQL)
	if err != nil {
		return n, fmt.Errorf("trim tombstones: %w", err)
	}
	return n, nil
}

// trimBatches runs query, whose last parameter is the batch size and
// which follows args, in transactions under the trim lock until a batch
// deletes fewer than trimBatch rows. It returns how many rows it deleted.
func (p *Publisher) trimBatches(ctx context.Context, query string, args ...any) (int64, error) {
	args = append(args, trimBatch)
	var total int64
	for {
		var n int64
		err := pg.Transact(ctx, p.db, func(tx *sqlx.Tx) error {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, lockSpace, trimLock); err != nil {
				return fmt.Errorf("lock: %w", err)
			}
			res, err := tx.ExecContext(ctx, query, args...)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		if err != nil {
			return total, err
		}
		total += n
		if n < int64(trimBatch) {
			return total, nil
		}
	}
}

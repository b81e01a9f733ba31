package source

import (
	"context"
	"fmt"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/eventlog"
	"github.com/lib/pq"
)

// SyncChange is one entry of a sync stream (the changes of one subject, in
// one locale and flavour, of an instance): an item or page copy at the
// position of its latest change.
type SyncChange struct {
	// ID is the contentID or the pageID.
	ID int64
	// Position is the change's sync token: a client that has read this
	// change continues after it.
	Position int64
	// Visible is false for a tombstone: the copy is deleted (or, in the
	// fetch flavour, not published any more).
	Visible bool
	// Stamped is when the change got its position.
	Stamped time.Time
}

const syncChangesSQL = `SELECT object_id, position, visible, stamped_at FROM sync_changes
	WHERE instance_id = $1 AND flavour = $2 AND locale = $3 AND subject = $4
	  AND position > CASE WHEN $5::bigint < coalesce((SELECT floor FROM sync_floors
			WHERE instance_id = $1 AND flavour = $2 AND locale = $3 AND subject = $4), 0) THEN 0 ELSE $5::bigint END
	ORDER BY position LIMIT $6`

// SyncChanges stamps what the event log holds that sync has not seen yet
// (syncstamp.Stamper.Stamp) and returns up to limit changes of the stream of
// subject (SubjectItem or SubjectPage) in locale and flavour fl after token
// after, oldest first. A token older than a tombstone pruned from the
// stream (syncstamp.Stamper.Prune) reads from the beginning, as a full resync.
func (r *Reader) SyncChanges(ctx context.Context, inst content.Instance, locale string, fl Flavour, subject eventlog.Subject, after int64, limit int) ([]SyncChange, error) {
	if _, err := fl.pick("", ""); err != nil {
		return nil, err
	}
	if _, err := r.stamper.StampPending(ctx); err != nil {
		return nil, err
	}
	rows, err := r.query(ctx, syncChangesSQL, inst.ID, string(fl), locale, string(subject), after, limit)
	if err != nil {
		return nil, fmt.Errorf("read sync changes: %w", err)
	}
	defer rows.Close()
	var out []SyncChange
	for rows.Next() {
		var c SyncChange
		if err := rows.Scan(&c.ID, &c.Position, &c.Visible, &c.Stamped); err != nil {
			return nil, fmt.Errorf("read sync changes: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read sync changes: %w", err)
	}
	return out, nil
}

const (
	pageVersionsWhere      = ` WHERE p.instance_id = $1 AND p.page_id = ANY($3)`
	pageVersionsOrder      = ` ORDER BY p.page_id`
	fetchPageVersionsSQL   = pageVersionHead + pageFetchCols + pageVersionFrom + pageVersionsWhere + pageFetchSeen + pageVersionsOrder
	previewPageVersionsSQL = pageVersionHead + pagePreviewCols + pageVersionFrom + pageVersionsWhere + pagePreviewSeen + pageVersionsOrder
)

// PageVersions loads the copies in locale, visible in flavour fl, of the
// pages pageIDs, ordered by pageID. Pages that do not exist, have no copy
// in locale or are not visible are left out.
func (r *Reader) PageVersions(ctx context.Context, inst content.Instance, locale string, fl Flavour, pageIDs []int64) ([]PageVersion, error) {
	q, err := fl.pick(fetchPageVersionsSQL, previewPageVersionsSQL)
	if err != nil || len(pageIDs) == 0 {
		return nil, err
	}
	ps, err := r.scanPageVersions(ctx, q, inst.ID, locale, pq.Array(pageIDs))
	if err != nil {
		return nil, fmt.Errorf("load pages: %w", err)
	}
	return ps, nil
}

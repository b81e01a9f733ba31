// Package syncstamp gives the Fetch API's sync endpoints (sync/items,
// sync/pages) their tokens: it turns the changes in the event log (package
// eventlog) into positions in sync_changes, one stamper at a time, so that a
// sync token never skips a change. The readers (package render/source) stamp
// before they read; the scheduler stamps and prunes old tombstones in its
// maintenance rounds. content/README.md explains the design.
package syncstamp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/internal/pg"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// This file gives the Fetch API's sync endpoints (sync/items, sync/pages)
// their tokens.
//
// A sync token is a position in sync_changes: every item or page copy that a
// stream (instance, flavour, locale, subject) has shown has one row there,
// at the position of its latest change. A client at token T asks for the
// rows above T, oldest first, and moves its token to the last one it got.
//
// Positions must never be handed out in a way that lets a change appear
// below a token already given: if a writer took position 10 inside its
// transaction and another writer took 11 and committed first, a reader at
// 11 would never see 10. So writers take no positions; they only append to
// the event log. One stamper at a time (a transaction holding the advisory
// lock syncLockKey) reads the events that have committed and it has not
// stamped yet, and gives the copies they name new positions from the
// sequence sync_positions. A position is taken only after the change
// committed, and stampers run one after the other, each committing before
// the next starts: every position a later stamper gives is larger than any
// a reader could have seen, so a token never skips a change. Readers stamp
// first (cheap when nothing is pending), so a change is in the sync
// streams as soon as it commits.
//
// The stamper keeps a cursor in the event log ("sync" in event_cursors)
// that only passes rows of transactions that have ended (the log's rule,
// see eventlog.Read); rows after it that committed while an older transaction
// was still running, and are stamped already, wait in sync_stamped until
// the cursor passes them. eventlog.Log.Trim keeps every row after the cursor.
//
// A row moves only when what the Fetch API shows of the copy changes: its
// fingerprint (published version and item order for fetch; state, version
// and item order for preview; plus the page type for pages) or its
// visibility. When a copy appears or disappears in a flavour, the copies of
// that locale whose unexpanded form shows it (an item linking to it, a page
// holding it as a component) move too, since the Fetch API leaves links to
// invisible items out.
//
// Tokens are positions in Postgres, so they survive restarts, and trimming
// the event log never loses them. The first stamp of a database seeds every
// copy from the tables (events trimmed before sync was first used are not
// needed). Prune deletes old tombstones; a token below the largest
// position it pruned from its stream is answered as a full resync from 0.

// syncConsumer is the stamper's cursor in event_cursors.
const syncConsumer = "sync"

// syncLockKey is the advisory lock a stamper (or Prune) holds for its
// transaction.
const syncLockKey = pg.LockSyncStamp

// syncBatch is how many events one stamper transaction reads.
const syncBatch = 500

// Stamper stamps the sync positions of a database.
type Stamper struct {
	db *sqlx.DB
	// Now is the clock of the stamps; tests replace it.
	Now func() time.Time
}

// New returns a Stamper on db.
func New(db *sqlx.DB) *Stamper { return &Stamper{db: db, Now: time.Now} }

// Stamp gives the changes in the event log that committed since the
// last stamp their sync positions, moves the stamper's cursor in the log as
// far as the transactions before it have ended, and returns how many
// events it stamped. The sync endpoints stamp before every read; a process
// may also call Stamp periodically so that the event log can be trimmed
// while nobody syncs (the sync cursor holds the rows it has not passed).
func (s *Stamper) Stamp(ctx context.Context) (int, error) {
	return stampSync(ctx, s.db, s.Now, true)
}

// StampPending is Stamp for readers: it first checks, without the lock,
// whether anything is pending, so that a read costs one cheap query when
// nothing changed.
func (s *Stamper) StampPending(ctx context.Context) (int, error) {
	return stampSync(ctx, s.db, s.Now, false)
}

const (
	// syncPendingSQL is true when sync was never seeded or an event after
	// the cursor is not stamped (and has committed: the row is visible).
	syncPendingSQL = `SELECT NOT EXISTS (SELECT 1 FROM event_cursors WHERE consumer = $1)
		OR EXISTS (SELECT 1 FROM events e, event_cursors c
			WHERE c.consumer = $1 AND (e.tx, e.id) > (c.tx, c.id)
			  AND NOT EXISTS (SELECT 1 FROM sync_stamped d WHERE d.tx = e.tx AND d.event_id = e.id))`
	syncLockSQL   = `SELECT pg_advisory_xact_lock($1)`
	syncCursorSQL = `SELECT tx, id FROM event_cursors WHERE consumer = $1`
	// unstampedEventsSQL reads the committed events after the cursor that
	// are not stamped, in log order.
	unstampedEventsSQL = `SELECT e.id, e.tx, e.instance_id, e.instance_guid, e.state, e.subject, e.locale,
			e.reference_name, e.content_id, e.page_id, e.version_id, e.change_date, e.created_at
		FROM events e
		WHERE (e.tx, e.id) > ($1::xid8, $2)
		  AND NOT EXISTS (SELECT 1 FROM sync_stamped d WHERE d.tx = e.tx AND d.event_id = e.id)
		ORDER BY e.tx, e.id LIMIT $3`
	markStampedSQL = `INSERT INTO sync_stamped (tx, event_id)
		SELECT * FROM unnest($1::xid8[], $2::bigint[]) ON CONFLICT DO NOTHING`
	// settledEndSQL finds how far the cursor may move: to the last event
	// before both the first event not stamped and the event horizon (the
	// oldest transaction of this database that may still write events,
	// schema/006), so that every event it passes is stamped or was rolled
	// back. The horizon, as the log's readers use it, ignores transactions
	// of other databases of the server and those that cannot write events:
	// a long transaction elsewhere must not stop the stamps. One statement,
	// one snapshot.
	settledEndSQL = `WITH l AS (
			SELECT e.tx, e.id FROM events e
			WHERE (e.tx, e.id) > ($1::xid8, $2)
			  AND NOT EXISTS (SELECT 1 FROM sync_stamped d WHERE d.tx = e.tx AND d.event_id = e.id)
			ORDER BY e.tx, e.id LIMIT 1)
		SELECT e.tx, e.id FROM events e
		WHERE (e.tx, e.id) > ($1::xid8, $2) AND e.tx < (SELECT edgecms_event_horizon())
		  AND NOT EXISTS (SELECT 1 FROM l WHERE (e.tx, e.id) >= (l.tx, l.id))
		ORDER BY e.tx DESC, e.id DESC LIMIT 1`
	moveSyncCursorSQL = `UPDATE event_cursors SET tx = $2::xid8, id = $3, updated_at = now() WHERE consumer = $1`
	forgetStampedSQL  = `DELETE FROM sync_stamped WHERE (tx, event_id) <= ($1::xid8, $2)`
)

// stampSync stamps until nothing committed is left unstamped. Unless force
// is set, it first checks without the lock whether anything is pending.
func stampSync(ctx context.Context, db *sqlx.DB, now func() time.Time, force bool) (int, error) {
	pending := force
	if !pending {
		if err := db.GetContext(ctx, &pending, syncPendingSQL, syncConsumer); err != nil {
			return 0, fmt.Errorf("stamp sync: %w", err)
		}
	}
	total := 0
	for pending {
		n := 0
		err := pg.Transact(ctx, db, func(tx *sqlx.Tx) error {
			var err error
			n, pending, err = stampOnce(ctx, tx, now().UTC().Truncate(time.Microsecond))
			return err
		})
		if err != nil {
			return total, fmt.Errorf("stamp sync: %w", err)
		}
		total += n
	}
	return total, nil
}

// stampOnce stamps one batch of events under the lock (or seeds the
// positions when sync was never used), moves the cursor, and reports
// whether more may wait.
func stampOnce(ctx context.Context, tx *sqlx.Tx, now time.Time) (int, bool, error) {
	if _, err := tx.ExecContext(ctx, syncLockSQL, syncLockKey); err != nil {
		return 0, false, err
	}
	var cur eventlog.Position
	err := tx.QueryRowxContext(ctx, syncCursorSQL, syncConsumer).Scan(&cur.Tx, &cur.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, true, seedSync(ctx, tx, now)
	}
	if err != nil {
		return 0, false, err
	}
	evs := []eventlog.Event{}
	if err := tx.SelectContext(ctx, &evs, unstampedEventsSQL, cur.Tx, cur.ID, syncBatch); err != nil {
		return 0, false, fmt.Errorf("read events: %w", err)
	}
	if len(evs) > 0 {
		if err := stampEvents(ctx, tx, evs, now); err != nil {
			return 0, false, err
		}
		txs, ids := make([]string, len(evs)), make([]int64, len(evs))
		for i, e := range evs {
			txs[i], ids[i] = e.Tx.String(), e.ID
		}
		if _, err := tx.ExecContext(ctx, markStampedSQL, pq.Array(txs), pq.Array(ids)); err != nil {
			return 0, false, fmt.Errorf("mark events stamped: %w", err)
		}
	}
	var end eventlog.Position
	err = tx.QueryRowxContext(ctx, settledEndSQL, cur.Tx, cur.ID).Scan(&end.Tx, &end.ID)
	switch {
	case errors.Is(err, sql.ErrNoRows): // the cursor stays
	case err != nil:
		return 0, false, fmt.Errorf("find the settled end of the log: %w", err)
	default:
		if _, err := tx.ExecContext(ctx, moveSyncCursorSQL, syncConsumer, end.Tx, end.ID); err != nil {
			return 0, false, fmt.Errorf("move the sync cursor: %w", err)
		}
		if _, err := tx.ExecContext(ctx, forgetStampedSQL, end.Tx, end.ID); err != nil {
			return 0, false, fmt.Errorf("move the sync cursor: %w", err)
		}
	}
	return len(evs), len(evs) == syncBatch, nil
}

// Seeding: the cursor starts at the end of the log as far as it is
// settled (every transaction before it has ended), and every visible copy
// gets a position, oldest change first. The tables are read after the end
// is taken, so they hold at least every change before it; changes after it
// are stamped from the log (those already seeded move nothing).
const (
	seedCursorSQL = `INSERT INTO event_cursors (consumer, tx, id)
		SELECT $1, coalesce(max(tx), '0'), 0 FROM events WHERE tx < (SELECT edgecms_event_horizon())
		ON CONFLICT (consumer) DO NOTHING`
	seedUpsert = ` ON CONFLICT (instance_id, flavour, locale, subject, object_id) DO UPDATE
		SET position = excluded.position, visible = true, fingerprint = excluded.fingerprint, stamped_at = excluded.stamped_at
		WHERE sync_changes.fingerprint <> excluded.fingerprint`
	seedItemsSQL = `INSERT INTO sync_changes (instance_id, flavour, locale, subject, object_id, position, visible, fingerprint, stamped_at)
		SELECT instance_id, flavour, locale, 'item', content_id, nextval('sync_positions'), true, fingerprint, $1
		FROM (SELECT ic.instance_id, f.flavour, ic.locale, ic.content_id,
				` + itemFingerprintSQL + ` AS fingerprint,
				CASE f.flavour WHEN 'fetch' THEN ic.published_modified ELSE ic.modified END AS changed
			FROM item_copies ic JOIN items i ON i.content_id = ic.content_id
			CROSS JOIN (VALUES ('fetch'), ('preview')) AS f(flavour)
			WHERE ` + itemVisibleSQL + `
			ORDER BY changed, ic.instance_id, ic.content_id, ic.locale, f.flavour) AS s` + seedUpsert
	seedPagesSQL = `INSERT INTO sync_changes (instance_id, flavour, locale, subject, object_id, position, visible, fingerprint, stamped_at)
		SELECT instance_id, flavour, locale, 'page', page_id, nextval('sync_positions'), true, fingerprint, $1
		FROM (SELECT pc.instance_id, f.flavour, pc.locale, pc.page_id,
				` + pageFingerprintSQL + ` AS fingerprint,
				CASE f.flavour WHEN 'fetch' THEN pc.published_modified ELSE pc.modified END AS changed
			FROM page_copies pc JOIN pages p ON p.page_id = pc.page_id
			CROSS JOIN (VALUES ('fetch'), ('preview')) AS f(flavour)
			WHERE ` + pageVisibleSQL + `
			ORDER BY changed, pc.instance_id, pc.page_id, pc.locale, f.flavour) AS s` + seedUpsert
	// A reseed (after the cursor was removed) also buries what is gone.
	seedTombstonesSQL = `UPDATE sync_changes sc SET position = nextval('sync_positions'), visible = false,
			fingerprint = '-', stamped_at = $1
		WHERE sc.visible AND NOT EXISTS (
			SELECT 1 FROM item_copies ic WHERE sc.subject = 'item' AND ic.content_id = sc.object_id AND ic.locale = sc.locale
				AND CASE sc.flavour WHEN 'fetch' THEN ic.published_version_id IS NOT NULL ELSE ic.state <> 3 END
			UNION ALL
			SELECT 1 FROM page_copies pc WHERE sc.subject = 'page' AND pc.page_id = sc.object_id AND pc.locale = sc.locale
				AND CASE sc.flavour WHEN 'fetch' THEN pc.published_version_id IS NOT NULL ELSE pc.state <> 3 END)`
)

// What a flavour shows of a copy: whether it is visible (f.flavour names
// the flavour), and its fingerprint, '-' when it is not visible.
const (
	itemVisibleSQL     = `CASE f.flavour WHEN 'fetch' THEN ic.published_version_id IS NOT NULL ELSE ic.state <> 3 END`
	itemFingerprintSQL = `CASE f.flavour
			WHEN 'fetch' THEN coalesce(ic.published_version_id::text || ':' || i.item_order, '-')
			ELSE CASE WHEN ic.state <> 3 THEN ic.state || ':' || ic.version_id || ':' || i.item_order ELSE '-' END END`
	pageVisibleSQL     = `CASE f.flavour WHEN 'fetch' THEN pc.published_version_id IS NOT NULL ELSE pc.state <> 3 END`
	pageFingerprintSQL = `CASE f.flavour
			WHEN 'fetch' THEN coalesce(pc.published_version_id::text || ':' || p.page_type, '-')
			ELSE CASE WHEN pc.state <> 3 THEN pc.state || ':' || pc.version_id || ':' || p.page_type ELSE '-' END END`
)

func seedSync(ctx context.Context, tx *sqlx.Tx, now time.Time) error {
	if _, err := tx.ExecContext(ctx, seedCursorSQL, syncConsumer); err != nil {
		return fmt.Errorf("seed sync cursor: %w", err)
	}
	var reseed bool
	if err := tx.GetContext(ctx, &reseed, `SELECT EXISTS (SELECT 1 FROM sync_changes)`); err != nil {
		return fmt.Errorf("seed sync positions: %w", err)
	}
	qs := []string{seedItemsSQL, seedPagesSQL}
	if reseed {
		qs = append(qs, seedTombstonesSQL)
	}
	for _, q := range qs {
		if _, err := tx.ExecContext(ctx, q, now); err != nil {
			return fmt.Errorf("seed sync positions: %w", err)
		}
	}
	// The table was (nearly) empty when last analyzed: without fresh
	// statistics the planner looks rows up by the wrong index until
	// autovacuum comes by.
	if _, err := tx.ExecContext(ctx, `ANALYZE sync_changes`); err != nil {
		return fmt.Errorf("analyze sync positions: %w", err)
	}
	return nil
}

// syncKey names one row of sync_changes.
type syncKey struct {
	inst    int64
	flavour string
	locale  string
	subject eventlog.Subject
	id      int64
}

// syncState is what a flavour shows of a copy now, and what its row says.
type syncState struct {
	key            syncKey
	visible        bool
	fingerprint    string
	known          bool // it has a row
	wasVisible     bool
	oldFingerprint string
}

const (
	// itemStatesSQL reads the state of item copies $1 (instances), $2
	// (locales), $3 (contentIDs) in both flavours.
	itemStatesSQL = `SELECT t.inst, f.flavour, ic.locale, t.id,
			` + itemVisibleSQL + ` AS visible, ` + itemFingerprintSQL + ` AS fingerprint,
			sc.position IS NOT NULL AS known, coalesce(sc.visible, false) AS was_visible,
			coalesce(sc.fingerprint, '') AS old_fingerprint
		FROM unnest($1::bigint[], $2::text[], $3::bigint[]) AS t(inst, locale, id)
		CROSS JOIN LATERAL (SELECT i.instance_id, i.item_order FROM items i WHERE i.content_id = t.id LIMIT 1) AS i
		CROSS JOIN LATERAL (SELECT * FROM item_copies ic WHERE ic.content_id = t.id AND ic.locale = t.locale LIMIT 1) AS ic
		CROSS JOIN (VALUES ('fetch'), ('preview')) AS f(flavour)
		LEFT JOIN LATERAL (SELECT sc.position, sc.visible, sc.fingerprint FROM sync_changes sc
			WHERE sc.instance_id = t.inst AND sc.flavour = f.flavour AND sc.locale = ic.locale
			  AND sc.subject = 'item' AND sc.object_id = t.id LIMIT 1) AS sc ON true
		WHERE i.instance_id = t.inst`
	// pageStatesSQL reads the state of every copy of pages $1 (instances),
	// $2 (pageIDs) in both flavours.
	pageStatesSQL = `SELECT t.inst, f.flavour, pc.locale, t.id,
			` + pageVisibleSQL + ` AS visible, ` + pageFingerprintSQL + ` AS fingerprint,
			sc.position IS NOT NULL AS known, coalesce(sc.visible, false) AS was_visible,
			coalesce(sc.fingerprint, '') AS old_fingerprint
		FROM unnest($1::bigint[], $2::bigint[]) AS t(inst, id)
		JOIN pages p ON p.page_id = t.id AND p.instance_id = t.inst
		JOIN page_copies pc ON pc.page_id = t.id
		CROSS JOIN (VALUES ('fetch'), ('preview')) AS f(flavour)
		LEFT JOIN sync_changes sc ON sc.instance_id = t.inst AND sc.flavour = f.flavour AND sc.locale = pc.locale
			AND sc.subject = 'page' AND sc.object_id = t.id`
	// containerCopiesSQL lists the items of a container that have a copy
	// in a locale: a reorder changes their itemOrder.
	containerCopiesSQL = `SELECT i.content_id FROM containers c
		JOIN items i ON i.container_id = c.id
		JOIN item_copies ic ON ic.content_id = i.content_id AND ic.locale = $3
		WHERE c.instance_id = $1 AND lower(c.reference_name) = lower($2)
		ORDER BY i.content_id`
	// Copies whose unexpanded form shows one of the items $3 of instance
	// $1 in locale $2: items that link to them (found through the GIN
	// indexes item_copies_links and item_copies_published_links, whose
	// expression this must repeat), pages that hold them (through
	// page_copies_components and page_copies_published_components). Each
	// item is looked up in the index on its own, and the instance, locale
	// and flavour are checked on the copies found (OFFSET 0 keeps the
	// planner from checking them first, by reading every copy of the
	// locale): the cost is the number of copies that show the item.
	linkingItemsSQL = `SELECT DISTINCT ic.content_id FROM unnest($3::bigint[]) AS t(id)
		CROSS JOIN LATERAL (SELECT ic.content_id, ic.instance_id, ic.locale, %[2]s AS seen FROM item_copies ic
			WHERE (jsonb_path_query_array(%[1]s, '$.*.contentID')
				|| jsonb_path_query_array(%[1]s, '$.*.contentIDs[*]')) @> jsonb_build_array(t.id)
			OFFSET 0) AS ic
		WHERE ic.instance_id = $1 AND ic.locale = $2 AND ic.seen
		ORDER BY ic.content_id`
	holdingPagesSQL = `SELECT DISTINCT pc.page_id FROM unnest($3::bigint[]) AS t(id)
		CROSS JOIN LATERAL (SELECT pc.page_id, pc.instance_id, pc.locale, %[2]s AS seen FROM page_copies pc
			WHERE jsonb_path_query_array(%[1]s, '$.*[*]') @> jsonb_build_array(t.id)
			OFFSET 0) AS pc
		WHERE pc.instance_id = $1 AND pc.locale = $2 AND pc.seen
		ORDER BY pc.page_id`
	nextPositionsSQL = `SELECT n FROM (SELECT nextval('sync_positions') AS n FROM generate_series(1, $1)) AS s ORDER BY n`
	upsertSyncSQL    = `INSERT INTO sync_changes (instance_id, flavour, locale, subject, object_id, position, visible, fingerprint, stamped_at)
		SELECT t.*, $9::timestamptz FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::boolean[], $8::text[]) AS t
		ON CONFLICT (instance_id, flavour, locale, subject, object_id) DO UPDATE
		SET position = excluded.position, visible = excluded.visible, fingerprint = excluded.fingerprint, stamped_at = excluded.stamped_at`
)

var (
	fetchLinkingItemsSQL   = fmt.Sprintf(linkingItemsSQL, "ic.published_fields", "ic.published_version_id IS NOT NULL")
	previewLinkingItemsSQL = fmt.Sprintf(linkingItemsSQL, "ic.fields", "ic.state <> 3")
	fetchHoldingPagesSQL   = fmt.Sprintf(holdingPagesSQL, "pc.published_zones", "pc.published_version_id IS NOT NULL")
	previewHoldingPagesSQL = fmt.Sprintf(holdingPagesSQL, "pc.zones", "pc.state <> 3")
)

// itemRef names an item copy, pageRef every copy of a page.
type (
	itemRef struct {
		inst   int64
		locale string
		id     int64
	}
	pageRef struct{ inst, id int64 }
)

// stamper collects the rows one batch of events moves, in the order of the
// events.
type stamper struct {
	ctx    context.Context
	tx     *sqlx.Tx
	order  []syncKey
	writes map[syncKey]syncState
}

func (st *stamper) write(s syncState) {
	if _, ok := st.writes[s.key]; !ok {
		st.order = append(st.order, s.key)
	}
	st.writes[s.key] = s
}

// stampEvents gives the copies evs name (and the copies that show them)
// new positions where what the Fetch API shows of them changed.
func stampEvents(ctx context.Context, tx *sqlx.Tx, evs []eventlog.Event, now time.Time) error {
	st := &stamper{ctx: ctx, tx: tx, writes: map[syncKey]syncState{}}
	var items []itemRef
	var pages []pageRef
	seenItem, seenPage := map[itemRef]bool{}, map[pageRef]bool{}
	addItem := func(r itemRef) {
		if !seenItem[r] {
			seenItem[r] = true
			items = append(items, r)
		}
	}
	for _, e := range evs {
		switch e.Subject {
		case eventlog.SubjectItem:
			if e.Locale != nil && e.ContentID != nil {
				addItem(itemRef{e.InstanceID, *e.Locale, *e.ContentID})
			}
		case eventlog.SubjectPage:
			// A save may change the page type, which every locale shows.
			if r := (pageRef{e.InstanceID, deref(e.PageID)}); e.PageID != nil && !seenPage[r] {
				seenPage[r] = true
				pages = append(pages, r)
			}
		case eventlog.SubjectList:
			// A reorder: every item of the container shows a new itemOrder.
			if e.Locale == nil || e.ReferenceName == nil {
				continue // not a container (a gallery)
			}
			var ids []int64
			if err := tx.SelectContext(ctx, &ids, containerCopiesSQL, e.InstanceID, *e.ReferenceName, *e.Locale); err != nil {
				return fmt.Errorf("items of container %q: %w", *e.ReferenceName, err)
			}
			for _, id := range ids {
				addItem(itemRef{e.InstanceID, *e.Locale, id})
			}
		}
	}
	states, err := st.states(items, pages)
	if err != nil {
		return err
	}
	// Appearances and disappearances, per stream, for the copies that show them.
	flips := map[syncKey][]int64{} // keyed by stream without the subject
	for _, s := range states {
		if s.known && s.fingerprint == s.oldFingerprint {
			continue
		}
		if !s.known && !s.visible {
			continue // never shown, nothing to bury
		}
		st.write(s)
		if s.key.subject == eventlog.SubjectItem && s.visible != s.wasVisible {
			k := syncKey{inst: s.key.inst, flavour: s.key.flavour, locale: s.key.locale}
			flips[k] = append(flips[k], s.key.id)
		}
	}
	if err := st.dependents(flips); err != nil {
		return err
	}
	return st.flush(now)
}

// states reads the current state of item copies and of every copy of
// pages, in both flavours, in the order asked (items first), each copy's
// fetch flavour before its preview.
func (st *stamper) states(items []itemRef, pages []pageRef) ([]syncState, error) {
	var out []syncState
	if len(items) > 0 {
		rank := map[itemRef]int{}
		insts, locales, ids := make([]int64, len(items)), make([]string, len(items)), make([]int64, len(items))
		for i, r := range items {
			insts[i], locales[i], ids[i] = r.inst, r.locale, r.id
			rank[r] = i
		}
		got, err := st.scanStates(eventlog.SubjectItem, itemStatesSQL, pq.Array(insts), pq.Array(locales), pq.Array(ids))
		if err != nil {
			return nil, fmt.Errorf("read item states: %w", err)
		}
		sort.Slice(got, func(i, j int) bool {
			a, b := got[i].key, got[j].key
			ra, rb := rank[itemRef{a.inst, a.locale, a.id}], rank[itemRef{b.inst, b.locale, b.id}]
			if ra != rb {
				return ra < rb
			}
			return a.flavour < b.flavour
		})
		out = append(out, got...)
	}
	if len(pages) > 0 {
		rank := map[pageRef]int{}
		insts, ids := make([]int64, len(pages)), make([]int64, len(pages))
		for i, r := range pages {
			insts[i], ids[i] = r.inst, r.id
			rank[r] = i
		}
		got, err := st.scanStates(eventlog.SubjectPage, pageStatesSQL, pq.Array(insts), pq.Array(ids))
		if err != nil {
			return nil, fmt.Errorf("read page states: %w", err)
		}
		sort.Slice(got, func(i, j int) bool {
			a, b := got[i].key, got[j].key
			if ra, rb := rank[pageRef{a.inst, a.id}], rank[pageRef{b.inst, b.id}]; ra != rb {
				return ra < rb
			}
			if a.locale != b.locale {
				return a.locale < b.locale
			}
			return a.flavour < b.flavour
		})
		out = append(out, got...)
	}
	return out, nil
}

func (st *stamper) scanStates(subject eventlog.Subject, q string, args ...any) ([]syncState, error) {
	rows, err := st.tx.QueryContext(st.ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []syncState
	for rows.Next() {
		s := syncState{key: syncKey{subject: subject}}
		if err := rows.Scan(&s.key.inst, &s.key.flavour, &s.key.locale, &s.key.id,
			&s.visible, &s.fingerprint, &s.known, &s.wasVisible, &s.oldFingerprint); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// dependents moves the copies whose unexpanded form shows an item that
// appeared or disappeared in their stream: the Fetch API leaves links to
// invisible items out of items, and invisible components out of zones.
func (st *stamper) dependents(flips map[syncKey][]int64) error {
	keys := make([]syncKey, 0, len(flips))
	for k := range flips {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.inst != b.inst {
			return a.inst < b.inst
		}
		if a.locale != b.locale {
			return a.locale < b.locale
		}
		return a.flavour < b.flavour
	})
	for _, k := range keys {
		itemsQ, pagesQ := fetchLinkingItemsSQL, fetchHoldingPagesSQL
		if k.flavour == "preview" {
			itemsQ, pagesQ = previewLinkingItemsSQL, previewHoldingPagesSQL
		}
		var itemIDs, pageIDs []int64
		if err := st.tx.SelectContext(st.ctx, &itemIDs, itemsQ, k.inst, k.locale, pq.Array(flips[k])); err != nil {
			return fmt.Errorf("items linking to changed items: %w", err)
		}
		if err := st.tx.SelectContext(st.ctx, &pageIDs, pagesQ, k.inst, k.locale, pq.Array(flips[k])); err != nil {
			return fmt.Errorf("pages holding changed components: %w", err)
		}
		items := make([]itemRef, len(itemIDs))
		for i, id := range itemIDs {
			items[i] = itemRef{k.inst, k.locale, id}
		}
		pages := make([]pageRef, len(pageIDs))
		for i, id := range pageIDs {
			pages[i] = pageRef{k.inst, id}
		}
		states, err := st.states(items, pages)
		if err != nil {
			return err
		}
		for _, s := range states {
			if s.key.flavour == k.flavour && s.key.locale == k.locale && s.visible {
				st.write(s)
			}
		}
	}
	return nil
}

// flush gives the collected rows new positions, in order, and writes them.
func (st *stamper) flush(now time.Time) error {
	n := len(st.order)
	if n == 0 {
		return nil
	}
	var positions []int64
	if err := st.tx.SelectContext(st.ctx, &positions, nextPositionsSQL, n); err != nil {
		return fmt.Errorf("take sync positions: %w", err)
	}
	insts, ids := make([]int64, n), make([]int64, n)
	flavours, locales, subjects, fps := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	visible := make([]bool, n)
	for i, k := range st.order {
		s := st.writes[k]
		insts[i], flavours[i], locales[i], subjects[i], ids[i] = k.inst, k.flavour, k.locale, string(k.subject), k.id
		visible[i], fps[i] = s.visible, s.fingerprint
	}
	_, err := st.tx.ExecContext(st.ctx, upsertSyncSQL, pq.Array(insts), pq.Array(flavours), pq.Array(locales),
		pq.Array(subjects), pq.Array(ids), pq.Array(positions), pq.Array(visible), pq.Array(fps), now)
	if err != nil {
		return fmt.Errorf("write sync positions: %w", err)
	}
	return nil
}

const pruneSyncSQL = `WITH gone AS (
			DELETE FROM sync_changes WHERE NOT visible AND stamped_at < $1
			RETURNING instance_id, flavour, locale, subject, position),
		floors AS (
			INSERT INTO sync_floors (instance_id, flavour, locale, subject, floor)
			SELECT instance_id, flavour, locale, subject, max(position) FROM gone
			GROUP BY instance_id, flavour, locale, subject
			ON CONFLICT (instance_id, flavour, locale, subject) DO UPDATE
			SET floor = greatest(sync_floors.floor, excluded.floor))
		SELECT count(*) FROM gone`

// Prune deletes the sync tombstones (deleted or unpublished copies)
// stamped before before, and returns how many it deleted. A client whose
// token is older than a pruned tombstone of its stream may have missed that
// deletion: its next sync starts again from 0 (a full resync, which cannot
// tell it to delete what it still holds; such a client should clear its
// store). Keep tombstones longer than clients stay away.
func (s *Stamper) Prune(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := eventlog.Transact(ctx, s.db, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, syncLockSQL, syncLockKey); err != nil {
			return err
		}
		return tx.GetContext(ctx, &n, pruneSyncSQL, before)
	})
	if err != nil {
		return 0, fmt.Errorf("prune sync tombstones: %w", err)
	}
	return n, nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

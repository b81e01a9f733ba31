// Package eventlog is edgecms's append-only log of content changes (table
// events). Package content appends one row per changed item or page copy
// (or whole set) inside the transaction of the change; four consumers read
// it, each at its own position: the publisher and the webhook dispatcher
// through a cursor in event_cursors (Read, Ack), the origin's render cache
// from a position it keeps in memory (End, Since), and the sync stamper
// (package syncstamp). The scheduler trims what every consumer has read
// (Log.Trim).
//
// A reader never sees a row behind a position it has passed: rows of
// transactions still running are held back (schema/005_event_horizon.sql),
// which is why every transaction that may append takes the shared writer
// lock (Transact).
package eventlog

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strconv"
	"time"

	"github.com/edgecms/edgecms/internal/pg"
	"github.com/jmoiron/sqlx"
)

// State is the kind of an event, as webhook payloads name it.
type State string

// The event states of the spec.
const (
	Saved            State = "Saved"
	Published        State = "Published"
	Deleted          State = "Deleted"
	AwaitingApproval State = "AwaitingApproval"
	Approved         State = "Approved"
	Declined         State = "Declined"
)

// Subject is what an event is about.
type Subject string

// The subjects of events. Redirect, list, locale and channel events carry
// neither a contentID nor a pageID: like the spec's whole-list changes, they
// are Deleted events that tell a receiver to drop what it holds of the
// thing and read it again.
//
//   - list: a container's items changed as a whole (a reorder, the
//     container deleted), one event per locale, with the referenceName; or
//     the galleries changed (no locale, no referenceName).
//   - locale: a locale was added or removed; the event's locale is its code.
//   - channel: a sitemap channel was added, one event per locale, with the
//     channel's name in ReferenceName (the payload leaves it out: a
//     referenceName names a container there).
//   - model, pagemodel: a model's fields or a page model's zones changed
//     (added, renamed, removed), one event per locale, with the model's
//     name in ReferenceName: every object that shows the model's items or
//     the pages of the page model is rendered again.
const (
	SubjectItem      Subject = "item"
	SubjectPage      Subject = "page"
	SubjectRedirect  Subject = "redirect"
	SubjectList      Subject = "list"
	SubjectLocale    Subject = "locale"
	SubjectChannel   Subject = "channel"
	SubjectModel     Subject = "model"
	SubjectPageModel Subject = "pagemodel"
)

// TxID is the id of the transaction that wrote an event: a Postgres xid8
// (epoch and transaction id in 64 bits). The log is ordered by (tx, id) as
// numbers. Positions are never read or compared as text, where 10000 sorts
// before 9999: a reader would take the newer rows first and move its
// position past the older ones.
type TxID uint64

// Scan reads an xid8 column, which the driver hands over as its decimal
// text.
func (x *TxID) Scan(src any) error {
	var s string
	switch v := src.(type) {
	case []byte:
		s = string(v)
	case string:
		s = v
	case int64:
		if v < 0 {
			return fmt.Errorf("transaction id %d is negative", v)
		}
		*x = TxID(v)
		return nil
	default:
		return fmt.Errorf("transaction id: cannot scan %T", src)
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return fmt.Errorf("transaction id %q: %w", s, err)
	}
	*x = TxID(n)
	return nil
}

// Value passes the id as decimal text, which a $n::xid8 parameter accepts
// over the whole range (driver values have no unsigned 64-bit integer).
func (x TxID) Value() (driver.Value, error) { return x.String(), nil }

// String returns the id in decimal.
func (x TxID) String() string { return strconv.FormatUint(uint64(x), 10) }

// Event is one row of the append-only event log: one change to one item or
// page copy (or to a whole list, or to the redirections), with the fields of
// the webhook payload.
type Event struct {
	ID            int64     `db:"id" json:"id"`
	Tx            TxID      `db:"tx" json:"-"`
	InstanceID    int64     `db:"instance_id" json:"-"`
	InstanceGuid  string    `db:"instance_guid" json:"instanceGuid"`
	State         State     `db:"state" json:"state"`
	Subject       Subject   `db:"subject" json:"subject"`
	Locale        *string   `db:"locale" json:"languageCode,omitempty"`
	ReferenceName *string   `db:"reference_name" json:"referenceName,omitempty"`
	ContentID     *int64    `db:"content_id" json:"contentID,omitempty"`
	PageID        *int64    `db:"page_id" json:"pageID,omitempty"`
	VersionID     *int64    `db:"version_id" json:"versionID,omitempty"`
	ChangeDate    time.Time `db:"change_date" json:"changeDateUTC"`
	CreatedAt     time.Time `db:"created_at" json:"-"`
}

// Payload is the event as the spec's webhook payload: a flat object whose
// fields that do not apply are omitted.
func (e Event) Payload() map[string]any {
	p := map[string]any{
		"state":         string(e.State),
		"instanceGuid":  e.InstanceGuid,
		"changeDateUTC": e.ChangeDate.UTC().Format("2006-01-02T15:04:05.000Z"),
	}
	if e.Locale != nil {
		p["languageCode"] = *e.Locale
	}
	switch e.Subject {
	case SubjectItem:
		p["referenceName"] = deref(e.ReferenceName)
		p["contentID"] = deref(e.ContentID)
		p["contentVersionID"] = deref(e.VersionID)
	case SubjectPage:
		p["pageID"] = deref(e.PageID)
		p["pageVersionID"] = deref(e.VersionID)
	case SubjectList:
		if e.ReferenceName != nil {
			p["referenceName"] = *e.ReferenceName
		}
	case SubjectModel, SubjectPageModel:
		p["subject"] = string(e.Subject)
		if e.ReferenceName != nil {
			p["modelName"] = *e.ReferenceName
		}
	}
	return p
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

const insertEventSQL = `INSERT INTO events
	(instance_id, instance_guid, state, subject, locale, reference_name, content_id, page_id, version_id, change_date)
	VALUES (:instance_id, :instance_guid, :state, :subject, :locale, :reference_name, :content_id, :page_id, :version_id, :change_date)`

// writerLock is the advisory lock every transaction that may append
// events holds (shared, so writers never wait for each other); readers of
// the log use it to tell event writers from other transactions (see
// schema/005_event_horizon.sql).
const writerLock = pg.LockEventWriter

// Transact runs fn in a transaction that may append events (pg.Transact
// holding the shared writer lock).
func Transact(ctx context.Context, db *sqlx.DB, fn func(tx *sqlx.Tx) error) error {
	return pg.Transact(ctx, db, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock_shared($1)`, writerLock); err != nil {
			return err
		}
		return fn(tx)
	})
}

// Append writes e to the log inside the change's transaction, which
// Transact began. e names its instance (InstanceID, InstanceGuid).
func Append(ctx context.Context, tx *sqlx.Tx, e Event) error {
	if _, err := tx.NamedExecContext(ctx, insertEventSQL, e); err != nil {
		return fmt.Errorf("append %s event: %w", e.State, err)
	}
	return nil
}

// Consumers of the event log read it through a cursor of their own:
// Read returns the events after the consumer's position, and
// Ack moves the position past them. Rows of transactions that are
// still running are never returned, so no row can appear behind a position.
const (
	ensureCursorSQL = `INSERT INTO event_cursors (consumer) VALUES ($1) ON CONFLICT DO NOTHING`
	cursorSQL       = `SELECT tx, id FROM event_cursors WHERE consumer = $1`
	ackEventsSQL    = `UPDATE event_cursors SET tx = $2::xid8, id = $3, updated_at = now()
		WHERE consumer = $1 AND (tx, id) < ($2::xid8, $3)`
	// trimEventsSQL deletes up to $2 of the rows older than $1 that
	// every consumer has read, found through events_created_at.
	trimEventsSQL = `WITH old AS (
			SELECT id FROM events WHERE created_at < $1
			  AND (tx, id) <= ALL (SELECT tx, id FROM event_cursors)
			ORDER BY created_at LIMIT $2)
		DELETE FROM events e USING old WHERE e.id = old.id`
)

// trimLock is the advisory lock a batch of Log.Trim holds, so that
// trimmers (several schedulers) take turns instead of deleting the same
// rows in different orders.
const trimLock = pg.LockEventTrim

// trimBatch is how many rows one transaction of Log.Trim deletes.
var trimBatch = 5000

// Log is the event log on a database, for its readers and its trimmer.
type Log struct {
	db *sqlx.DB
}

// New returns the Log on db.
func New(db *sqlx.DB) *Log { return &Log{db: db} }

// Read returns up to limit events after consumer's position, oldest
// first. A new consumer starts at the beginning of the log.
func (l *Log) Read(ctx context.Context, consumer string, limit int) ([]Event, error) {
	return Read(ctx, l.db, consumer, limit)
}

// Read is Log.Read on any connection or transaction.
func Read(ctx context.Context, q sqlx.ExtContext, consumer string, limit int) ([]Event, error) {
	if _, err := q.ExecContext(ctx, ensureCursorSQL, consumer); err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	// The position is read first and passed as parameters: a join with
	// event_cursors makes Postgres scan the whole log below the horizon.
	var pos Position
	if err := sqlx.GetContext(ctx, q, &pos, cursorSQL, consumer); err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	evs := []Event{}
	if err := sqlx.SelectContext(ctx, q, &evs, eventsSinceSQL, pos.Tx, pos.ID, limit); err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return evs, nil
}

// Ack moves consumer's position to just after e. It never moves a
// position backwards.
func Ack(ctx context.Context, q sqlx.ExecerContext, consumer string, e Event) error {
	if _, err := q.ExecContext(ctx, ackEventsSQL, consumer, e.Tx, e.ID); err != nil {
		return fmt.Errorf("ack events: %w", err)
	}
	return nil
}

// Ack is the package-level Ack on the log's database.
func (l *Log) Ack(ctx context.Context, consumer string, e Event) error {
	return Ack(ctx, l.db, consumer, e)
}

// Trim deletes events older than before that every consumer has read,
// and returns how many it deleted. It deletes in batches, each in its own
// short transaction, so that trimming a long log holds no lock for long;
// concurrent trimmers take turns.
func (l *Log) Trim(ctx context.Context, before time.Time) (int64, error) {
	var total int64
	for {
		var n int64
		err := pg.Transact(ctx, l.db, func(tx *sqlx.Tx) error {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, trimLock); err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, trimEventsSQL, before, trimBatch)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		if err != nil {
			return total, fmt.Errorf("trim events: %w", err)
		}
		total += n
		if n < int64(trimBatch) {
			return total, nil
		}
	}
}

// Position is a place in the event log, for readers that keep their
// position in memory (caches) rather than in event_cursors.
type Position struct {
	Tx TxID  `db:"tx"`
	ID int64 `db:"id"`
}

// Position returns the position just after e.
func (e Event) Position() Position { return Position{Tx: e.Tx, ID: e.ID} }

// The horizon is a sub-select so that Postgres computes it once per
// statement: it reads which transactions are running, which may change
// while the statement runs, and a value computed per row could skip a row.
//
// The select list leaves tx an xid8, and ORDER BY names the table's
// column: an ORDER BY name matches an output column first, so a text alias
// "tx" in the select list would sort the log as text.
const (
	eventsSinceSQL = `SELECT e.id, e.tx, e.instance_id, e.instance_guid, e.state, e.subject, e.locale,
			e.reference_name, e.content_id, e.page_id, e.version_id, e.change_date, e.created_at
		FROM events e WHERE (e.tx, e.id) > ($1::xid8, $2) AND e.tx < (SELECT edgecms_event_horizon())
		ORDER BY e.tx, e.id LIMIT $3`
	eventLogEndSQL = `SELECT coalesce(max(e.tx), '0') FROM events e WHERE e.tx < (SELECT edgecms_event_horizon())`
)

// Since returns up to limit events after pos, oldest first, never a
// row of a transaction that is still running.
func (l *Log) Since(ctx context.Context, pos Position, limit int) ([]Event, error) {
	evs := []Event{}
	if err := l.db.SelectContext(ctx, &evs, eventsSinceSQL, pos.Tx, pos.ID, limit); err != nil {
		return nil, fmt.Errorf("events since %v: %w", pos, err)
	}
	return evs, nil
}

// End returns a position at or before the end of the log that no
// later committed row can fall behind: readers starting there see every
// change that commits afterwards.
func (l *Log) End(ctx context.Context) (Position, error) {
	var tx TxID
	if err := l.db.GetContext(ctx, &tx, eventLogEndSQL); err != nil {
		return Position{}, fmt.Errorf("event log end: %w", err)
	}
	return Position{Tx: tx}, nil
}

// claimMaintenanceSQL moves the task's last start to now if it is at least
// $2 seconds old (or the task never ran), and returns a row only then. The
// database's clock decides, so schedulers on machines whose clocks differ
// agree.
const claimMaintenanceSQL = `INSERT INTO maintenance_runs (task, ran_at) VALUES ($1, now())
	ON CONFLICT (task) DO UPDATE SET ran_at = excluded.ran_at
	WHERE maintenance_runs.ran_at <= excluded.ran_at - make_interval(secs => $2)
	RETURNING true`

// ClaimMaintenance reports whether the caller may run the maintenance task
// (of the log: trimming it, and stamping the sync positions that hold it)
// now: nobody claimed it in the last interval (less a tenth, so that
// schedulers whose tickers run a little early do not skip a round). Every
// scheduler asks; one a round gets true.
func (l *Log) ClaimMaintenance(ctx context.Context, task string, interval time.Duration) (bool, error) {
	rows, err := l.db.QueryContext(ctx, claimMaintenanceSQL, task, (interval - interval/10).Seconds())
	if err != nil {
		return false, fmt.Errorf("claim %s: %w", task, err)
	}
	defer rows.Close()
	ok := rows.Next()
	return ok, rows.Err()
}

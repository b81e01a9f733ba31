package content

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/problem"
)

// A change made through the management API carries three things beside its
// arguments, in its context, so that every write path honours them without
// each store method taking them: who makes it (the actor recorded in
// versions and the audit log), the audit note of the request, and the
// request's If-Match precondition.

type ctxKey int

const (
	actorKey ctxKey = iota
	auditKey
	ifMatchKey
)

// WithActor returns ctx with the actor of the changes made under it
// ("user:<id>", "token:<id>"), which versions and the audit log record.
func WithActor(ctx context.Context, actor string) context.Context {
	return context.WithValue(ctx, actorKey, actor)
}

// ActorOf returns the actor of ctx, or "".
func ActorOf(ctx context.Context) string {
	a, _ := ctx.Value(actorKey).(string)
	return a
}

// AuditNote is one audit log entry in the making: what a management
// request does. The first transaction of the store that the request's
// change runs writes it, in that transaction; Written says it was.
type AuditNote struct {
	InstanceID int64
	Actor      string
	// Action is the method and the route ("PUT /{locale}/items/{id}"),
	// Path the path as requested (below the instance).
	Action, Path string
	Detail       map[string]any
	Written      bool
	pending      bool
}

// WithAudit returns ctx carrying n, which the store writes with the first
// change it commits under ctx.
func WithAudit(ctx context.Context, n *AuditNote) context.Context {
	return context.WithValue(ctx, auditKey, n)
}

func auditOf(ctx context.Context) *AuditNote {
	n, _ := ctx.Value(auditKey).(*AuditNote)
	return n
}

const insertAuditSQL = `INSERT INTO audit (instance_id, actor, action, path, detail) VALUES ($1, $2, $3, $4, $5)`

func (n *AuditNote) insert(ctx context.Context, q sqlx.ExecerContext) error {
	var detail []byte
	if len(n.Detail) > 0 {
		detail, _ = json.Marshal(n.Detail)
	}
	_, err := q.ExecContext(ctx, insertAuditSQL, n.InstanceID, n.Actor, n.Action, n.Path, detail)
	return err
}

// WriteAudit writes the note of a change that did not go through the
// content store (webhooks, users), once.
func (s *Store) WriteAudit(ctx context.Context, n *AuditNote) error {
	if n == nil || n.Written || n.InstanceID == 0 {
		return nil
	}
	if err := n.insert(ctx, s.db); err != nil {
		return fmt.Errorf("write audit: %w", err)
	}
	n.Written = true
	return nil
}

// beginChange sets the transaction's actor (for the version triggers) and
// writes the request's audit note, when ctx has them.
func beginChange(ctx context.Context, tx *sqlx.Tx) error {
	if a := ActorOf(ctx); a != "" {
		if _, err := tx.ExecContext(ctx, `SELECT set_config('edgecms.actor', $1, true)`, a); err != nil {
			return err
		}
	}
	if n := auditOf(ctx); n != nil && !n.Written && n.InstanceID != 0 {
		if err := n.insert(ctx, tx); err != nil {
			return err
		}
		n.pending = true
	}
	return nil
}

// endChange records that the note of a committed change is written.
func endChange(ctx context.Context, err error) {
	if n := auditOf(ctx); n != nil && n.pending {
		n.pending = false
		if err == nil {
			n.Written = true
		}
	}
}

// setAction names the kind of change the next version rows record
// (restore, discard; "" for the default: create or save).
func setAction(ctx context.Context, tx *sqlx.Tx, action string) error {
	_, err := tx.ExecContext(ctx, `SELECT set_config('edgecms.action', $1, true)`, action)
	return err
}

// IfMatch is a request's If-Match precondition: Any for "*", else the
// versions it names.
type IfMatch struct {
	Any      bool
	Versions []int64
	// Tags are entity tags that name no version (weak ones, or not
	// numbers): they never match.
	Tags []string
}

// ParseIfMatch parses an If-Match header value (RFC 9110 section 13.1.1):
// "*" or a comma-separated list of entity tags.
func ParseIfMatch(v string) (IfMatch, error) {
	var m IfMatch
	v = strings.TrimSpace(v)
	if v == "*" {
		return IfMatch{Any: true}, nil
	}
	bad := problem.Field("If-Match", `must be "*" or a list of entity tags like "123" (the versionID in quotes, as ETag gives it)`)
	if v == "" {
		return m, bad
	}
	for _, part := range strings.Split(v, ",") {
		t := strings.TrimSpace(part)
		weak := strings.HasPrefix(t, "W/")
		t = strings.TrimPrefix(t, "W/")
		if len(t) < 2 || t[0] != '"' || t[len(t)-1] != '"' || strings.ContainsAny(t[1:len(t)-1], "\" ") {
			return IfMatch{}, bad
		}
		inner := t[1 : len(t)-1]
		// If-Match compares strongly: a weak tag never matches.
		if n, err := strconv.ParseInt(inner, 10, 64); err == nil && !weak {
			m.Versions = append(m.Versions, n)
		} else {
			m.Tags = append(m.Tags, part)
		}
	}
	return m, nil
}

// WithIfMatch returns ctx carrying the request's precondition, which the
// change of one item, page or model under ctx checks against the current
// version once it holds its lock.
func WithIfMatch(ctx context.Context, m IfMatch) context.Context {
	return context.WithValue(ctx, ifMatchKey, m)
}

// checkIfMatch checks ctx's precondition against the current version of
// what the change is about (exists false: there is none yet).
func checkIfMatch(ctx context.Context, current int64, exists bool) error {
	m, ok := ctx.Value(ifMatchKey).(IfMatch)
	if !ok {
		return nil
	}
	if exists && m.Any {
		return nil
	}
	for _, v := range m.Versions {
		if exists && v == current {
			return nil
		}
	}
	if !exists {
		return problem.New(problem.PreconditionFailed, "If-Match: there is no copy to match yet")
	}
	return &problem.Error{Kind: problem.PreconditionFailed,
		Detail: fmt.Sprintf("If-Match: the current version is %d; someone saved since you read it", current),
		Extra:  map[string]any{"currentVersionID": current}}
}

// AuditEntry is one row of the audit log: who did what, when.
type AuditEntry struct {
	ID     int64           `db:"id" json:"id"`
	At     time.Time       `db:"at" json:"at"`
	Actor  string          `db:"actor" json:"actor"`
	Action string          `db:"action" json:"action"`
	Path   string          `db:"path" json:"path"`
	Detail json.RawMessage `db:"detail" json:"detail,omitempty"`
}

// AuditQuery selects audit rows: From (inclusive) and To (exclusive) when
// set, of one actor when set.
type AuditQuery struct {
	From, To   *time.Time
	Actor      string
	Take, Skip int
}

// AuditPage is a window of the audit log, newest first.
type AuditPage struct {
	Items      []AuditEntry `json:"items"`
	TotalCount int          `json:"totalCount"`
}

const (
	auditWhere = ` FROM audit WHERE instance_id = $1 AND ($2::timestamptz IS NULL OR at >= $2)
		AND ($3::timestamptz IS NULL OR at < $3) AND ($4 = '' OR actor = $4)`
	selectAuditSQL = `SELECT id, at, actor, action, path, coalesce(detail, 'null') AS detail` + auditWhere + ` ORDER BY at DESC, id DESC LIMIT $5 OFFSET $6`
	countAuditSQL  = `SELECT count(*)` + auditWhere
	trimAuditSQL   = `DELETE FROM audit WHERE id IN (SELECT id FROM audit WHERE at < $1 LIMIT $2)`
)

// Audit lists the audit log of an instance, newest first.
func (s *Store) Audit(ctx context.Context, inst Instance, q AuditQuery) (AuditPage, error) {
	p := AuditPage{Items: []AuditEntry{}}
	if err := s.db.SelectContext(ctx, &p.Items, selectAuditSQL, inst.ID, q.From, q.To, q.Actor, q.Take, q.Skip); err != nil {
		return AuditPage{}, fmt.Errorf("list audit: %w", err)
	}
	if err := s.db.GetContext(ctx, &p.TotalCount, countAuditSQL, inst.ID, q.From, q.To, q.Actor); err != nil {
		return AuditPage{}, fmt.Errorf("count audit: %w", err)
	}
	return p, nil
}

// MinAuditRetention is the shortest time the audit log keeps a row.
const MinAuditRetention = 90 * 24 * time.Hour

// TrimAudit deletes up to limit audit rows from before before, and
// returns how many it deleted. Whatever before says, it keeps the rows of
// the last MinAuditRetention.
func (s *Store) TrimAudit(ctx context.Context, before time.Time, limit int) (int64, error) {
	if floor := s.now().Add(-MinAuditRetention); before.After(floor) {
		before = floor
	}
	res, err := s.db.ExecContext(ctx, trimAuditSQL, before, limit)
	if err != nil {
		return 0, fmt.Errorf("trim audit: %w", err)
	}
	return res.RowsAffected()
}

package publisher

import (
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/edgecms/edgecms/internal/pg"
	"github.com/jmoiron/sqlx"
)

// Advisory locks serialise publishers (and the origin's write-backs, and
// republish commands) on one database. Each is a session lock on a
// connection of its own, so a publisher that dies releases its locks with
// its connections.
//
//	(lockSpace, 0)                    the event cursor: one batch at a time
//	(lockSpace, 1)                    the feed object (transaction lock)
//	(lockSpace, 2)                    a batch of a trim (transaction lock; see trim.go)
//	(lockSpace, 3)                    the backlog: one background chunk at a time
//	(instanceSpace, hashtext(guid))   writes of one instance's objects
//	(manifestSpace, hashtext(guid))   one instance's key manifest (transaction lock)
//
// The keys are registered in internal/pg.
const (
	lockSpace     = pg.LockPublisher
	instanceSpace = pg.LockPublisherInstance
	manifestSpace = pg.LockPublisherManifest
)

const (
	cursorLock  = 0
	feedLock    = 1
	trimLock    = 2
	backlogLock = 3
)

// lock is a held session lock.
type lock struct {
	conn   *sqlx.Conn
	unlock string
	args   []any
}

// acquire takes the lock (space, key), where key is an int when keyText is
// empty and hashtext(keyText) otherwise. With wait false it returns nil
// when another session holds the lock.
func (p *Publisher) acquire(ctx context.Context, wait bool, space int, key int, keyText string) (*lock, error) {
	conn, err := p.db.Connx(ctx)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	fn := "pg_try_advisory_lock"
	if wait {
		fn = "pg_advisory_lock"
	}
	l := &lock{conn: conn}
	var q string
	if keyText == "" {
		q = fmt.Sprintf("SELECT %s($1, $2)::text", fn)
		l.unlock, l.args = `SELECT pg_advisory_unlock($1, $2)`, []any{space, key}
	} else {
		q = fmt.Sprintf("SELECT %s($1, hashtext($2))::text", fn)
		l.unlock, l.args = `SELECT pg_advisory_unlock($1, hashtext($2))`, []any{space, keyText}
	}
	var got string
	if err := conn.GetContext(ctx, &got, q, l.args...); err != nil {
		discard(conn)
		return nil, fmt.Errorf("lock: %w", err)
	}
	if got == "false" {
		conn.Close()
		return nil, nil
	}
	return l, nil
}

// release releases the lock and returns its connection to the pool, or
// discards the connection when the unlock fails, so that a lock is never
// left held on a pooled connection.
func (l *lock) release() {
	var ok bool
	if err := l.conn.GetContext(context.Background(), &ok, l.unlock, l.args...); err != nil || !ok {
		discard(l.conn)
		return
	}
	l.conn.Close()
}

// discard closes conn for good instead of returning it to the pool.
func discard(conn *sqlx.Conn) {
	conn.Raw(func(any) error { return driver.ErrBadConn })
	conn.Close()
}

// lockInstance takes the lock of writes to instance guid, waiting for it.
func (p *Publisher) lockInstance(ctx context.Context, guid string) (*lock, error) {
	return p.acquire(ctx, true, instanceSpace, 0, guid)
}

const (
	// planVersionSQL takes a render number for a batch of instance $1
	// that has just planned, and records it as the instance's latest.
	planVersionSQL = `INSERT INTO publisher_plans (guid, version) VALUES ($1, nextval('publisher_renders'))
		ON CONFLICT (guid) DO UPDATE SET version = excluded.version RETURNING version`
	lastPlanSQL = `SELECT coalesce((SELECT version FROM publisher_plans WHERE guid = $1), 0)`
)

// planVersion takes the render number of a batch of instance guid whose
// plan has read the objects table, and records it for plannedSince, in
// one statement. The caller holds the instance lock.
func (p *Publisher) planVersion(ctx context.Context, guid string) (int64, error) {
	var v int64
	if err := p.db.GetContext(ctx, &v, planVersionSQL, guid); err != nil {
		return 0, fmt.Errorf("render number: %w", err)
	}
	return v, nil
}

// lockedVersion takes a render number under the instance lock, and
// releases the lock at once. Every other writer of the instance that
// holds the lock from its render number to its writes (batches,
// write-backs, republish) then either took a smaller number and read
// content before this one was taken, or takes a larger one: a number
// smaller than this one never stands for a newer read.
func (p *Publisher) lockedVersion(ctx context.Context, guid string) (int64, error) {
	l, err := p.lockInstance(ctx, guid)
	if err != nil {
		return 0, err
	}
	defer l.release()
	return p.nextVersion(ctx)
}

// plannedSince reports, under the instance lock, whether a batch of
// instance guid took its plan's render number after version. Once it
// returns false, every batch that plans later holds the instance lock
// after the caller's writes were committed, and sees them.
func (p *Publisher) plannedSince(ctx context.Context, guid string, version int64) (bool, error) {
	l, err := p.lockInstance(ctx, guid)
	if err != nil {
		return false, err
	}
	defer l.release()
	var last int64
	if err := p.db.GetContext(ctx, &last, lastPlanSQL, guid); err != nil {
		return false, fmt.Errorf("latest plan: %w", err)
	}
	return last > version, nil
}

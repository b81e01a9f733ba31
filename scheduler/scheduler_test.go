package scheduler

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/internal/pgtest"
)

// env is a content store on a fresh database with one instance and a
// container of articles, and a fake clock.
type env struct {
	t     *testing.T
	ctx   context.Context
	db    *sqlx.DB
	dsn   string
	s     *content.Store
	inst  content.Instance
	mu    sync.Mutex
	clock time.Time
}

func newEnv(t *testing.T) *env {
	t.Helper()
	db, dsn := pgtest.New(t)
	e := &env{t: t, ctx: context.Background(), db: db, dsn: dsn, clock: time.Now().UTC()}
	e.s = e.store(db)
	var err error
	e.inst, err = e.s.CreateInstance(e.ctx, "acme", []content.Locale{{Code: "en-us", Name: "English"}})
	e.must(err)
	_, err = e.s.CreateModel(e.ctx, e.inst, content.Model{Name: "Article", Kind: "content",
		Fields: content.Fields{{Name: "title", Type: content.TypeText}}})
	e.must(err)
	_, err = e.s.CreateContainer(e.ctx, e.inst, "articles", "Article")
	e.must(err)
	return e
}

// store returns a content store on db with the env's clock.
func (e *env) store(db *sqlx.DB) *content.Store {
	s := content.NewStore(db)
	s.Now = e.now
	return s
}

// process returns a content store on a connection pool of its own, as
// another process would have.
func (e *env) process() *content.Store {
	e.t.Helper()
	db, err := sqlx.Open("postgres", e.dsn)
	e.must(err)
	e.t.Cleanup(func() { db.Close() })
	return e.store(db)
}

func (e *env) now() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.clock
}

func (e *env) advance(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.clock = e.clock.Add(d)
}

func (e *env) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) count(query string, args ...any) int {
	e.t.Helper()
	var n int
	e.must(e.db.GetContext(e.ctx, &n, query, args...))
	return n
}

// publishedItem creates and publishes an article.
func (e *env) publishedItem(title string) int64 {
	e.t.Helper()
	st, err := e.s.CreateItem(e.ctx, e.inst, "en-us", "articles", map[string]json.RawMessage{"title": json.RawMessage(`"` + title + `"`)})
	e.must(err)
	_, err = e.s.ItemAction(e.ctx, e.inst, "en-us", st.ContentID, content.ActionPublish)
	e.must(err)
	return st.ContentID
}

// readToEnd moves consumer's cursor past every event in the log.
func (e *env) readToEnd(consumer string) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for e.count(`SELECT count(*) FROM events e, event_cursors c WHERE c.consumer = $1 AND (e.tx, e.id) > (c.tx, c.id)`, consumer) > 0 {
		evs, err := e.s.Events().Read(e.ctx, consumer, 100)
		e.must(err)
		if len(evs) > 0 {
			e.must(e.s.Events().Ack(e.ctx, consumer, evs[len(evs)-1]))
			continue
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("consumer %s never reached the end of the log", consumer)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// forgetClaim makes the next maintenance round runnable at once, as if
// the interval had passed.
func (e *env) forgetClaim() {
	e.t.Helper()
	_, err := e.db.ExecContext(e.ctx, `UPDATE maintenance_runs SET ran_at = ran_at - interval '1 day'`)
	e.must(err)
}

// logs counts the records of a logger by level.
type logs struct {
	errors, infos atomic.Int64
	t             *testing.T
}

func (l *logs) logger() *slog.Logger { return slog.New(l) }

func (l *logs) Enabled(context.Context, slog.Level) bool { return true }
func (l *logs) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		l.errors.Add(1)
	} else {
		l.infos.Add(1)
	}
	if l.t != nil {
		l.t.Log(r.Level, r.Message)
	}
	return nil
}
func (l *logs) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logs) WithGroup(string) slog.Handler      { return l }

// TestMaintain follows the event log and the sync positions through
// maintenance rounds: the first seeds sync and trims nothing a consumer
// has not read, a round is claimed once per interval whatever the number
// of schedulers, events read by every consumer and older than the
// retention go, and sync tombstones older than theirs are pruned.
func TestMaintain(t *testing.T) {
	e := newEnv(t)
	id := e.publishedItem("One")
	e.publishedItem("Two")
	// A consumer at the start of the log holds every event.
	_, err := e.s.Events().Read(e.ctx, "slow", 0)
	e.must(err)
	events := e.count(`SELECT count(*) FROM events`)
	cfg := Config{MaintenanceInterval: time.Hour, EventRetention: time.Hour, SyncTombstoneRetention: 24 * time.Hour, Now: e.now}
	l := &logs{t: t}

	if !Maintain(e.ctx, e.s, cfg, l.logger()) {
		t.Fatal("the first maintenance round did not run")
	}
	if n := e.count(`SELECT count(*) FROM event_cursors WHERE consumer = 'sync'`); n != 1 {
		t.Errorf("sync was not seeded")
	}
	if n := e.count(`SELECT count(*) FROM events`); n != events {
		t.Errorf("%d events left of %d, want all (a consumer has read none)", n, events)
	}
	// Another scheduler within the interval does nothing.
	if Maintain(e.ctx, e.process(), cfg, l.logger()) {
		t.Errorf("a second round ran within the interval")
	}

	// The item is deleted: its sync row becomes a tombstone.
	e.must(e.s.DeleteItem(e.ctx, e.inst, "en-us", id))
	e.forgetClaim()
	if !Maintain(e.ctx, e.process(), cfg, l.logger()) {
		t.Fatal("a round after the interval did not run")
	}
	if n := e.count(`SELECT count(*) FROM sync_changes WHERE NOT visible AND object_id = $1`, id); n != 2 {
		t.Errorf("%d sync tombstones of the deleted item, want 2 (fetch and preview)", n)
	}
	if n := e.count(`SELECT count(*) FROM events`); n != events+1 {
		t.Errorf("%d events left, want %d", n, events+1)
	}

	// Every consumer has read everything, and two days pass. (The sync
	// cursor only passes events older than the event horizon, which a
	// transaction committing while it is read holds back until the next
	// round: rounds go on until it has.)
	e.readToEnd("slow")
	e.advance(48 * time.Hour)
	deadline := time.Now().Add(30 * time.Second)
	for {
		e.forgetClaim()
		if !Maintain(e.ctx, e.s, cfg, l.logger()) {
			t.Fatal("a round after the interval did not run")
		}
		if e.count(`SELECT count(*) FROM events`) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events left after every consumer read them and the retention passed", e.count(`SELECT count(*) FROM events`))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := e.count(`SELECT count(*) FROM sync_changes WHERE NOT visible`); n != 0 {
		t.Errorf("%d sync tombstones left after their retention", n)
	}
	if n := e.count(`SELECT count(*) FROM sync_floors`); n == 0 {
		t.Errorf("pruning recorded no sync floor")
	}
	if l.errors.Load() != 0 {
		t.Errorf("%d errors logged", l.errors.Load())
	}

	// New events younger than the retention stay (the clock back at the
	// database's time, which dates the events).
	e.advance(time.Until(e.now()) * -1)
	e.publishedItem("Three")
	e.readToEnd("slow")
	e.forgetClaim()
	Maintain(e.ctx, e.s, cfg, l.logger())
	if n := e.count(`SELECT count(*) FROM events`); n == 0 {
		t.Errorf("events younger than the retention were trimmed")
	}
}

// TestSchedulersTogether runs three schedulers, each with a connection pool
// of its own, against one database: every due publish happens exactly
// once, the maintenance trims the log once every consumer has read it,
// and nothing fails.
func TestSchedulersTogether(t *testing.T) {
	e := newEnv(t)
	var ids []int64
	for range 5 {
		st, err := e.s.CreateItem(e.ctx, e.inst, "en-us", "articles", map[string]json.RawMessage{"title": json.RawMessage(`"x"`)})
		e.must(err)
		soon := e.now().Add(time.Minute)
		_, err = e.s.ScheduleItem(e.ctx, e.inst, "en-us", st.ContentID, content.Schedule{PublishAt: &soon})
		e.must(err)
		ids = append(ids, st.ContentID)
	}
	_, err := e.s.Events().Read(e.ctx, "audit", 0)
	e.must(err)
	e.advance(2 * time.Minute)

	l := &logs{}
	ctx, cancel := context.WithCancel(e.ctx)
	var wg sync.WaitGroup
	cfg := Config{Interval: 10 * time.Millisecond, MaintenanceInterval: 50 * time.Millisecond,
		EventRetention: time.Millisecond, SyncTombstoneRetention: time.Hour, Now: e.now}
	for range 3 {
		s := e.process()
		wg.Add(1)
		go func() { defer wg.Done(); Run(ctx, s, cfg, l.logger()) }()
	}
	defer func() { cancel(); wg.Wait() }()

	deadline := time.Now().Add(30 * time.Second)
	for e.count(`SELECT count(*) FROM item_copies WHERE published_version_id IS NOT NULL`) < len(ids) {
		if time.Now().After(deadline) {
			t.Fatal("the due publishes never happened")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The audit consumer holds the log: each publish wrote one event.
	if n := e.count(`SELECT count(*) FROM events WHERE state = 'Published'`); n != len(ids) {
		t.Errorf("%d Published events for %d due publishes", n, len(ids))
	}
	if n := e.count(`SELECT count(*) FROM item_copies WHERE publish_at IS NOT NULL`); n != 0 {
		t.Errorf("%d publish dates left", n)
	}
	// Once it has read everything, the schedulers trim the log.
	e.readToEnd("audit")
	e.advance(time.Hour)
	for e.count(`SELECT count(*) FROM events`) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d events never trimmed", e.count(`SELECT count(*) FROM events`))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := l.errors.Load(); n != 0 {
		t.Errorf("%d errors logged", n)
	}
}

// TestRunSurvivesFailures: a scheduler whose database is gone logs each
// failure and keeps trying until it is stopped.
func TestRunSurvivesFailures(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.process()
	e.must(s.DB().Close())
	l := &logs{}
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() {
		Run(ctx, s, Config{Interval: 5 * time.Millisecond, MaintenanceInterval: 5 * time.Millisecond}, l.logger())
		close(done)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for l.errors.Load() < 6 {
		select {
		case <-done:
			t.Fatal("Run returned before it was stopped")
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d failures logged", l.errors.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
}

// TestMaintainKeepsAudit checks that the audit log outlives the event log:
// a maintenance round asked to keep less than content.MinAuditRetention
// (90 days) trims only the rows older than that.
func TestMaintainKeepsAudit(t *testing.T) {
	e := newEnv(t)
	for _, days := range []int{400, 100, 89, 1} {
		_, err := e.s.DB().ExecContext(e.ctx, `INSERT INTO audit (instance_id, actor, action, path, at)
			VALUES ($1, 'token:1', 'PUT /en-us/items/{id}', '/en-us/items/1', now() - make_interval(days => $2))`, e.inst.ID, days)
		e.must(err)
	}
	cfg := Config{MaintenanceInterval: time.Hour, AuditRetention: time.Hour, Now: time.Now}
	l := &logs{t: t}
	if !Maintain(e.ctx, e.s, cfg, l.logger()) {
		t.Fatal("the maintenance round did not run")
	}
	if n := e.count(`SELECT count(*) FROM audit WHERE at < now() - interval '90 days'`); n != 0 {
		t.Errorf("%d audit rows older than 90 days left", n)
	}
	if n := e.count(`SELECT count(*) FROM audit`); n != 2 {
		t.Errorf("%d audit rows left, want the 2 of the last 90 days", n)
	}
	// The store keeps them whatever its caller asks.
	if n, err := e.s.TrimAudit(e.ctx, time.Now(), 100); err != nil || n != 0 {
		t.Errorf("TrimAudit(now) = %d, %v; want 0 rows trimmed", n, err)
	}
	if l.errors.Load() != 0 {
		t.Errorf("%d errors logged", l.errors.Load())
	}
}

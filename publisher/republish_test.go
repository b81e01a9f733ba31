package publisher

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/store"
)

// TestRepublishRandom makes random edits, as TestInvalidationRandom does,
// and after every few republishes the instance twice: over the store the
// publisher keeps (nothing should change), then into a new, empty store.
// Each time the store must hold exactly the fresh answers from Postgres,
// so what Republish renders from its snapshots is byte for byte what the
// Fetch API answers, for every kind of object and content the editor makes
// (write-backs included).
func TestRepublishRandom(t *testing.T) {
	t.Parallel()
	rounds := 25
	if testing.Short() {
		rounds = 8
	}
	runRandomRepublish(t, folderStore, rounds)
}

// TestRepublishRandomMinIO is the same against a real MinIO server, where
// Republish writes with conditional PUTs and no HEAD.
func TestRepublishRandomMinIO(t *testing.T) {
	t.Parallel()
	rounds := 10
	if testing.Short() {
		rounds = 4
	}
	runRandomRepublish(t, minioStore, rounds)
}

func runRandomRepublish(t *testing.T, kind storeKind, rounds int) {
	r := newRandomEditor(t, kind)
	e, p, seed := r.e, r.p, r.seed
	for round := range rounds {
		var names []string
		for range 1 + r.rng.IntN(6) {
			names = append(names, r.edit())
		}
		e.must(p.Drain(e.ctx))
		// Changes of fetch objects (the first republish also publishes
		// the key manifest).
		var changes int
		count := func() int {
			var n int
			e.must(e.db.GetContext(e.ctx, &n, `SELECT count(*) FROM object_changes WHERE key LIKE $1`, e.guid+"/fetch/%"))
			return n
		}
		changes = count()
		e.must(p.Republish(e.ctx, e.guid, nil))
		if n := count(); n != changes {
			var keys []string
			e.must(e.db.SelectContext(e.ctx, &keys, `SELECT key FROM object_changes WHERE key LIKE $1 ORDER BY seq DESC LIMIT $2`,
				e.guid+"/fetch/%", n-changes))
			t.Errorf("round %d: republish over an up-to-date store changed %v", round, keys)
		}
		e.check(t)
		if t.Failed() {
			t.Fatalf("round %d, after edits %v, republished over the store (seed %d)", round, names, seed)
		}
		e.store = openStore(t, kind)
		p = e.publisher(Config{})
		r.p = p
		e.must(p.Republish(e.ctx, e.guid, nil))
		e.check(t)
		if t.Failed() {
			t.Fatalf("round %d, after edits %v, republished into an empty store (seed %d)", round, names, seed)
		}
	}
	t.Logf("%d rounds: %v", rounds, r.counts)
}

// TestRepublishConcurrentEdits republishes over and over, in chunks of a
// few objects (so that a snapshot serves several chunks, and events come
// between them), while an editor edits and a publisher follows the events,
// then checks the store.
func TestRepublishConcurrentEdits(t *testing.T) {
	defer func(n int) { republishChunk = n }(republishChunk)
	republishChunk = 5
	e := newEnv(t, folderStore)
	s := e.buildSite()
	p1 := e.publisher(Config{DatabaseURL: e.dsn, Poll: 50 * time.Millisecond})
	p2 := e.publisher(Config{})
	ctx, stop := context.WithCancel(e.ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p1.Run(ctx) }()
	republishes := republishLoop(ctx, t, &wg, p2, e.guid)
	seed := testSeed(t)
	r := &randomEditor{e: e, p: p1, s: s, rng: rand.New(rand.NewPCG(seed, 2))}
	edits := 80
	if testing.Short() {
		edits = 20
	}
	for range edits {
		r.edit()
		time.Sleep(time.Duration(r.rng.IntN(20)) * time.Millisecond)
	}
	stop()
	wg.Wait()
	e.must(p1.Drain(e.ctx))
	e.check(t)
	t.Logf("%d edits, %d republishes; counts %v", edits, *republishes, r.counts)
}

// TestRepublishListedStale checks the cases where the listing Republish
// takes disagrees with the objects table: an object replaced behind the
// publisher's back after a publish (the table still has the old ETag, the
// store other bytes) is written again.
func TestRepublishListedStale(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	e.buildSite()
	p := e.publisher(Config{})
	e.must(p.Drain(e.ctx))
	key := listRequest(e.guid, "en-us", "posts", 0).Key()
	o, err := e.store.Get(e.ctx, key)
	e.must(err)
	o.Body = []byte(`{"items":[],"totalCount":0}`)
	_, err = e.store.Put(e.ctx, store.Object{Key: key, Body: o.Body, ContentType: o.ContentType, CacheControl: o.CacheControl, Tags: o.Tags})
	e.must(err)
	e.must(p.Republish(e.ctx, e.guid, nil))
	e.check(t)
}

// TestRepublishListPagesBetweenEvents: an item is unpublished and, after
// the republish rendered the list pages but before it saved the
// memberships, published again. The batch that then handles both events
// finds the container's membership as list_members records it, so the
// list pages must show that membership's windows, whatever the republish
// read in between.
func TestRepublishListPagesBetweenEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	s := e.buildSite()
	p := e.publisher(Config{})
	e.must(p.Drain(e.ctx))
	x := s.posts[2] // on list page 0: list page 1's window shifts without it
	e.itemAction(x, content.ActionUnpublish)
	republished := false
	e.must(p.Republish(e.ctx, e.guid, func(done, total int) {
		if done == total && !republished {
			republished = true // the last chunk is written, the memberships not yet saved
			e.itemAction(x, content.ActionPublish)
		}
	}))
	e.must(p.Drain(e.ctx))
	e.check(t)
}

// TestRepublishAfterBackgroundListPage: a batch leaves list page 1 to the
// background lane (an item of page 0 unpublished: page 1 only shifts);
// another item of page 0 is unpublished; a republish writes page 1, and
// before it saves the memberships the background lane writes page 1 again,
// with a newer render number, from the membership the batch saved. The
// batch of the second event must still find page 1's window changed.
func TestRepublishAfterBackgroundListPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	s, p, page1 := e.page1InBackground()
	e.itemAction(s.posts[3], content.ActionUnpublish)
	var before int64
	e.must(e.db.GetContext(e.ctx, &before, `SELECT rendered_version FROM objects WHERE key = $1`, page1))

	// Once the republish has written page 1, a background chunk waits for
	// the instance lock, which it gets as soon as the republish's chunk
	// releases it.
	background := make(chan error, 1)
	started := false
	p2 := e.publisher(Config{})
	e.must(p2.Republish(e.ctx, e.guid, func(done, total int) {
		var v int64
		e.must(e.db.GetContext(e.ctx, &v, `SELECT rendered_version FROM objects WHERE key = $1`, page1))
		if started || v == before {
			return
		}
		started = true
		go func() { _, _, err := p.runBacklog(e.ctx, true); background <- err }()
		for {
			var waiting bool
			e.must(e.db.GetContext(e.ctx, &waiting, `SELECT EXISTS (SELECT 1 FROM pg_locks
				WHERE locktype = 'advisory' AND NOT granted AND classid = $1
					AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))`, instanceSpace))
			if waiting {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}))
	if !started {
		t.Fatalf("the republish did not write %s", page1)
	}
	e.must(<-background)
	e.must(p.Drain(e.ctx))
	e.check(t)
}

// TestRepublishKeepsObjectOfUncommittedWriter: a writer Puts an object and
// then, in the transaction it opened before, records its row. A republish
// that lists the store in between sees an object no committed row lists;
// it must wait for that transaction rather than delete the object the row
// then names.
func TestRepublishKeepsObjectOfUncommittedWriter(t *testing.T) {
	t.Parallel()
	e := newEnv(t, folderStore)
	e.buildSite()
	p := e.publisher(Config{})
	e.must(p.Drain(e.ctx))

	r := itemRequest(e.guid, "en-us", 987654)
	key := r.Key()
	tx, err := e.db.BeginTxx(e.ctx, nil)
	e.must(err)
	defer tx.Rollback()
	_, err = tx.ExecContext(e.ctx, `INSERT INTO objects (key, guid, locale, request, etag, rendered_version) VALUES ($1, $2, 'en-us', $3, 'e', 1)`,
		key, e.guid, requestString(r))
	e.must(err)
	_, err = e.store.Put(e.ctx, store.Object{Key: key, Body: []byte(`{"contentID":987654}`), ContentType: "application/json"})
	e.must(err)

	done := make(chan error, 1)
	go func() { done <- p.Republish(e.ctx, e.guid, nil) }()
	select {
	case err := <-done:
		t.Fatalf("republish ended (%v) while a writer older than its listing had not committed", err)
	case <-time.After(2 * time.Second):
	}
	e.must(tx.Commit())
	e.must(<-done)
	if _, err := e.store.Stat(e.ctx, key); err != nil {
		t.Fatalf("the republish deleted %s, whose row its writer committed: %v", key, err)
	}
}

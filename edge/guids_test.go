package edge_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/edge"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/publisher"
	"github.com/edgecms/edgecms/store"
)

// guarded is an edge in front of a real origin on its own Postgres
// database, with one instance whose key manifest the real publisher wrote
// into the store (with the change feed).
type guarded struct {
	db       *sqlx.DB
	dbName   string
	cs       *content.Store
	inst     content.Instance
	fetchKey string
	st       store.Store
	pub      *publisher.Publisher
	origin   string // the origin's base URL
	edge     *runningEdge
}

// newGuarded sets up a guarded edge; cfg's OriginURL is set.
func newGuarded(t *testing.T, cfg edge.Config) *guarded {
	t.Helper()
	ctx := context.Background()
	in := newInstance(t, "guarded")
	db, dsn, cs, inst := in.db, in.dsn, in.cs, in.inst
	_, secret := in.apiKey(t, "fetch")
	originURL, _ := startOrigin(t, cs)
	st := store.NewMemory(nil)
	pub := publisher.New(publisher.Config{Store: st}, cs, testLog(t))
	t.Cleanup(func() { pub.Close() })
	if err := pub.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pub.PublishKeys(ctx, inst.Guid); err != nil {
		t.Fatal(err)
	}
	if err := pub.FlushFeed(ctx); err != nil {
		t.Fatal(err)
	}
	cfg.OriginURL = originURL
	g := &guarded{db: db, dbName: dsn[strings.LastIndex(dsn, "/")+1:], cs: cs, inst: inst, fetchKey: secret, st: st, pub: pub, origin: cfg.OriginURL}
	if i := strings.IndexByte(g.dbName, '?'); i >= 0 {
		g.dbName = g.dbName[:i]
	}
	g.edge = startEdge(t, st, cfg)
	return g
}

// TestUnknownGuidsAnswerAsKnownOnes checks that, without a valid key, an
// existing instance and a made-up one answer alike through the edge (issue
// 19 finding 12): same status, body (but for the guid it names), and no
// X-Cache header in either, so that instances cannot be enumerated.
func TestUnknownGuidsAnswerAsKnownOnes(t *testing.T) {
	t.Parallel()
	g := newGuarded(t, edge.Config{})
	for _, key := range []string{"", "live_not-a-key"} {
		var answers []response
		for _, guid := range []string{g.inst.Guid, "no-such-site"} {
			res := get(t, g.edge.url+"/"+guid+"/fetch/en-us/item/1", key)
			res.body = []byte(strings.ReplaceAll(string(res.body), guid, "GUID"))
			answers = append(answers, res)
		}
		known, unknown := answers[0], answers[1]
		if known.status != 401 || unknown.status != 401 {
			t.Errorf("key %q: status %d for the instance, %d for a made-up guid, want 401 for both", key, known.status, unknown.status)
		}
		if string(known.body) != string(unknown.body) {
			t.Errorf("key %q: body %s for the instance, %s for a made-up guid", key, known.body, unknown.body)
		}
		for _, h := range []string{"X-Cache", "Cache-Control", "Content-Type", "Age", "Etag"} {
			if a, b := known.header.Values(h), unknown.header.Values(h); strings.Join(a, ",") != strings.Join(b, ",") {
				t.Errorf("key %q: %s %q for the instance, %q for a made-up guid", key, h, a, b)
			}
		}
	}
}

// xacts returns the transactions Postgres counted in database name, once
// no connection to it is open (a backend's counts reach the statistics
// when it exits), with the origin's pool made to close its connections.
func (g *guarded) xacts(t *testing.T) int64 {
	t.Helper()
	g.db.SetMaxIdleConns(0)
	admin, err := sqlx.Open("postgres", pgServerURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var n int64
	waitFor(t, 30*time.Second, "the origin's connections to close", func() bool {
		var backends int
		if err := admin.Get(&backends, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1`, g.dbName); err != nil {
			t.Fatal(err)
		}
		return backends == 0
	})
	if err := admin.Get(&n, `SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = $1`, g.dbName); err != nil {
		t.Fatal(err)
	}
	return n
}

func pgServerURL(t *testing.T) string {
	t.Helper()
	u, err := pgtest.ServerURL("postgres")
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestUnknownGuidsStayAtTheEdge checks that an edge that has read the
// change feed and the key manifests answers requests for instances that do
// not exist itself (issue 19 finding 5): 1,000 of them make no Postgres
// transaction.
func TestUnknownGuidsStayAtTheEdge(t *testing.T) {
	t.Parallel()
	g := newGuarded(t, edge.Config{})
	before := g.xacts(t)
	for i := range 1000 {
		res := get(t, fmt.Sprintf("%s/made-up-%d/fetch/en-us/item/1", g.edge.url, i), "live_guess")
		if res.status != 401 {
			t.Fatalf("made-up guid %d = %d %s, want 401", i, res.status, res.body)
		}
	}
	if n := g.xacts(t) - before; n > 0 {
		t.Errorf("1,000 requests for made-up guids made %d Postgres transactions, want 0", n)
	}
	// The instance itself is still served.
	if res := get(t, g.edge.url+"/guarded/fetch/en-us/sitemap/flat/website", g.fetchKey); res.status != 200 {
		t.Errorf("the instance's sitemap = %d %s, want 200", res.status, res.body)
	}
}

// TestNewKeyWorksAtOnce checks that a fetch key created a moment ago works
// through the edge before the manifest with it arrives, and that made-up
// keys of a known instance cost the origin a bounded number of lookups
// (issue 19 finding 5).
func TestNewKeyWorksAtOnce(t *testing.T) {
	t.Parallel()
	g := newGuarded(t, edge.Config{})
	ctx := context.Background()
	name := "new"
	_, secret, err := g.cs.CreateAPIKey(ctx, g.inst, content.APIKeyInput{Name: &name, Type: "fetch"})
	if err != nil {
		t.Fatal(err)
	}
	// No publisher runs: the manifest in the store never gets the key.
	for i := range 3 {
		if res := get(t, g.edge.url+"/guarded/fetch/en-us/sitemap/flat/website", secret); res.status != 200 {
			t.Fatalf("new key, request %d = %d %s, want 200", i+1, res.status, res.body)
		}
	}
	if res := get(t, g.edge.url+"/guarded/fetch/en-us/sitemap/flat/website", "live_made-up"); res.status != 401 {
		t.Fatalf("made-up key = %d %s, want 401", res.status, res.body)
	}

	before := g.xacts(t)
	start := time.Now()
	const flood = 500
	for i := range flood {
		if res := get(t, g.edge.url+"/guarded/fetch/en-us/sitemap/flat/website", fmt.Sprintf("live_flood%d", i)); res.status != 401 {
			t.Fatalf("made-up key %d = %d %s, want 401", i, res.status, res.body)
		}
	}
	elapsed := time.Since(start)
	// At most the burst and the rate over the time taken, each a key
	// lookup: a few transactions on a new connection (the pool keeps none
	// here, so that each backend's counts reach the statistics).
	limit := int64(4 * (20 + 5*(elapsed.Seconds()+1)))
	if n := g.xacts(t) - before; n > limit {
		t.Errorf("%d made-up keys in %v made %d Postgres transactions, want at most %d", flood, elapsed, n, limit)
	}
}

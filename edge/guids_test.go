package edge_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/edge"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/publisher"
	"github.com/edgecms/edgecms/render"
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
	db, dsn := pgtest.New(t)
	cs := content.NewStore(db)
	inst, err := cs.CreateInstance(ctx, "guarded", []content.Locale{{Code: "en-us", Name: "English"}})
	if err != nil {
		t.Fatal(err)
	}
	name := "site"
	_, secret, err := cs.CreateAPIKey(ctx, inst, content.APIKeyInput{Name: &name, Type: "fetch"})
	if err != nil {
		t.Fatal(err)
	}
	r := render.New(cs)
	t.Cleanup(func() { r.Close() })
	renderFn := func(ctx context.Context, req fetch.Request) ([]byte, []string, error) {
		site, err := render.LoadSite(ctx, cs, req.Guid)
		if err != nil {
			return nil, nil, err
		}
		res, err := r.Render(ctx, site, req)
		return res.Body, res.Tags, err
	}
	srv := origin.New(origin.Config{Render: renderFn}, cs, testLog(t))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.App().Listener(ln)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
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
	cfg.OriginURL = "http://" + ln.Addr().String()
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

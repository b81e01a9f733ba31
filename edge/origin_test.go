package edge_test

import (
	"context"
	"net"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/demo"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/render"
)

// instance is one instance of the content store on a fresh database, for
// the tests that put an edge in front of what a real origin or the real
// publisher makes of it.
type instance struct {
	db   *sqlx.DB
	dsn  string
	cs   *content.Store
	inst content.Instance
}

// newInstance creates the instance name with locales (en-us alone when none
// is given) on a fresh migrated database.
func newInstance(t *testing.T, name string, locales ...content.Locale) instance {
	t.Helper()
	if len(locales) == 0 {
		locales = []content.Locale{{Code: "en-us", Name: "English"}}
	}
	db, dsn := pgtest.New(t)
	cs := content.NewStore(db)
	inst, err := cs.CreateInstance(context.Background(), name, locales)
	if err != nil {
		t.Fatal(err)
	}
	return instance{db: db, dsn: dsn, cs: cs, inst: inst}
}

// apiKey creates an API key named "site" of type typ ("fetch" or
// "preview") and returns it with its secret.
func (in instance) apiKey(t *testing.T, typ string) (content.APIKey, string) {
	t.Helper()
	name := "site"
	k, secret, err := in.cs.CreateAPIKey(context.Background(), in.inst, content.APIKeyInput{Name: &name, Type: typ})
	if err != nil {
		t.Fatal(err)
	}
	return k, secret
}

// fillDemo fills the instance with the demo site.
func (in instance) fillDemo(t *testing.T) {
	t.Helper()
	if err := demo.Fill(context.Background(), in.cs, in.inst); err != nil {
		t.Fatal(err)
	}
}

// startOrigin serves a real origin on cs on a loopback port, rendering
// Fetch API misses with the renderer the origin role uses, and returns its
// base URL and a function that stops it (called when the test ends too).
func startOrigin(t *testing.T, cs *content.Store) (string, func()) {
	t.Helper()
	r := render.New(cs)
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
		r.Close()
		t.Fatal(err)
	}
	go srv.App().Listener(ln)
	stop := sync.OnceFunc(func() {
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Errorf("origin shutdown: %v", err)
		}
		r.Close()
	})
	t.Cleanup(stop)
	return "http://" + ln.Addr().String(), stop
}

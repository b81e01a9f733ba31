package origin

import (
	"context"
	"testing"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/internal/pgtest"
)

// TestSiteCache: a site is read once and kept until forgotten; a load that
// raced with forget is not kept.
func TestSiteCache(t *testing.T) {
	t.Parallel()
	db, _ := pgtest.New(t)
	store := content.NewStore(db)
	ctx := context.Background()
	inst, err := store.CreateInstance(ctx, "acme", []content.Locale{{Code: "en-us", Name: "English"}})
	if err != nil {
		t.Fatal(err)
	}
	sc := newSiteCache(store)
	codes := func() []string {
		t.Helper()
		site, err := sc.get(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range site.Locales {
			out = append(out, l.Code)
		}
		return out
	}
	if got := codes(); len(got) != 1 {
		t.Fatalf("locales %v, want en-us", got)
	}
	// A locale written behind the cache's back (no forget) is not seen...
	if _, err := store.CreateLocale(ctx, inst, content.Locale{Code: "fr-ca", Name: "Français"}); err != nil {
		t.Fatal(err)
	}
	if got := codes(); len(got) != 1 {
		t.Errorf("locales %v before forget, want the cached en-us alone", got)
	}
	// ... until the event log tells the origin to forget the site.
	sc.forget("acme")
	if got := codes(); len(got) != 2 {
		t.Errorf("locales %v after forget, want en-us and fr-ca", got)
	}
	if _, err := sc.get(ctx, "nobody"); err == nil {
		t.Error("the site of an unknown instance: no error")
	}
}

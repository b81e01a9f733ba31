package content

import (
	"testing"

	"github.com/edgecms/edgecms/problem"
)

// A copy in a locale the instance does not have is a NotFound, never an
// internal error, whatever the caller (the CLI and the demo call the store
// without resolving locales first).
func TestCopyInUnconfiguredLocale(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.articles()
	f.pages()
	st := f.createItem("en-us", "Articles", map[string]any{"title": "Hello"})
	mark := f.lastEvent()

	_, err := f.s.CreateItem(f.ctx, f.inst, "xx-yy", "Articles", values(t, map[string]any{"title": "Hi"}))
	if got := problem.KindOf(err); got != problem.NotFound {
		t.Errorf("CreateItem(xx-yy) = %v (%v), want NotFound", got, err)
	}
	_, err = f.s.SaveItem(f.ctx, f.inst, "xx-yy", st.ContentID, values(t, map[string]any{"title": "Hi"}))
	if got := problem.KindOf(err); got != problem.NotFound {
		t.Errorf("SaveItem(xx-yy) = %v (%v), want NotFound", got, err)
	}
	_, err = f.s.CreatePage(f.ctx, f.inst, "xx-yy", pageInput("Home", 0))
	if got := problem.KindOf(err); got != problem.NotFound {
		t.Errorf("CreatePage(xx-yy) = %v (%v), want NotFound", got, err)
	}
	if evs := f.eventsAfter(mark); len(evs) != 0 {
		t.Errorf("failed changes wrote %d events", len(evs))
	}
}

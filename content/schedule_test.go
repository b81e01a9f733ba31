package content

import (
	"testing"
	"time"

	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/problem"
)

func at(d time.Duration) *time.Time { return ptr(t0.Add(d)) }

func (f *fixture) runDue(want int) {
	f.t.Helper()
	n, err := f.s.RunDueSchedules(f.ctx)
	if err != nil {
		f.t.Fatalf("RunDueSchedules at %v: %v", f.clock, err)
	}
	if n != want {
		f.t.Errorf("RunDueSchedules at %v = %d, want %d", f.clock, n, want)
	}
}

func TestScheduleValidation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.articles()
	f.pages()
	id := f.createItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
	pid := f.createPage("en-us", "Home", 0).PageID
	tests := []struct {
		name   string
		sc     Schedule
		fields []string
	}{
		{"publish now", Schedule{PublishAt: at(0)}, []string{"publishAt"}},
		{"publish in the past", Schedule{PublishAt: at(-time.Hour)}, []string{"publishAt"}},
		{"unpublish in the past", Schedule{UnpublishAt: at(-time.Second)}, []string{"unpublishAt"}},
		{"unpublish before publish", Schedule{PublishAt: at(2 * time.Hour), UnpublishAt: at(time.Hour)}, []string{"unpublishAt"}},
		{"unpublish at publish", Schedule{PublishAt: at(time.Hour), UnpublishAt: at(time.Hour)}, []string{"unpublishAt"}},
		{"both in the past", Schedule{PublishAt: at(-2 * time.Hour), UnpublishAt: at(-time.Hour)}, []string{"publishAt", "unpublishAt"}},
	}
	for _, tt := range tests {
		_, err := f.s.ScheduleItem(f.ctx, f.inst, "en-us", id, tt.sc)
		wantFields(t, "item: "+tt.name, err, tt.fields...)
		_, err = f.s.SchedulePage(f.ctx, f.inst, "en-us", pid, tt.sc)
		wantFields(t, "page: "+tt.name, err, tt.fields...)
	}
	if it := f.item("en-us", id); it.PublishAt != nil || it.UnpublishAt != nil {
		t.Errorf("item schedule after refusals: %v %v, want none", it.PublishAt, it.UnpublishAt)
	}

	sc := Schedule{PublishAt: at(time.Hour)}
	_, err := f.s.ScheduleItem(f.ctx, f.inst, "fr-ca", id, sc)
	wantKind(t, "schedule an item in a locale without a copy", err, problem.NotFound)
	_, err = f.s.ScheduleItem(f.ctx, f.inst, "en-us", id+100, sc)
	wantKind(t, "schedule an unknown item", err, problem.NotFound)
	_, err = f.s.SchedulePage(f.ctx, f.inst, "fr-ca", pid, sc)
	wantKind(t, "schedule a page in a locale without a copy", err, problem.NotFound)
	f.itemAction("en-us", id, ActionDelete)
	_, err = f.s.ScheduleItem(f.ctx, f.inst, "en-us", id, sc)
	wantKind(t, "schedule a deleted item", err, problem.NotFound)

	// Nil dates clear a schedule.
	id2 := f.createItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
	if _, err := f.s.ScheduleItem(f.ctx, f.inst, "en-us", id2, Schedule{PublishAt: at(time.Hour), UnpublishAt: at(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if it := f.item("en-us", id2); it.PublishAt == nil || !it.PublishAt.Equal(t0.Add(time.Hour)) || it.UnpublishAt == nil || !it.UnpublishAt.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("item schedule = %v %v", it.PublishAt, it.UnpublishAt)
	}
	if _, err := f.s.ScheduleItem(f.ctx, f.inst, "en-us", id2, Schedule{}); err != nil {
		t.Fatal(err)
	}
	if it := f.item("en-us", id2); it.PublishAt != nil || it.UnpublishAt != nil {
		t.Errorf("item schedule after clearing = %v %v", it.PublishAt, it.UnpublishAt)
	}
	f.clock = t0.Add(3 * time.Hour)
	f.runDue(0)
}

func TestScheduledItemPublishAndUnpublish(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.articles()
	st := f.createItem("en-us", "Articles", map[string]any{"title": "T"})
	id := st.ContentID
	if _, err := f.s.ScheduleItem(f.ctx, f.inst, "en-us", id, Schedule{PublishAt: at(time.Hour), UnpublishAt: at(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}

	mark := f.lastEvent()
	f.clock = t0.Add(time.Hour - time.Second)
	f.runDue(0)
	f.checkEvents("before the publish date", mark)

	f.clock = t0.Add(time.Hour)
	f.runDue(1)
	it := f.item("en-us", id)
	if it.State != Published || it.Published == nil || it.Published.VersionID != st.VersionID {
		t.Errorf("at the publish date: state %v published %+v, want published v%d", it.State, it.Published, st.VersionID)
	}
	if it.PublishAt != nil || it.UnpublishAt == nil {
		t.Errorf("at the publish date: schedule %v %v, want publishAt cleared and unpublishAt kept", it.PublishAt, it.UnpublishAt)
	}
	f.checkEvents("scheduled publish", mark, itemEv(eventlog.Published, "en-us", "Articles", id, st.VersionID, f.clock))
	f.runDue(0)

	mark = f.lastEvent()
	f.clock = t0.Add(3 * time.Hour)
	f.runDue(1)
	it = f.item("en-us", id)
	if it.State != Unpublished || it.Published != nil || it.UnpublishAt != nil {
		t.Errorf("after the unpublish date: state %v published %+v unpublishAt %v", it.State, it.Published, it.UnpublishAt)
	}
	// A scheduled unpublish is reported as Deleted.
	f.checkEvents("scheduled unpublish", mark, itemEv(eventlog.Deleted, "en-us", "Articles", id, st.VersionID, f.clock))
	f.runDue(0)

	// When both dates have passed, a run publishes and the next unpublishes.
	f.clock = t0
	id2 := f.createItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
	if _, err := f.s.ScheduleItem(f.ctx, f.inst, "en-us", id2, Schedule{PublishAt: at(time.Hour), UnpublishAt: at(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	f.clock = t0.Add(5 * time.Hour)
	mark = f.lastEvent()
	f.runDue(1)
	f.runDue(1)
	f.runDue(0)
	var got []eventlog.State
	for _, e := range f.eventsAfter(mark) {
		got = append(got, e.State)
	}
	if len(got) != 2 || got[0] != eventlog.Published || got[1] != eventlog.Deleted {
		t.Errorf("both dates passed: events %v, want Published then Deleted", got)
	}
	if it := f.item("en-us", id2); it.State != Unpublished || it.PublishAt != nil || it.UnpublishAt != nil {
		t.Errorf("both dates passed: state %v schedule %v %v, want unpublished with no dates", it.State, it.PublishAt, it.UnpublishAt)
	}
}

// TestScheduledUnpublishOnly: a published copy scheduled only to be
// unpublished (no publish date).
func TestScheduledUnpublishOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.articles()
	f.pages()
	st := f.createItem("en-us", "Articles", map[string]any{"title": "T"})
	f.itemAction("en-us", st.ContentID, ActionPublish)
	p := f.createPage("en-us", "Home", 0)
	f.pageAction("en-us", p.PageID, ActionPublish)
	if _, err := f.s.ScheduleItem(f.ctx, f.inst, "en-us", st.ContentID, Schedule{UnpublishAt: at(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.SchedulePage(f.ctx, f.inst, "en-us", p.PageID, Schedule{UnpublishAt: at(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	mark := f.lastEvent()
	f.clock = t0.Add(time.Hour)
	f.runDue(2)
	if got := f.item("en-us", st.ContentID); got.State != Unpublished || got.UnpublishAt != nil {
		t.Errorf("item after its unpublish date: state %v unpublishAt %v", got.State, got.UnpublishAt)
	}
	if got := f.page("en-us", p.PageID); got.State != Unpublished || got.UnpublishAt != nil {
		t.Errorf("page after its unpublish date: state %v unpublishAt %v", got.State, got.UnpublishAt)
	}
	want := []ev{
		itemEv(eventlog.Deleted, "en-us", "Articles", st.ContentID, st.VersionID, f.clock),
		pageEv(eventlog.Deleted, "en-us", p.PageID, 0, f.clock),
	}
	if got := simplify(f.eventsAfter(mark)); len(got) != 2 || sortEvs(got)[0] != sortEvs(want)[0] || sortEvs(got)[1] != sortEvs(want)[1] {
		t.Errorf("scheduled unpublish events:\n got %v\nwant %v", got, want)
	}
}

func TestScheduledPagePublish(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.pages()
	p := f.createPage("en-us", "Home", 0)
	c := f.addComponent("en-us", p.PageID, "Sidebar", "One")
	p = f.page("en-us", p.PageID)
	if _, err := f.s.SchedulePage(f.ctx, f.inst, "en-us", p.PageID, Schedule{PublishAt: at(time.Hour), UnpublishAt: at(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if got := f.page("en-us", p.PageID); got.PublishAt == nil || !got.PublishAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("page publishAt = %v", got.PublishAt)
	}
	mark := f.lastEvent()
	f.clock = t0.Add(90 * time.Minute)
	f.runDue(1)
	if got := f.page("en-us", p.PageID); got.State != Published || got.PublishAt != nil {
		t.Errorf("page after its publish date: state %v publishAt %v", got.State, got.PublishAt)
	}
	comp := f.item("en-us", c)
	if comp.State != Published {
		t.Errorf("component of a page published by schedule: state %v", comp.State)
	}
	want := sortEvs([]ev{
		itemEv(eventlog.Published, "en-us", "teaser_1", c, comp.VersionID, f.clock),
		pageEv(eventlog.Published, "en-us", p.PageID, p.VersionID, f.clock),
	})
	if got := sortEvs(simplify(f.eventsAfter(mark))); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("scheduled page publish events:\n got %v\nwant %v", got, want)
	}
	f.clock = t0.Add(2 * time.Hour)
	mark = f.lastEvent()
	f.runDue(1)
	if got := f.page("en-us", p.PageID); got.State != Unpublished || got.UnpublishAt != nil {
		t.Errorf("page after its unpublish date: state %v unpublishAt %v", got.State, got.UnpublishAt)
	}
	f.checkEvents("scheduled page unpublish", mark, pageEv(eventlog.Deleted, "en-us", p.PageID, 0, f.clock))
}

// TestScheduleTheStateRefuses: a due action the state does not allow just
// clears the date and writes no event.
func TestScheduleTheStateRefuses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.articles()
	id := f.createItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
	f.itemAction("en-us", id, ActionPublish)
	if _, err := f.s.ScheduleItem(f.ctx, f.inst, "en-us", id, Schedule{PublishAt: at(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	mark := f.lastEvent()
	f.clock = t0.Add(time.Hour)
	f.runDue(1)
	if got := f.item("en-us", id); got.State != Published || got.PublishAt != nil {
		t.Errorf("after a due publish of a published copy: state %v publishAt %v, want published and no date", got.State, got.PublishAt)
	}
	f.checkEvents("refused scheduled publish", mark)
	f.runDue(0)

	// Publishing or deleting by hand clears the dates it would act on.
	id2 := f.createItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
	if _, err := f.s.ScheduleItem(f.ctx, f.inst, "en-us", id2, Schedule{PublishAt: at(2 * time.Hour), UnpublishAt: at(3 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	f.itemAction("en-us", id2, ActionPublish)
	if got := f.item("en-us", id2); got.PublishAt != nil || got.UnpublishAt == nil {
		t.Errorf("after publishing by hand: schedule %v %v, want publishAt cleared, unpublishAt kept", got.PublishAt, got.UnpublishAt)
	}
	f.itemAction("en-us", id2, ActionDelete)
	if got := f.item("en-us", id2); got.PublishAt != nil || got.UnpublishAt != nil {
		t.Errorf("after deleting: schedule %v %v, want none", got.PublishAt, got.UnpublishAt)
	}
	f.clock = t0.Add(4 * time.Hour)
	f.runDue(0)
}

func TestSchedulesOfSeveralInstances(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.articles()
	a := f.createItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
	mine := f.inst
	f.inst = f.instance("other")
	f.articles()
	b := f.createItem("fr-ca", "Articles", map[string]any{"title": "T"}).ContentID
	for _, x := range []struct {
		inst   Instance
		locale string
		id     int64
	}{{mine, "en-us", a}, {f.inst, "fr-ca", b}} {
		if _, err := f.s.ScheduleItem(f.ctx, x.inst, x.locale, x.id, Schedule{PublishAt: at(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	mark := f.lastEvent()
	f.clock = t0.Add(time.Hour)
	f.runDue(2)
	for _, e := range f.eventsAfter(mark) {
		want := map[int64]string{a: "acme", b: "other"}[*e.ContentID]
		if e.InstanceGuid != want || e.State != eventlog.Published {
			t.Errorf("event %s of item %d: instance %q, want %q", e.State, *e.ContentID, e.InstanceGuid, want)
		}
	}
	if got := f.item("fr-ca", b).State; got != Published {
		t.Errorf("other instance's item: state %v", got)
	}
}

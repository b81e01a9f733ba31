package content

import (
	"fmt"
	"testing"

	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/problem"
)

// conflict marks an action the workflow refuses.
const conflict State = 0

var allStates = []State{Staging, Published, Deleted, Approved, AwaitingApproval, Declined, Unpublished}

// workflow is the state machine written out by hand, for a copy without a
// published version: the state each action moves a copy to, or conflict.
var workflow = map[State]map[Action]State{
	Staging: {ActionSave: Staging, ActionRequestApproval: AwaitingApproval, ActionApprove: conflict, ActionDecline: conflict,
		ActionPublish: Published, ActionUnpublish: conflict, ActionDelete: Deleted},
	Published: {ActionSave: Staging, ActionRequestApproval: conflict, ActionApprove: conflict, ActionDecline: conflict,
		ActionPublish: conflict, ActionUnpublish: conflict, ActionDelete: Deleted},
	Deleted: {ActionSave: conflict, ActionRequestApproval: conflict, ActionApprove: conflict, ActionDecline: conflict,
		ActionPublish: conflict, ActionUnpublish: conflict, ActionDelete: conflict},
	Approved: {ActionSave: Staging, ActionRequestApproval: conflict, ActionApprove: conflict, ActionDecline: conflict,
		ActionPublish: Published, ActionUnpublish: conflict, ActionDelete: Deleted},
	AwaitingApproval: {ActionSave: Staging, ActionRequestApproval: conflict, ActionApprove: Approved, ActionDecline: Declined,
		ActionPublish: Published, ActionUnpublish: conflict, ActionDelete: Deleted},
	Declined: {ActionSave: Staging, ActionRequestApproval: AwaitingApproval, ActionApprove: conflict, ActionDecline: conflict,
		ActionPublish: Published, ActionUnpublish: conflict, ActionDelete: Deleted},
	Unpublished: {ActionSave: Staging, ActionRequestApproval: AwaitingApproval, ActionApprove: conflict, ActionDecline: conflict,
		ActionPublish: Published, ActionUnpublish: conflict, ActionDelete: Deleted},
}

// wantTransition is what the workflow table says; a copy with a published
// version may also be unpublished from any state but deleted.
func wantTransition(from State, hasPublished bool, a Action) State {
	if a == ActionUnpublish && hasPublished && from != Deleted {
		return Unpublished
	}
	return workflow[from][a]
}

// reasons are the words a refusal must say, by state and action.
func wantReason(from State, hasPublished bool, a Action) string {
	switch {
	case from == Deleted:
		return "it is deleted"
	case a == ActionApprove || a == ActionDecline:
		return "not awaiting approval"
	case a == ActionPublish:
		return "already published"
	case a == ActionUnpublish:
		return "no published version"
	case a == ActionRequestApproval && from == Published:
		return "it is published"
	case a == ActionRequestApproval:
		return "it is already " + from.String()
	}
	return ""
}

func TestTransition(t *testing.T) {
	t.Parallel()
	for _, from := range allStates {
		for _, hasPublished := range []bool{false, true} {
			for _, a := range Actions {
				want := wantTransition(from, hasPublished, a)
				got, err := Transition(from, hasPublished, a)
				name := fmt.Sprintf("Transition(%s, published=%v, %s)", from, hasPublished, a)
				if want == conflict {
					if !problem.Is(err, problem.Conflict) {
						t.Errorf("%s = %v, %v; want a Conflict", name, got, err)
						continue
					}
					if got != from {
						t.Errorf("%s refused but returned state %v, want the unchanged %v", name, got, from)
					}
					wantDetail(t, name, err, "cannot "+string(a), wantReason(from, hasPublished, a))
					continue
				}
				if err != nil || got != want {
					t.Errorf("%s = %v, %v; want %v", name, got, err, want)
				}
			}
		}
	}
}

func TestTransitionUnknownAction(t *testing.T) {
	t.Parallel()
	got, err := Transition(Staging, false, Action("archive"))
	if !problem.Is(err, problem.Conflict) || got != Staging {
		t.Errorf("Transition(staging, archive) = %v, %v; want staging and a Conflict", got, err)
	}
}

func TestStateString(t *testing.T) {
	t.Parallel()
	want := map[State]string{Staging: "staging", Published: "published", Deleted: "deleted", Approved: "approved",
		AwaitingApproval: "awaiting approval", Declined: "declined", Unpublished: "unpublished"}
	for s, w := range want {
		if got := s.String(); got != w {
			t.Errorf("State(%d).String() = %q, want %q", int(s), got, w)
		}
	}
	for i, s := range allStates {
		if int(s) != []int{1, 2, 3, 4, 5, 6, 7}[i] {
			t.Errorf("state %s = %d, want %d", s, int(s), i+1)
		}
	}
}

func TestActionRoleAndEvent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a     Action
		role  Role
		event eventlog.State
	}{
		{ActionSave, RoleEdit, eventlog.Saved},
		{ActionRequestApproval, RoleEdit, eventlog.AwaitingApproval},
		{ActionApprove, RolePublish, eventlog.Approved},
		{ActionDecline, RolePublish, eventlog.Declined},
		{ActionPublish, RolePublish, eventlog.Published},
		{ActionUnpublish, RolePublish, eventlog.Deleted},
		{ActionDelete, RolePublish, eventlog.Deleted},
	}
	if len(tests) != len(Actions) {
		t.Fatalf("%d actions tested, Actions has %d", len(tests), len(Actions))
	}
	for _, tt := range tests {
		if got := tt.a.Role(); got != tt.role {
			t.Errorf("%s.Role() = %s, want %s", tt.a, got, tt.role)
		}
		if got := tt.a.EventState(); got != tt.event {
			t.Errorf("%s.EventState() = %s, want %s", tt.a, got, tt.event)
		}
	}
}

func TestParseAction(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Action
		ok   bool
	}{
		{"publish", ActionPublish, true},
		{"unpublish", ActionUnpublish, true},
		{"request-approval", ActionRequestApproval, true},
		{"approve", ActionApprove, true},
		{"decline", ActionDecline, true},
		{"save", "", false},
		{"delete", "", false},
		{"Publish", "", false},
		{"", "", false},
		{"archive", "", false},
	}
	for _, tt := range tests {
		got, err := ParseAction(tt.in)
		if tt.ok {
			if err != nil || got != tt.want {
				t.Errorf("ParseAction(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
			continue
		}
		if !problem.Is(err, problem.NotFound) {
			t.Errorf("ParseAction(%q) = %q, %v; want a NotFound", tt.in, got, err)
		}
	}
}

func TestRole(t *testing.T) {
	t.Parallel()
	for i, r := range Roles {
		if !r.Valid() {
			t.Errorf("%s.Valid() = false", r)
		}
		for j, need := range Roles {
			if got, want := r.Includes(need), i >= j; got != want {
				t.Errorf("%s.Includes(%s) = %v, want %v", r, need, got, want)
			}
		}
		if r.Includes(Role("owner")) {
			t.Errorf("%s.Includes(owner) = true, want false", r)
		}
	}
	for _, r := range []Role{"", "owner", "Edit"} {
		if r.Valid() {
			t.Errorf("Role(%q).Valid() = true, want false", r)
		}
		if r.Includes(RoleEdit) {
			t.Errorf("Role(%q).Includes(edit) = true, want false", r)
		}
	}
}

// setups bring a copy into each state by taking actions from staging.
var setups = []struct {
	name         string
	steps        []Action
	state        State
	hasPublished bool
}{
	{"staging", nil, Staging, false},
	{"published", []Action{ActionPublish}, Published, true},
	{"deleted", []Action{ActionDelete}, Deleted, false},
	{"approved", []Action{ActionRequestApproval, ActionApprove}, Approved, false},
	{"awaiting approval", []Action{ActionRequestApproval}, AwaitingApproval, false},
	{"declined", []Action{ActionRequestApproval, ActionDecline}, Declined, false},
	{"unpublished", []Action{ActionPublish, ActionUnpublish}, Unpublished, false},
	{"staging with a published version", []Action{ActionPublish, ActionSave}, Staging, true},
	{"awaiting approval with a published version", []Action{ActionPublish, ActionSave, ActionRequestApproval}, AwaitingApproval, true},
	{"approved with a published version", []Action{ActionPublish, ActionSave, ActionRequestApproval, ActionApprove}, Approved, true},
}

// TestItemWorkflow takes every action on an item copy in every state.
func TestItemWorkflow(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.articles()
	act := func(id int64, a Action) (Status, error) {
		if a == ActionSave {
			return f.s.SaveItem(f.ctx, f.inst, "en-us", id, values(t, map[string]any{"body": "more"}))
		}
		return f.s.ItemAction(f.ctx, f.inst, "en-us", id, a)
	}
	for _, su := range setups {
		for _, a := range Actions {
			t.Run(su.name+"/"+string(a), func(t *testing.T) {
				f.t = t
				id := f.createItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
				for _, step := range su.steps {
					if _, err := act(id, step); err != nil {
						t.Fatalf("setup %s: %v", step, err)
					}
				}
				before := f.item("en-us", id)
				if before.State != su.state || (before.Published != nil) != su.hasPublished {
					t.Fatalf("setup: state %v published %v, want %v published %v", before.State, before.Published != nil, su.state, su.hasPublished)
				}
				mark := f.lastEvent()
				st, err := act(id, a)
				after := f.item("en-us", id)
				want := wantTransition(su.state, su.hasPublished, a)
				if want == conflict {
					wantKind(t, "refused action", err, problem.Conflict)
					wantDetail(t, "refused action", err, wantReason(su.state, su.hasPublished, a))
					if after.State != before.State || after.VersionID != before.VersionID || !after.Modified.Equal(before.Modified) {
						t.Errorf("after a refused %s: state %v version %d, want unchanged %v version %d", a, after.State, after.VersionID, before.State, before.VersionID)
					}
					f.checkEvents("refused "+string(a), mark)
					return
				}
				if err != nil {
					t.Fatalf("%s from %s: %v, want state %v", a, su.name, err, want)
				}
				if st.State != want || after.State != want {
					t.Errorf("%s from %s: status state %v, stored %v, want %v", a, su.name, st.State, after.State, want)
				}
				wantVersion := before.VersionID
				if a == ActionSave {
					if after.VersionID <= before.VersionID {
						t.Errorf("save: version %d, want more than %d", after.VersionID, before.VersionID)
					}
					wantVersion = after.VersionID
				} else if after.VersionID != before.VersionID {
					t.Errorf("%s: version %d, want unchanged %d", a, after.VersionID, before.VersionID)
				}
				if st.VersionID != wantVersion || st.ContentID != id {
					t.Errorf("%s: status %+v, want contentID %d version %d", a, st, id, wantVersion)
				}
				switch {
				case a == ActionPublish:
					if after.Published == nil || after.Published.VersionID != after.VersionID {
						t.Errorf("publish: published %+v, want version %d", after.Published, after.VersionID)
					}
				case a == ActionUnpublish || a == ActionDelete:
					if after.Published != nil {
						t.Errorf("%s: published %+v, want none", a, after.Published)
					}
				case (before.Published != nil) != (after.Published != nil):
					t.Errorf("%s: published %+v, want it kept as %+v", a, after.Published, before.Published)
				}
				f.checkEvents(string(a), mark, itemEv(a.EventState(), "en-us", "Articles", id, wantVersion, t0))
			})
		}
	}
}

// TestPageWorkflow takes every action on a page copy in every state.
func TestPageWorkflow(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.pages()
	act := func(id int64, a Action) (Status, error) {
		if a == ActionSave {
			p, err := f.s.SavePage(f.ctx, f.inst, "en-us", id, PageInput{MenuText: ptr("menu")})
			return Status{PageID: p.PageID, VersionID: p.VersionID, State: p.State}, err
		}
		return f.s.PageAction(f.ctx, f.inst, "en-us", id, a)
	}
	n := 0
	for _, su := range setups {
		for _, a := range Actions {
			t.Run(su.name+"/"+string(a), func(t *testing.T) {
				f.t = t
				n++
				id := f.createPage("en-us", fmt.Sprintf("Page %d", n), 0).PageID
				for _, step := range su.steps {
					if _, err := act(id, step); err != nil {
						t.Fatalf("setup %s: %v", step, err)
					}
				}
				before := f.page("en-us", id)
				if before.State != su.state || (before.Published != nil) != su.hasPublished {
					t.Fatalf("setup: state %v published %v, want %v published %v", before.State, before.Published != nil, su.state, su.hasPublished)
				}
				mark := f.lastEvent()
				st, err := act(id, a)
				after := f.page("en-us", id)
				want := wantTransition(su.state, su.hasPublished, a)
				if want == conflict {
					wantKind(t, "refused action", err, problem.Conflict)
					wantDetail(t, "refused action", err, wantReason(su.state, su.hasPublished, a))
					if after.State != before.State || after.VersionID != before.VersionID {
						t.Errorf("after a refused %s: state %v version %d, want unchanged %v version %d", a, after.State, after.VersionID, before.State, before.VersionID)
					}
					f.checkEvents("refused "+string(a), mark)
					return
				}
				if err != nil {
					t.Fatalf("%s from %s: %v, want state %v", a, su.name, err, want)
				}
				if st.State != want || after.State != want {
					t.Errorf("%s from %s: status state %v, stored %v, want %v", a, su.name, st.State, after.State, want)
				}
				wantVersion := before.VersionID
				if a == ActionSave {
					if after.VersionID <= before.VersionID {
						t.Errorf("save: version %d, want more than %d", after.VersionID, before.VersionID)
					}
					wantVersion = after.VersionID
				} else if after.VersionID != before.VersionID {
					t.Errorf("%s: version %d, want unchanged %d", a, after.VersionID, before.VersionID)
				}
				if st.VersionID != wantVersion || st.PageID != id {
					t.Errorf("%s: status %+v, want pageID %d version %d", a, st, id, wantVersion)
				}
				if a == ActionPublish && (after.Published == nil || after.Published.VersionID != after.VersionID) {
					t.Errorf("publish: published %+v, want version %d", after.Published, after.VersionID)
				}
				if (a == ActionUnpublish || a == ActionDelete) && after.Published != nil {
					t.Errorf("%s: published %+v, want none", a, after.Published)
				}
				eventVersion := wantVersion
				if a.EventState() == eventlog.Deleted {
					eventVersion = 0 // the spec: a deleted page has pageVersionID 0
				}
				f.checkEvents(string(a), mark, pageEv(a.EventState(), "en-us", id, eventVersion, t0))
			})
		}
	}
}

func TestSaveIsNotAnAction(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.articles()
	f.pages()
	id := f.createItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
	pid := f.createPage("en-us", "Home", 0).PageID
	mark := f.lastEvent()
	_, err := f.s.ItemAction(f.ctx, f.inst, "en-us", id, ActionSave)
	wantKind(t, "ItemAction(save)", err, problem.Invalid)
	_, err = f.s.PageAction(f.ctx, f.inst, "en-us", pid, ActionSave)
	wantKind(t, "PageAction(save)", err, problem.Invalid)
	f.checkEvents("save as an action", mark)
}

func TestActionOnMissingCopy(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.articles()
	f.pages()
	other := f.instance("other")
	id := f.createItem("en-us", "Articles", map[string]any{"title": "T"}).ContentID
	pid := f.createPage("en-us", "Home", 0).PageID
	mark := f.lastEvent()
	tests := []struct {
		name string
		err  error
	}{
		{"item in a locale without a copy", second(f.s.ItemAction(f.ctx, f.inst, "fr-ca", id, ActionPublish))},
		{"unknown item", second(f.s.ItemAction(f.ctx, f.inst, "en-us", id+1000, ActionPublish))},
		{"item of another instance", second(f.s.ItemAction(f.ctx, other, "en-us", id, ActionPublish))},
		{"page in a locale without a copy", second(f.s.PageAction(f.ctx, f.inst, "fr-ca", pid, ActionPublish))},
		{"unknown page", second(f.s.PageAction(f.ctx, f.inst, "en-us", pid+1000, ActionPublish))},
		{"page of another instance", second(f.s.PageAction(f.ctx, other, "en-us", pid, ActionPublish))},
		{"delete item of another instance", f.s.DeleteItem(f.ctx, other, "en-us", id)},
		{"delete page of another instance", f.s.DeletePage(f.ctx, other, "en-us", pid)},
	}
	for _, tt := range tests {
		wantKind(t, tt.name, tt.err, problem.NotFound)
	}
	f.checkEvents("actions on missing copies", mark)
}

func second[T any](_ T, err error) error { return err }

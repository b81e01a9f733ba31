package content

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/problem"
)

func TestRedirectionValidation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		origin, destination string
		status              *int
		fields              []string // nil: accepted
	}{
		{"/old", "/new", nil, nil},
		{"~/old-page", "https://example.com/new?x=1", ptr(302), nil},
		{"https://old.example.com/a", "/b", ptr(301), nil},
		{"", "/new", nil, []string{"originUrl"}},
		{"/old", "", nil, []string{"destinationUrl"}},
		{"/a b", "/new", nil, []string{"originUrl"}},
		{"/old", "/new\n", nil, nil}, // trimmed
		{"/old\x00", "/new", nil, []string{"originUrl"}},
		{"old", "/new", nil, []string{"originUrl"}},
		{"//evil.example.com/x", "/new", nil, []string{"originUrl"}},
		{"/old", "javascript:alert(1)", nil, []string{"destinationUrl"}},
		{"/old", "ftp://example.com/x", nil, []string{"destinationUrl"}},
		{"/same", "/same", nil, []string{"destinationUrl"}},
		{"/old", "/" + strings.Repeat("x", 2048), nil, []string{"destinationUrl"}},
		{"/old", "/new", ptr(307), []string{"statusCode"}},
		{"/old", "/new", ptr(0), []string{"statusCode"}},
	}
	for i, tt := range tests {
		origin := tt.origin
		if tt.fields == nil {
			origin = fmt.Sprintf("%s-%d", tt.origin, i) // each accepted one is new
		}
		r, err := f.s.CreateRedirection(f.ctx, f.inst, RedirectionInput{OriginURL: &origin, DestinationURL: &tt.destination, StatusCode: tt.status})
		what := fmt.Sprintf("CreateRedirection(%q, %q, %v)", origin, tt.destination, tt.status)
		if tt.fields != nil {
			wantFields(t, what, err, tt.fields...)
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", what, err)
			continue
		}
		want := 301
		if tt.status != nil {
			want = *tt.status
		}
		if r.StatusCode != want || r.DestinationURL != strings.TrimSpace(tt.destination) {
			t.Errorf("%s = %+v", what, r)
		}
	}
}

// redirectionList is the redirections and their version, as the Fetch
// API's reads (package render/source) see them.
type redirectionList struct {
	Items   []Redirection
	Changed time.Time
}

func (f *fixture) readRedirections() (redirectionList, error) {
	var l redirectionList
	err := f.db.GetContext(f.ctx, &l.Changed, `SELECT coalesce(
			(SELECT changed_at FROM redirection_versions WHERE instance_id = $1),
			(SELECT date_trunc('milliseconds', created_at) FROM instances WHERE id = $1))`, f.inst.ID)
	if err != nil {
		return l, err
	}
	l.Changed = l.Changed.UTC()
	l.Items, err = f.s.Redirections(f.ctx, f.inst)
	return l, err
}

func TestRedirections(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	list, err := f.readRedirections()
	if err != nil || len(list.Items) != 0 || list.Changed.IsZero() || list.Changed.Nanosecond()%int(time.Millisecond) != 0 {
		t.Fatalf("Redirections of a new instance = %+v, %v; want none, changed when created (ms)", list, err)
	}
	before := list.Changed

	changed := ev{State: eventlog.Deleted, Subject: eventlog.SubjectRedirect, ChangeDate: t0}
	mark := f.lastEvent()
	a, err := f.s.CreateRedirection(f.ctx, f.inst, RedirectionInput{OriginURL: ptr("/old"), DestinationURL: ptr("/new")})
	if err != nil {
		t.Fatal(err)
	}
	f.checkEvents("create", mark, changed)
	_, err = f.s.CreateRedirection(f.ctx, f.inst, RedirectionInput{OriginURL: ptr("/OLD"), DestinationURL: ptr("/x")})
	wantKind(t, "CreateRedirection(a taken origin in other case)", err, problem.Conflict)
	b, err := f.s.CreateRedirection(f.ctx, f.inst, RedirectionInput{OriginURL: ptr("/b"), DestinationURL: ptr("/c"), StatusCode: ptr(302)})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := f.readRedirections()

	mark = f.lastEvent()
	got, err := f.s.UpdateRedirection(f.ctx, f.inst, a.ID, RedirectionInput{StatusCode: ptr(302)})
	if err != nil || got.StatusCode != 302 || got.OriginURL != "/old" || got.DestinationURL != "/new" {
		t.Errorf("UpdateRedirection(status) = %+v, %v", got, err)
	}
	_, err = f.s.UpdateRedirection(f.ctx, f.inst, a.ID, RedirectionInput{OriginURL: ptr("/b")})
	wantKind(t, "UpdateRedirection(to a taken origin)", err, problem.Conflict)
	_, err = f.s.UpdateRedirection(f.ctx, f.inst, a.ID, RedirectionInput{DestinationURL: ptr("/old")})
	wantFields(t, "UpdateRedirection(to itself)", err, "destinationUrl")
	_, err = f.s.UpdateRedirection(f.ctx, f.inst, 999999, RedirectionInput{StatusCode: ptr(301)})
	wantKind(t, "UpdateRedirection(unknown)", err, problem.NotFound)
	f.checkEvents("update", mark, changed)
	second, _ := f.readRedirections()

	if err := f.s.DeleteRedirection(f.ctx, f.inst, b.ID); err != nil {
		t.Fatal(err)
	}
	wantKind(t, "DeleteRedirection again", f.s.DeleteRedirection(f.ctx, f.inst, b.ID), problem.NotFound)
	third, _ := f.readRedirections()
	if len(third.Items) != 1 || third.Items[0].ID != a.ID || third.Items[0].StatusCode != 302 {
		t.Errorf("Redirections after delete = %+v", third.Items)
	}
	// The fixture's clock stands still: each change still moves the
	// version on, by a millisecond.
	for i, c := range []time.Time{before, first.Changed, second.Changed, third.Changed} {
		if i > 0 {
			prev := []time.Time{before, first.Changed, second.Changed}[i-1]
			if !c.After(prev) {
				t.Errorf("version %d = %v, not after %v", i, c, prev)
			}
		}
	}
	if _, err := f.s.Redirection(f.ctx, f.instance("other"), a.ID); !problem.Is(err, problem.NotFound) {
		t.Errorf("Redirection(another instance's) = %v, want NotFound", err)
	}
}

package users_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/users"
)

const password = "correct horse battery"

// clock is a settable time for the stores under test.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newStores(t *testing.T) (*users.Store, *content.Store, *clock) {
	t.Helper()
	db, _ := pgtest.New(t)
	clk := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	us := users.NewStore(db, users.Options{IdleTimeout: 30 * time.Minute, Lifetime: 8 * time.Hour})
	us.Now = clk.now
	return us, content.NewStore(db), clk
}

func wantKind(t *testing.T, what string, err error, k problem.Kind) {
	t.Helper()
	if !problem.Is(err, k) {
		t.Errorf("%s: err = %v (kind %v), want kind %v", what, err, problem.KindOf(err), k)
	}
}

func TestCreateValidates(t *testing.T) {
	t.Parallel()
	us, _, _ := newStores(t)
	ctx := context.Background()
	for _, in := range []users.NewUser{
		{Email: "", Password: password},
		{Email: "not an email", Password: password},
		{Email: "Ann <ann@example.com>", Password: password},
		{Email: "ann@example.com", Password: "short pass"},
		{Email: "ann@example.com", Password: "ééééééééééé"}, // 11 characters, 22 bytes
		{Email: "ann@example.com", Password: strings.Repeat("x", 1025)},
		{Email: strings.Repeat("a", 250) + "@example.com", Password: password},
	} {
		_, err := us.Create(ctx, in)
		wantKind(t, "Create("+in.Email+", "+in.Password+")", err, problem.Invalid)
	}
	u, err := us.Create(ctx, users.NewUser{Email: " Ann@Example.com ", Password: "twelve chars"})
	if err != nil {
		t.Fatal(err)
	}
	if u.Email != "Ann@Example.com" || u.Operator {
		t.Errorf("Create = %+v, want the trimmed email, not an operator", u)
	}
	_, err = us.Create(ctx, users.NewUser{Email: "ann@EXAMPLE.com", Password: password})
	wantKind(t, "Create of the same email in another case", err, problem.Conflict)
}

func TestSignIn(t *testing.T) {
	t.Parallel()
	us, _, _ := newStores(t)
	ctx := context.Background()
	u, err := us.Create(ctx, users.NewUser{Email: "ann@example.com", Password: password, Operator: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := us.SignIn(ctx, "ANN@example.com", password)
	if err != nil || got.ID != u.ID || !got.Operator {
		t.Fatalf("SignIn = %+v, %v; want user %d", got, err, u.ID)
	}
	for _, c := range []struct{ email, password string }{
		{"ann@example.com", password + "!"},
		{"ann@example.com", ""},
		{"bob@example.com", password},
		{"ann@example.com", strings.Repeat("p", 5000)},
	} {
		_, err := us.SignIn(ctx, c.email, c.password)
		wantKind(t, "SignIn("+c.email+")", err, problem.Unauthorized)
		// Both failures say the same thing: the answer does not tell
		// whether the address has an account.
		if err != nil && err.Error() != "wrong email or password" {
			t.Errorf("SignIn(%s) = %q", c.email, err)
		}
	}
	if err := us.SetPassword(ctx, u.ID, "another good password"); err != nil {
		t.Fatal(err)
	}
	if _, err := us.SignIn(ctx, "ann@example.com", password); !problem.Is(err, problem.Unauthorized) {
		t.Errorf("SignIn with the old password after SetPassword = %v, want Unauthorized", err)
	}
	if _, err := us.SignIn(ctx, "ann@example.com", "another good password"); err != nil {
		t.Errorf("SignIn with the new password: %v", err)
	}
}

// BenchmarkSignIn compares a wrong password with an unknown email: both
// run one Argon2id hash, so they cost the same (go test -bench SignIn
// ./users).
func BenchmarkSignIn(b *testing.B) {
	db, _ := pgtest.New(b)
	us := users.NewStore(db, users.Options{})
	ctx := context.Background()
	if _, err := us.Create(ctx, users.NewUser{Email: "ann@example.com", Password: password}); err != nil {
		b.Fatal(err)
	}
	for _, email := range []string{"ann@example.com", "nobody@example.com"} {
		b.Run(email, func(b *testing.B) {
			for b.Loop() {
				if _, err := us.SignIn(ctx, email, "wrong password!"); !problem.Is(err, problem.Unauthorized) {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestRoles(t *testing.T) {
	t.Parallel()
	us, cs, _ := newStores(t)
	ctx := context.Background()
	a, err := cs.CreateInstance(ctx, "site-a", []content.Locale{{Code: "en-us", Name: "English"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := cs.CreateInstance(ctx, "site-b", []content.Locale{{Code: "en-us", Name: "English"}})
	if err != nil {
		t.Fatal(err)
	}
	ed, err := us.Create(ctx, users.NewUser{Email: "ed@example.com", Password: password})
	if err != nil {
		t.Fatal(err)
	}
	op, err := us.Create(ctx, users.NewUser{Email: "op@example.com", Password: password, Operator: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := us.Grant(ctx, ed.ID, a, content.RoleEdit); err != nil {
		t.Fatal(err)
	}
	if err := us.Grant(ctx, ed.ID, a, content.RolePublish); err != nil { // replaces edit
		t.Fatal(err)
	}
	wantKind(t, "Grant of a bad role", us.Grant(ctx, ed.ID, a, "owner"), problem.Invalid)
	wantKind(t, "Grant to an unknown user", us.Grant(ctx, 9999, a, content.RoleEdit), problem.NotFound)

	inst, role, err := us.RoleOn(ctx, ed, cs, "SITE-A")
	if err != nil || role != content.RolePublish || inst.ID != a.ID {
		t.Errorf("RoleOn(ed, site-a) = %+v, %s, %v; want site-a, publish", inst, role, err)
	}
	_, _, err = us.RoleOn(ctx, ed, cs, "site-b")
	wantKind(t, "RoleOn(ed, site-b)", err, problem.Forbidden)
	_, _, err = us.RoleOn(ctx, ed, cs, "no-such-site")
	wantKind(t, "RoleOn(ed, no-such-site)", err, problem.Forbidden)
	inst, role, err = us.RoleOn(ctx, op, cs, "site-b")
	if err != nil || role != content.RoleFull || inst.ID != b.ID {
		t.Errorf("RoleOn(operator, site-b) = %+v, %s, %v; want site-b, full", inst, role, err)
	}
	_, _, err = us.RoleOn(ctx, op, cs, "no-such-site")
	wantKind(t, "RoleOn(operator, no-such-site)", err, problem.NotFound)

	got, err := us.Instances(ctx, ed)
	if err != nil || len(got) != 1 || got[0] != (users.InstanceRole{Guid: "site-a", Role: content.RolePublish}) {
		t.Errorf("Instances(ed) = %+v, %v", got, err)
	}
	got, err = us.Instances(ctx, op)
	if err != nil || len(got) != 2 || got[1] != (users.InstanceRole{Guid: "site-b", Role: content.RoleFull}) {
		t.Errorf("Instances(operator) = %+v, %v", got, err)
	}
	ms, err := us.Members(ctx, a)
	if err != nil || len(ms) != 1 || ms[0].ID != ed.ID || ms[0].Role != content.RolePublish {
		t.Errorf("Members(site-a) = %+v, %v", ms, err)
	}
	if err := us.Revoke(ctx, ed.ID, a); err != nil {
		t.Fatal(err)
	}
	wantKind(t, "Revoke again", us.Revoke(ctx, ed.ID, a), problem.NotFound)
	_, _, err = us.RoleOn(ctx, ed, cs, "site-a")
	wantKind(t, "RoleOn after Revoke", err, problem.Forbidden)

	if err := us.Delete(ctx, "OP@example.com"); err != nil {
		t.Fatal(err)
	}
	wantKind(t, "Delete again", us.Delete(ctx, "op@example.com"), problem.NotFound)
	list, err := us.List(ctx)
	if err != nil || len(list) != 1 || list[0].ID != ed.ID {
		t.Errorf("List = %+v, %v; want ed only", list, err)
	}
}

func TestSessions(t *testing.T) {
	t.Parallel()
	us, _, clk := newStores(t)
	ctx := context.Background()
	u, err := us.Create(ctx, users.NewUser{Email: "ann@example.com", Password: password})
	if err != nil {
		t.Fatal(err)
	}
	secret, _, err := us.StartSession(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := us.StartSession(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if secret == other || len(secret) < 40 {
		t.Fatalf("session ids %q and %q: want two distinct long ids", secret, other)
	}
	_, got, err := us.Session(ctx, secret)
	if err != nil || got.ID != u.ID || got.Email != u.Email {
		t.Fatalf("Session = %+v, %v; want user %d", got, err, u.ID)
	}
	_, _, err = us.Session(ctx, "not-a-session")
	wantKind(t, "an unknown session", err, problem.Unauthorized)

	// Used every 20 minutes, the session outlives the 30 minute idle time.
	for range 5 {
		clk.advance(20 * time.Minute)
		if _, _, err := us.Session(ctx, secret); err != nil {
			t.Fatalf("Session after 20 idle minutes: %v", err)
		}
	}
	// The other one, unused for 100 minutes, has expired, and stays so.
	_, _, err = us.Session(ctx, other)
	wantKind(t, "an idle session", err, problem.Unauthorized)
	_, _, err = us.Session(ctx, other)
	wantKind(t, "an idle session, again", err, problem.Unauthorized)

	// The absolute lifetime (8 h) ends a session in use.
	for clk.advance(20 * time.Minute); clk.t.Before(time.Date(2026, 3, 1, 16, 59, 0, 0, time.UTC)); clk.advance(20 * time.Minute) {
		if _, _, err := us.Session(ctx, secret); err != nil {
			t.Fatalf("Session at %s: %v", clk.t, err)
		}
	}
	clk.advance(time.Hour)
	_, _, err = us.Session(ctx, secret)
	wantKind(t, "a session past its lifetime", err, problem.Unauthorized)

	// Ending a session ends it at once.
	third, _, err := us.StartSession(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := us.EndSession(ctx, third); err != nil {
		t.Fatal(err)
	}
	_, _, err = us.Session(ctx, third)
	wantKind(t, "an ended session", err, problem.Unauthorized)

	// A new password ends every session of the user.
	fourth, _, err := us.StartSession(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := us.SetPassword(ctx, u.ID, "a brand new password"); err != nil {
		t.Fatal(err)
	}
	_, _, err = us.Session(ctx, fourth)
	wantKind(t, "a session after a password change", err, problem.Unauthorized)
}

func TestCSRFToken(t *testing.T) {
	t.Parallel()
	a, b := users.CSRFToken("session-a"), users.CSRFToken("session-b")
	if a == b || a != users.CSRFToken("session-a") || len(a) < 40 {
		t.Errorf("CSRFToken: %q, %q: want stable, distinct, long tokens", a, b)
	}
	if !users.CheckCSRF("session-a", a) || users.CheckCSRF("session-a", b) || users.CheckCSRF("session-a", "") {
		t.Error("CheckCSRF accepts a wrong token or refuses the right one")
	}
}

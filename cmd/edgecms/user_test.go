package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/users"
)

// TestUserCommands runs user create, grant and delete on a fresh database,
// and the demo's user.
func TestUserCommands(t *testing.T) {
	db, url := pgtest.New(t)
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg, err := loadConfig(flag.NewFlagSet("test", flag.ContinueOnError), []string{"--database-url", url})
	if err != nil {
		t.Fatal(err)
	}
	cs := content.NewStore(db)
	inst, err := cs.CreateInstance(ctx, "site", []content.Locale{{Code: "en-us", Name: "English"}})
	if err != nil {
		t.Fatal(err)
	}
	run := func(fn func(context.Context, config, *flag.FlagSet, *slog.Logger) error, email, guid, role string, operator bool) error {
		userArgs.email, userArgs.guid, userArgs.role, userArgs.operator = email, guid, role, operator
		return fn(ctx, cfg, nil, log)
	}

	t.Setenv("EDGECMS_USER_PASSWORD", "short")
	if err := run(runUserCreate, "ann@example.com", "", "", false); err == nil || !strings.Contains(err.Error(), "at least 12") {
		t.Errorf("user create with a short password: %v", err)
	}
	t.Setenv("EDGECMS_USER_PASSWORD", "ann's long password")
	if err := run(runUserCreate, "not-an-email", "", "", false); err == nil {
		t.Error("user create with a bad email succeeded")
	}
	if err := run(runUserCreate, "ann@example.com", "", "", true); err != nil {
		t.Fatal(err)
	}
	if err := run(runUserCreate, "ANN@example.com", "", "", false); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("user create of a taken email: %v, want a one-line error", err)
	}
	for _, c := range []struct{ email, guid, role string }{
		{"ann@example.com", "site", "owner"}, {"bob@example.com", "site", "edit"}, {"ann@example.com", "nosite", "edit"}, {"", "site", "edit"},
	} {
		if err := run(runUserGrant, c.email, c.guid, c.role, false); err == nil {
			t.Errorf("user grant %+v succeeded", c)
		}
	}
	if err := run(runUserGrant, "ann@example.com", "site", "publish", false); err != nil {
		t.Fatal(err)
	}
	us := users.NewStore(db, users.Options{})
	u, err := us.SignIn(ctx, "ann@example.com", "ann's long password")
	if err != nil || !u.Operator {
		t.Fatalf("sign in as the created user: %+v, %v", u, err)
	}
	ms, err := us.Members(ctx, inst)
	if err != nil || len(ms) != 1 || ms[0].Role != content.RolePublish {
		t.Errorf("members after grant = %+v, %v", ms, err)
	}
	if err := run(runUserList, "", "", "", false); err != nil {
		t.Error(err)
	}
	if err := run(runUserDelete, "Ann@example.com", "", "", false); err != nil {
		t.Fatal(err)
	}
	if err := run(runUserDelete, "ann@example.com", "", "", false); err == nil {
		t.Error("deleting a deleted user succeeded")
	}

	// The demo's user gets a new password on every run.
	d1, err := makeDemoUser(ctx, us, inst)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := makeDemoUser(ctx, us, inst)
	if err != nil {
		t.Fatal(err)
	}
	if d1.Email != "editor@site.example" || d1.Password == d2.Password || len(d2.Password) < users.MinPasswordChars {
		t.Errorf("demo users %+v, %+v", d1, d2)
	}
	if _, err := us.SignIn(ctx, d2.Email, d2.Password); err != nil {
		t.Errorf("sign in as the demo user: %v", err)
	}
	if _, err := us.SignIn(ctx, d1.Email, d1.Password); err == nil {
		t.Error("the demo user's old password still works")
	}
}

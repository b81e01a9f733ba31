package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/jmoiron/sqlx"
	"golang.org/x/term"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/users"
)

// userStore is the store of users with the configured session times.
func userStore(db *sqlx.DB, cfg config) *users.Store {
	return users.NewStore(db, users.Options{IdleTimeout: cfg.SessionIdle, Lifetime: cfg.SessionLifetime})
}

// studioURL is where the Studio is served on cfg.Addr.
func studioURL(cfg config) string {
	scheme := "http"
	if cfg.TLSCert != "" {
		scheme = "https"
	}
	host := cfg.Addr
	if strings.HasPrefix(host, ":") {
		host = "127.0.0.1" + host
	}
	return scheme + "://" + host + "/studio/"
}

// userArgs are the flags of the user commands.
var userArgs struct {
	email, guid, role string
	operator          bool
}

func userCreateFlags(fs *flag.FlagSet) {
	fs.StringVar(&userArgs.email, "email", "", "the user's email address")
	fs.BoolVar(&userArgs.operator, "operator", false, "make the user an operator: full control of every instance")
}

func userGrantFlags(fs *flag.FlagSet) {
	fs.StringVar(&userArgs.email, "email", "", "the user's email address")
	fs.StringVar(&userArgs.guid, "guid", "", "the instance")
	fs.StringVar(&userArgs.role, "role", "", "the role on the instance: edit, publish, manage or full")
}

func userEmailFlag(fs *flag.FlagSet) {
	fs.StringVar(&userArgs.email, "email", "", "the user's email address")
}

// withUsers opens the migrated database and runs fn on the stores.
func withUsers(ctx context.Context, cfg config, log *slog.Logger, fn func(*users.Store, *content.Store) error) error {
	db, err := openMigrated(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(userStore(db, cfg), content.NewStore(db))
}

// newPassword reads the password of a new user from
// EDGECMS_USER_PASSWORD, or asks for it twice on a terminal.
func newPassword() (string, error) {
	if p, ok := os.LookupEnv("EDGECMS_USER_PASSWORD"); ok {
		return p, nil
	}
	fd := int(os.Stdin.Fd())
	if !term.IsTerminal(fd) {
		return "", errors.New("set EDGECMS_USER_PASSWORD, or run on a terminal to type the password")
	}
	fmt.Fprintf(os.Stderr, "Password (at least %d characters): ", users.MinPasswordChars)
	p, err := term.ReadPassword(fd)
	fmt.Fprintln(os.Stderr)
	if err != nil {
		return "", err
	}
	fmt.Fprint(os.Stderr, "Again: ")
	again, err := term.ReadPassword(fd)
	fmt.Fprintln(os.Stderr)
	if err != nil {
		return "", err
	}
	if string(p) != string(again) {
		return "", errors.New("the passwords differ")
	}
	return string(p), nil
}

// oneLine turns a store error into the one-line reason the command prints.
func oneLine(err error) error {
	if err == nil {
		return nil
	}
	return errors.New(strings.ReplaceAll(err.Error(), "\n", "; "))
}

func runUserCreate(ctx context.Context, cfg config, _ *flag.FlagSet, log *slog.Logger) error {
	if userArgs.email == "" {
		return errors.New("--email is required")
	}
	if _, err := users.NormalizeEmail(userArgs.email); err != nil {
		return err
	}
	password, err := newPassword()
	if err != nil {
		return err
	}
	return withUsers(ctx, cfg, log, func(us *users.Store, _ *content.Store) error {
		u, err := us.Create(ctx, users.NewUser{Email: userArgs.email, Password: password, Operator: userArgs.operator})
		if err != nil {
			return oneLine(err)
		}
		return printJSON(u)
	})
}

func runUserGrant(ctx context.Context, cfg config, _ *flag.FlagSet, log *slog.Logger) error {
	switch {
	case userArgs.email == "":
		return errors.New("--email is required")
	case userArgs.guid == "":
		return errors.New("--guid is required")
	case !content.Role(userArgs.role).Valid():
		return fmt.Errorf("--role must be one of edit, publish, manage, full, not %q", userArgs.role)
	}
	return withUsers(ctx, cfg, log, func(us *users.Store, cs *content.Store) error {
		u, err := us.ByEmail(ctx, userArgs.email)
		if err != nil {
			return err
		}
		inst, err := cs.Instance(ctx, userArgs.guid)
		if err != nil {
			return err
		}
		if err := us.Grant(ctx, u.ID, inst, content.Role(userArgs.role)); err != nil {
			return err
		}
		return printJSON(users.Member{User: u, Role: content.Role(userArgs.role)})
	})
}

// listedUser is a user as user list prints it: with the instances.
type listedUser struct {
	users.User
	Instances []users.InstanceRole `json:"instances"`
}

func runUserList(ctx context.Context, cfg config, _ *flag.FlagSet, log *slog.Logger) error {
	return withUsers(ctx, cfg, log, func(us *users.Store, _ *content.Store) error {
		all, err := us.List(ctx)
		if err != nil {
			return err
		}
		out := make([]listedUser, len(all))
		for i, u := range all {
			insts, err := us.Instances(ctx, u)
			if err != nil {
				return err
			}
			out[i] = listedUser{User: u, Instances: insts}
		}
		return printJSON(out)
	})
}

func runUserDelete(ctx context.Context, cfg config, _ *flag.FlagSet, log *slog.Logger) error {
	if userArgs.email == "" {
		return errors.New("--email is required")
	}
	return withUsers(ctx, cfg, log, func(us *users.Store, _ *content.Store) error {
		return us.Delete(ctx, userArgs.email)
	})
}

// demoUser is the demo's user and the password it was given.
type demoUser struct {
	Email    string       `json:"email"`
	Password string       `json:"password"`
	Role     content.Role `json:"role"`
}

// makeDemoUser makes (or gives a new password to) the demo's user,
// editor@<guid>.example, with full control of the instance, so that
// every screen of the Studio can be tried.
func makeDemoUser(ctx context.Context, us *users.Store, inst content.Instance) (*demoUser, error) {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	d := &demoUser{Email: "editor@" + inst.Guid + ".example", Password: base64.RawURLEncoding.EncodeToString(b[:]), Role: content.RoleFull}
	u, err := us.ByEmail(ctx, d.Email)
	switch {
	case problem.Is(err, problem.NotFound):
		u, err = us.Create(ctx, users.NewUser{Email: d.Email, Password: d.Password})
	case err == nil:
		err = us.SetPassword(ctx, u.ID, d.Password)
	}
	if err != nil {
		return nil, err
	}
	return d, us.Grant(ctx, u.ID, inst, d.Role)
}

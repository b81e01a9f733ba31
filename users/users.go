// Package users holds the people who use the Studio and the management API
// in a browser: their accounts (an email address and an Argon2id password
// hash), their role per instance (or operator of all instances), and their
// sign-in sessions.
//
// Machines keep using management tokens (package content); a person signs
// in with POST /api/v1/auth/login and gets a session whose secret id lives
// only in an HttpOnly cookie: the database keeps its SHA-256 hash. A
// session ends on sign-out, after an idle time and after an absolute
// lifetime, whichever comes first. Every origin shares the sessions through
// Postgres (schema/011_users.sql).
package users

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/internal/pg"
	"github.com/edgecms/edgecms/problem"
)

// User is a person's account. The password hash never leaves the package.
type User struct {
	ID        int64     `db:"id" json:"id"`
	Email     string    `db:"email" json:"email"`
	Operator  bool      `db:"operator" json:"operator"`
	CreatedAt time.Time `db:"created_at" json:"createdAt"`
}

// Actor is how changes made by the user are recorded: "user:<id>".
func (u User) Actor() string { return fmt.Sprintf("user:%d", u.ID) }

// InstanceRole is a user's role on one instance.
type InstanceRole struct {
	Guid string       `db:"guid" json:"guid"`
	Role content.Role `db:"role" json:"role"`
}

// Member is a user as one instance's user list shows it: with the role
// granted there.
type Member struct {
	User
	Role content.Role `db:"role" json:"role"`
}

// Options configures a Store.
type Options struct {
	// IdleTimeout ends a session not used for this long (default 1 h).
	IdleTimeout time.Duration
	// Lifetime ends a session this long after sign-in, however much it is
	// used (default 24 h).
	Lifetime time.Duration
}

// Store is the Postgres repository of users, roles and sessions.
type Store struct {
	db   *sqlx.DB
	opts Options
	// Now is the clock; tests replace it.
	Now func() time.Time
}

// NewStore returns a Store on db.
func NewStore(db *sqlx.DB, opts Options) *Store {
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = time.Hour
	}
	if opts.Lifetime <= 0 {
		opts.Lifetime = 24 * time.Hour
	}
	return &Store{db: db, opts: opts, Now: time.Now}
}

// Options returns the store's options with their defaults applied.
func (s *Store) Options() Options { return s.opts }

func (s *Store) now() time.Time { return s.Now().UTC().Truncate(time.Microsecond) }

// NormalizeEmail trims an email address and checks its form: one plain
// address (local@domain), at most 254 characters.
func NormalizeEmail(email string) (string, error) {
	e := strings.TrimSpace(email)
	a, err := mail.ParseAddress(e)
	if err != nil || a.Address != e || a.Name != "" || len(e) > 254 {
		return "", problem.Field("email", "must be an email address like editor@example.com")
	}
	return e, nil
}

// NewUser is what creating a user takes.
type NewUser struct {
	Email    string
	Password string
	Operator bool
}

const (
	userColumns       = `id, email, operator, created_at`
	insertUserSQL     = `INSERT INTO users (email, password_hash, operator) VALUES ($1, $2, $3) RETURNING ` + userColumns
	selectUserSQL     = `SELECT ` + userColumns + ` FROM users WHERE lower(email) = lower($1)`
	selectUsersSQL    = `SELECT ` + userColumns + ` FROM users ORDER BY lower(email)`
	selectHashSQL     = `SELECT ` + userColumns + `, password_hash FROM users WHERE lower(email) = lower($1)`
	updatePasswordSQL = `UPDATE users SET password_hash = $2 WHERE id = $1`
	deleteUserSQL     = `DELETE FROM users WHERE lower(email) = lower($1)`
)

// Create creates a user. An email address already taken (in any case) is
// a Conflict.
func (s *Store) Create(ctx context.Context, in NewUser) (User, error) {
	email, err := NormalizeEmail(in.Email)
	if err != nil {
		return User{}, err
	}
	if err := checkPassword(in.Password); err != nil {
		return User{}, err
	}
	var u User
	err = s.db.GetContext(ctx, &u, insertUserSQL, email, hashPassword(in.Password), in.Operator)
	if pg.IsUniqueViolation(err) {
		return User{}, problem.Conflictf("a user with the email %q already exists", email)
	}
	if err != nil {
		return User{}, fmt.Errorf("create user: %w", err)
	}
	return u, nil
}

// ByEmail returns the user of an email address (in any case).
func (s *Store) ByEmail(ctx context.Context, email string) (User, error) {
	var u User
	if err := s.db.GetContext(ctx, &u, selectUserSQL, strings.TrimSpace(email)); err != nil {
		return User{}, content.NotFound(err, "no user with the email %q", email)
	}
	return u, nil
}

// List lists every user, by email address.
func (s *Store) List(ctx context.Context) ([]User, error) {
	us := []User{}
	if err := s.db.SelectContext(ctx, &us, selectUsersSQL); err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return us, nil
}

// SetPassword replaces a user's password and ends the user's sessions.
func (s *Store) SetPassword(ctx context.Context, userID int64, password string) error {
	if err := checkPassword(password); err != nil {
		return err
	}
	return pg.Transact(ctx, s.db, func(tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, updatePasswordSQL, userID, hashPassword(password))
		if err := content.CheckAffected(res, err, "user %d not found", userID); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, deleteUserSessionsSQL, userID)
		return err
	})
}

// Delete deletes the user of an email address, with the user's roles and
// sessions.
func (s *Store) Delete(ctx context.Context, email string) error {
	res, err := s.db.ExecContext(ctx, deleteUserSQL, strings.TrimSpace(email))
	return content.CheckAffected(res, err, "no user with the email %q", email)
}

// SignIn returns the user whose email and password these are. A wrong
// password and an unknown email are the same Unauthorized problem, and
// cost the same time: an unknown email is checked against a decoy hash.
func (s *Store) SignIn(ctx context.Context, email, password string) (User, error) {
	var row struct {
		User
		Hash string `db:"password_hash"`
	}
	err := s.db.GetContext(ctx, &row, selectHashSQL, strings.TrimSpace(email))
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return User{}, fmt.Errorf("sign in: %w", err)
	}
	known := err == nil
	hash := row.Hash
	if !known {
		hash = decoy()
	}
	if len(password) > maxPasswordBytes {
		password = password[:maxPasswordBytes] // bounded work; such a password never matched
		known = false
	}
	ok, err := verifyPassword(hash, password)
	if err != nil {
		return User{}, fmt.Errorf("sign in user %d: %w", row.ID, err)
	}
	if !ok || !known {
		return User{}, problem.Unauthorizedf("wrong email or password")
	}
	return row.User, nil
}

const (
	grantSQL = `INSERT INTO user_roles (user_id, instance_id, role) VALUES ($1, $2, $3)
		ON CONFLICT (user_id, instance_id) DO UPDATE SET role = excluded.role`
	revokeSQL  = `DELETE FROM user_roles WHERE user_id = $1 AND instance_id = $2`
	membersSQL = `SELECT u.id, u.email, u.operator, u.created_at, r.role FROM user_roles r
		JOIN users u ON u.id = r.user_id WHERE r.instance_id = $1 ORDER BY lower(u.email)`
	userRolesSQL = `SELECT i.guid, r.role FROM user_roles r JOIN instances i ON i.id = r.instance_id
		WHERE r.user_id = $1 ORDER BY i.guid`
	allInstancesSQL = `SELECT guid, 'full' AS role FROM instances ORDER BY guid`
	roleOnSQL       = `SELECT i.id, i.guid, i.created_at, r.role FROM user_roles r
		JOIN instances i ON i.id = r.instance_id WHERE r.user_id = $1 AND i.guid = $2`
)

// Grant gives a user a role on an instance, replacing any role the user
// had there.
func (s *Store) Grant(ctx context.Context, userID int64, inst content.Instance, role content.Role) error {
	if !role.Valid() {
		return problem.Field("role", "must be one of edit, publish, manage, full")
	}
	_, err := s.db.ExecContext(ctx, grantSQL, userID, inst.ID, role)
	if pg.Code(err) == pg.CodeForeignKeyViolation {
		return problem.NotFoundf("user %d not found", userID)
	}
	if err != nil {
		return fmt.Errorf("grant %s on %s to user %d: %w", role, inst.Guid, userID, err)
	}
	return nil
}

// Revoke takes away a user's role on an instance.
func (s *Store) Revoke(ctx context.Context, userID int64, inst content.Instance) error {
	res, err := s.db.ExecContext(ctx, revokeSQL, userID, inst.ID)
	return content.CheckAffected(res, err, "user %d has no role on instance %q", userID, inst.Guid)
}

// Members lists the users who have a role on an instance.
func (s *Store) Members(ctx context.Context, inst content.Instance) ([]Member, error) {
	ms := []Member{}
	if err := s.db.SelectContext(ctx, &ms, membersSQL, inst.ID); err != nil {
		return nil, fmt.Errorf("list members of %s: %w", inst.Guid, err)
	}
	return ms, nil
}

// Instances lists the instances a user may work on with the role there:
// every instance, with full control, for an operator.
func (s *Store) Instances(ctx context.Context, u User) ([]InstanceRole, error) {
	q, args := userRolesSQL, []any{u.ID}
	if u.Operator {
		q, args = allInstancesSQL, nil
	}
	rs := []InstanceRole{}
	if err := s.db.SelectContext(ctx, &rs, q, args...); err != nil {
		return nil, fmt.Errorf("list instances of user %d: %w", u.ID, err)
	}
	return rs, nil
}

// RoleOn returns the instance guid and the user's role on it: full control
// for an operator. A user without a role there is Forbidden, whether the
// instance exists or not; for an operator an unknown instance is NotFound.
func (s *Store) RoleOn(ctx context.Context, u User, cs *content.Store, guid string) (content.Instance, content.Role, error) {
	if u.Operator {
		inst, err := cs.Instance(ctx, guid)
		return inst, content.RoleFull, err
	}
	var row struct {
		content.Instance
		Role content.Role `db:"role"`
	}
	err := s.db.GetContext(ctx, &row, roleOnSQL, u.ID, strings.ToLower(guid))
	if errors.Is(err, sql.ErrNoRows) {
		return content.Instance{}, "", problem.Forbiddenf("you have no role on instance %q", guid)
	}
	if err != nil {
		return content.Instance{}, "", fmt.Errorf("role of user %d on %s: %w", u.ID, guid, err)
	}
	return row.Instance, row.Role, nil
}

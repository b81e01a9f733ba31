package users

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/edgecms/edgecms/problem"
)

// Session is a signed-in user's session. Its secret id is known only to
// the browser that holds the cookie.
type Session struct {
	UserID     int64     `db:"user_id"`
	CreatedAt  time.Time `db:"created_at"`
	LastSeenAt time.Time `db:"last_seen_at"`
	ExpiresAt  time.Time `db:"expires_at"`
}

// touchEvery is how stale a session's last use may be before a request
// records it again: the idle timeout is exact to within this, and a
// session in use costs one write a minute, not one per request.
const touchEvery = time.Minute

func hashID(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// CSRFToken is the token a request authenticated by the session whose
// secret id is secret must send in X-CSRF-Token to change anything. It is
// derived from the secret (an HMAC keyed by it), so it needs no storage
// and no page of another site can compute it: that page can make the
// browser send the cookie, but cannot read it.
func CSRFToken(secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("edgecms csrf token"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CheckCSRF reports whether token is the CSRF token of the session secret,
// comparing in constant time.
func CheckCSRF(secret, token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(CSRFToken(secret)), []byte(token)) == 1
}

const (
	insertSessionSQL = `INSERT INTO sessions (id_hash, user_id, created_at, last_seen_at, expires_at)
		VALUES ($1, $2, $3, $3, $4)`
	selectSessionSQL = `SELECT s.user_id, s.created_at, s.last_seen_at, s.expires_at,
		u.id AS "u.id", u.email AS "u.email", u.operator AS "u.operator", u.created_at AS "u.created_at"
		FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id_hash = $1`
	touchSessionSQL       = `UPDATE sessions SET last_seen_at = $2 WHERE id_hash = $1`
	deleteSessionSQL      = `DELETE FROM sessions WHERE id_hash = $1`
	deleteUserSessionsSQL = `DELETE FROM sessions WHERE user_id = $1`
	// Sessions nobody ends explicitly are deleted in small batches at
	// sign-in, so that the table holds about the live ones.
	purgeSessionsSQL = `DELETE FROM sessions WHERE id_hash IN (
		SELECT id_hash FROM sessions WHERE last_seen_at < $1 OR expires_at < $2 LIMIT 100)`
)

// StartSession starts a session for a user who just signed in and returns
// its secret id, for the cookie. Every sign-in gets a new id.
func (s *Store) StartSession(ctx context.Context, userID int64) (string, Session, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	secret := base64.RawURLEncoding.EncodeToString(b[:])
	now := s.now()
	sess := Session{UserID: userID, CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(s.opts.Lifetime)}
	if _, err := s.db.ExecContext(ctx, purgeSessionsSQL, now.Add(-s.opts.IdleTimeout), now); err != nil {
		return "", Session{}, fmt.Errorf("purge sessions: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, insertSessionSQL, hashID(secret), userID, now, sess.ExpiresAt); err != nil {
		return "", Session{}, fmt.Errorf("start session: %w", err)
	}
	return secret, sess, nil
}

// Session returns the live session whose secret id is secret, and its
// user, and records its use. An unknown, ended or expired session is
// Unauthorized (an expired one is deleted).
func (s *Store) Session(ctx context.Context, secret string) (Session, User, error) {
	var row struct {
		Session
		User `db:"u"`
	}
	id := hashID(secret)
	err := s.db.GetContext(ctx, &row, selectSessionSQL, id)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, User{}, problem.Unauthorizedf("the session has ended; sign in again")
	}
	if err != nil {
		return Session{}, User{}, fmt.Errorf("read session: %w", err)
	}
	now := s.now()
	if !now.Before(row.ExpiresAt) || now.Sub(row.LastSeenAt) >= s.opts.IdleTimeout {
		if _, err := s.db.ExecContext(ctx, deleteSessionSQL, id); err != nil {
			return Session{}, User{}, fmt.Errorf("end expired session: %w", err)
		}
		return Session{}, User{}, problem.Unauthorizedf("the session has expired; sign in again")
	}
	if now.Sub(row.LastSeenAt) >= touchEvery {
		if _, err := s.db.ExecContext(ctx, touchSessionSQL, id, now); err != nil {
			return Session{}, User{}, fmt.Errorf("record session use: %w", err)
		}
		row.LastSeenAt = now
	}
	return row.Session, row.User, nil
}

// EndSession ends the session whose secret id is secret, if there is one.
func (s *Store) EndSession(ctx context.Context, secret string) error {
	if _, err := s.db.ExecContext(ctx, deleteSessionSQL, hashID(secret)); err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}

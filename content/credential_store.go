package content

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/problem"
)

// Token is a management API credential. The secret itself is never stored:
// only its SHA-256 hash, so it is shown once, when created.
type Token struct {
	ID         int64     `db:"id" json:"id"`
	InstanceID int64     `db:"instance_id" json:"-"`
	Name       string    `db:"name" json:"name"`
	Role       Role      `db:"role" json:"role"`
	CreatedAt  time.Time `db:"created_at" json:"createdAt"`
}

// APIKey is a Fetch API credential of type "fetch" or "preview". Like a
// token, only its hash is stored.
type APIKey struct {
	ID         int64      `db:"id" json:"id"`
	InstanceID int64      `db:"instance_id" json:"-"`
	Name       string     `db:"name" json:"name"`
	Type       string     `db:"type" json:"type"`
	Hash       []byte     `db:"key_hash" json:"-"`
	ExpiresAt  *time.Time `db:"expires_at" json:"expiresAt"`
	Enabled    bool       `db:"enabled" json:"enabled"`
	CreatedAt  time.Time  `db:"created_at" json:"createdAt"`
	UpdatedAt  time.Time  `db:"updated_at" json:"updatedAt"`
}

// Usable reports whether the key is enabled and not expired at now.
func (k APIKey) Usable(now time.Time) bool {
	return k.Enabled && (k.ExpiresAt == nil || now.Before(*k.ExpiresAt))
}

// HashSecret is the stored form of a token or API key.
func HashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

var secretEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// newSecret returns prefix + 32 random base32 characters (160 bits).
func newSecret(prefix string) string {
	var b [20]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return prefix + strings.ToLower(secretEncoding.EncodeToString(b[:]))
}

const (
	insertTokenSQL = `INSERT INTO tokens (instance_id, name, role, token_hash) VALUES ($1, $2, $3, $4)
		RETURNING id, instance_id, name, role, created_at`
	selectTokenSQL = `SELECT t.id, t.instance_id, t.name, t.role, t.created_at FROM tokens t
		JOIN instances i ON i.id = t.instance_id WHERE i.guid = $1 AND t.token_hash = $2`
	selectTokensSQL = `SELECT id, instance_id, name, role, created_at FROM tokens WHERE instance_id = $1 ORDER BY id`
	deleteTokenSQL  = `DELETE FROM tokens WHERE instance_id = $1 AND id = $2`
)

func validateName(field, name string) *problem.FieldError {
	if n := len(strings.TrimSpace(name)); n == 0 || len(name) > 200 {
		return &problem.FieldError{Field: field, Reason: "must be 1 to 200 characters"}
	}
	return nil
}

// CreateToken creates a management token and returns it with its secret,
// which is not stored and cannot be shown again.
func (s *Store) CreateToken(ctx context.Context, inst Instance, name string, role Role) (Token, string, error) {
	return createToken(ctx, s.db, inst, name, role)
}

func createToken(ctx context.Context, q sqlx.QueryerContext, inst Instance, name string, role Role) (Token, string, error) {
	var errs []problem.FieldError
	if fe := validateName("name", name); fe != nil {
		errs = append(errs, *fe)
	}
	if !role.Valid() {
		errs = append(errs, problem.FieldError{Field: "role", Reason: "must be one of edit, publish, manage, full"})
	}
	if err := problem.Fields(errs); err != nil {
		return Token{}, "", err
	}
	secret := newSecret("mt_")
	var t Token
	if err := sqlx.GetContext(ctx, q, &t, insertTokenSQL, inst.ID, strings.TrimSpace(name), role, HashSecret(secret)); err != nil {
		return Token{}, "", fmt.Errorf("create token: %w", err)
	}
	return t, secret, nil
}

// Tokens lists an instance's management tokens (without secrets).
func (s *Store) Tokens(ctx context.Context, inst Instance) ([]Token, error) {
	ts := []Token{}
	err := s.db.SelectContext(ctx, &ts, selectTokensSQL, inst.ID)
	return ts, err
}

// DeleteToken revokes a management token.
func (s *Store) DeleteToken(ctx context.Context, inst Instance, id int64) error {
	res, err := s.db.ExecContext(ctx, deleteTokenSQL, inst.ID, id)
	return checkAffected(res, err, "token %d not found", id)
}

// Authenticate returns the token of instance guid whose secret is secret. An
// unknown secret, or the secret of another instance's token, is Unauthorized.
func (s *Store) Authenticate(ctx context.Context, guid, secret string) (Token, error) {
	var t Token
	err := s.db.GetContext(ctx, &t, selectTokenSQL, strings.ToLower(guid), HashSecret(secret))
	if err != nil {
		return Token{}, notFoundAs(err, problem.Unauthorized, "the token is not valid for instance %q", guid)
	}
	return t, nil
}

func notFoundAs(err error, k problem.Kind, format string, args ...any) error {
	if problem.Is(notFound(err, ""), problem.NotFound) {
		return problem.New(k, format, args...)
	}
	return err
}

// APIKeyInput is what a caller may set on an API key.
type APIKeyInput struct {
	Name      *string
	Type      string
	ExpiresAt *time.Time
	// ClearExpiry removes the expiry date (a JSON null on update).
	ClearExpiry bool
	Enabled     *bool
}

const (
	insertAPIKeySQL = `INSERT INTO api_keys (instance_id, name, type, key_hash, expires_at) VALUES ($1, $2, $3, $4, $5)
		RETURNING *`
	selectAPIKeysSQL = `SELECT * FROM api_keys WHERE instance_id = $1 ORDER BY id`
	selectAPIKeySQL  = `SELECT * FROM api_keys WHERE instance_id = $1 AND id = $2 FOR UPDATE`
	updateAPIKeySQL  = `UPDATE api_keys SET name = $3, expires_at = $4, enabled = $5, updated_at = now()
		WHERE instance_id = $1 AND id = $2 RETURNING *`
	deleteAPIKeySQL = `DELETE FROM api_keys WHERE instance_id = $1 AND id = $2`
	lookupAPIKeySQL = `SELECT k.* FROM api_keys k JOIN instances i ON i.id = k.instance_id
		WHERE i.guid = $1 AND k.key_hash = $2`
)

// CreateAPIKey creates a Fetch API key and returns it with its secret, which
// is not stored and cannot be shown again.
func (s *Store) CreateAPIKey(ctx context.Context, inst Instance, in APIKeyInput) (APIKey, string, error) {
	return createAPIKey(ctx, s.db, inst, in, s.now())
}

func createAPIKey(ctx context.Context, q sqlx.QueryerContext, inst Instance, in APIKeyInput, now time.Time) (APIKey, string, error) {
	var errs []problem.FieldError
	name := ""
	if in.Name != nil {
		name = *in.Name
	}
	if fe := validateName("name", name); fe != nil {
		errs = append(errs, *fe)
	}
	if in.Type != "fetch" && in.Type != "preview" {
		errs = append(errs, problem.FieldError{Field: "type", Reason: `must be "fetch" or "preview"`})
	}
	if in.ExpiresAt != nil && !in.ExpiresAt.After(now) {
		errs = append(errs, problem.FieldError{Field: "expiresAt", Reason: "must be in the future"})
	}
	if err := problem.Fields(errs); err != nil {
		return APIKey{}, "", err
	}
	secret := newSecret(map[string]string{"fetch": "live_", "preview": "preview_"}[in.Type])
	var k APIKey
	err := sqlx.GetContext(ctx, q, &k, insertAPIKeySQL, inst.ID, strings.TrimSpace(name), in.Type, HashSecret(secret), in.ExpiresAt)
	if err != nil {
		return APIKey{}, "", fmt.Errorf("create api key: %w", err)
	}
	return k, secret, nil
}

// APIKeys lists an instance's API keys (without secrets).
func (s *Store) APIKeys(ctx context.Context, inst Instance) ([]APIKey, error) {
	ks := []APIKey{}
	err := s.db.SelectContext(ctx, &ks, selectAPIKeysSQL, inst.ID)
	return ks, err
}

// UpdateAPIKey renames, enables, disables or changes the expiry of a key.
func (s *Store) UpdateAPIKey(ctx context.Context, inst Instance, id int64, in APIKeyInput) (APIKey, error) {
	var k APIKey
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		if err := tx.GetContext(ctx, &k, selectAPIKeySQL, inst.ID, id); err != nil {
			return notFound(err, "api key %d not found", id)
		}
		if in.Name != nil {
			if fe := validateName("name", *in.Name); fe != nil {
				return problem.Fields([]problem.FieldError{*fe})
			}
			k.Name = strings.TrimSpace(*in.Name)
		}
		if in.ClearExpiry {
			k.ExpiresAt = nil
		} else if in.ExpiresAt != nil {
			k.ExpiresAt = in.ExpiresAt
		}
		if in.Enabled != nil {
			k.Enabled = *in.Enabled
		}
		return tx.GetContext(ctx, &k, updateAPIKeySQL, inst.ID, id, k.Name, k.ExpiresAt, k.Enabled)
	})
	if err != nil {
		return APIKey{}, fmt.Errorf("update api key %d: %w", id, err)
	}
	return k, nil
}

// DeleteAPIKey deletes an API key.
func (s *Store) DeleteAPIKey(ctx context.Context, inst Instance, id int64) error {
	res, err := s.db.ExecContext(ctx, deleteAPIKeySQL, inst.ID, id)
	return checkAffected(res, err, "api key %d not found", id)
}

// LookupAPIKey returns the API key of instance guid with the given secret,
// usable or not, or NotFound.
func (s *Store) LookupAPIKey(ctx context.Context, guid, secret string) (APIKey, error) {
	var k APIKey
	err := s.db.GetContext(ctx, &k, lookupAPIKeySQL, strings.ToLower(guid), HashSecret(secret))
	if err != nil {
		return APIKey{}, notFound(err, "unknown api key")
	}
	return k, nil
}

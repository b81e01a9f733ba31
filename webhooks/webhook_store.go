package webhooks

import (
	"context"
	"crypto/hmac"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/webhooks/signature"
)

// Webhook is a webhook as the management API shows it. Signing secrets are
// masked except on the save that generates one and on rotation.
type Webhook struct {
	RowKey                string     `json:"rowKey"`
	Name                  string     `json:"name"`
	URL                   string     `json:"url"`
	Enabled               bool       `json:"enabled"`
	ContentPublishEvents  bool       `json:"contentPublishEvents"`
	ContentSaveEvents     bool       `json:"contentSaveEvents"`
	ContentWorkflowEvents bool       `json:"contentWorkflowEvents"`
	SecureDeliveryEnabled bool       `json:"secureDeliveryEnabled"`
	RetriesEnabled        bool       `json:"retriesEnabled"`
	RetryCount            int        `json:"retryCount"`
	RetrySpeed            Speed      `json:"retrySpeed"`
	SigningSecret         string     `json:"signingSecret,omitempty"`
	PreviousSigningSecret string     `json:"previousSigningSecret,omitempty"`
	SecretRolledUtc       *time.Time `json:"secretRolledUtc,omitempty"`
	SignatureKeyCount     int        `json:"signatureKeyCount"`
	CreatedUtc            time.Time  `json:"createdUtc"`
	ModifiedUtc           time.Time  `json:"modifiedUtc"`
}

// Input is the body of a save: a new webhook without RowKey, an update of
// an existing one with it. Members left out keep their value (or take their
// default on a new webhook: enabled, no categories, unsigned, retries off, 3
// retries at standard speed). The read-only members of a Webhook are
// accepted, so that a webhook read can be saved back, and ignored; so is a
// signing secret, which only the service generates.
type Input struct {
	RowKey *string `json:"rowKey"`
	// InstanceGuid, which @agility/management-sdk sends with every save,
	// must name the instance of the request's URL (compared as instances
	// compare guids: trimmed, in any case); null is as if it were left out.
	InstanceGuid          *string `json:"instanceGuid"`
	Name                  *string `json:"name"`
	URL                   *string `json:"url"`
	Enabled               *bool   `json:"enabled"`
	ContentPublishEvents  *bool   `json:"contentPublishEvents"`
	ContentSaveEvents     *bool   `json:"contentSaveEvents"`
	ContentWorkflowEvents *bool   `json:"contentWorkflowEvents"`
	SecureDeliveryEnabled *bool   `json:"secureDeliveryEnabled"`
	RetriesEnabled        *bool   `json:"retriesEnabled"`
	RetryCount            *int    `json:"retryCount"`
	RetrySpeed            *string `json:"retrySpeed"`

	SigningSecret         json.RawMessage `json:"signingSecret"`
	PreviousSigningSecret json.RawMessage `json:"previousSigningSecret"`
	SecretRolledUtc       json.RawMessage `json:"secretRolledUtc"`
	SignatureKeyCount     json.RawMessage `json:"signatureKeyCount"`
	CreatedUtc            json.RawMessage `json:"createdUtc"`
	ModifiedUtc           json.RawMessage `json:"modifiedUtc"`
}

// Bounds of a webhook's text fields.
const (
	maxNameLen = 200
	maxURLLen  = 2048
)

// webhookRow is a row of the webhooks table.
type webhookRow struct {
	ID                string     `db:"id"`
	InstanceID        int64      `db:"instance_id"`
	Name              string     `db:"name"`
	URL               string     `db:"url"`
	Enabled           bool       `db:"enabled"`
	PublishEvents     bool       `db:"publish_events"`
	SaveEvents        bool       `db:"save_events"`
	WorkflowEvents    bool       `db:"workflow_events"`
	Secure            bool       `db:"secure"`
	RetriesEnabled    bool       `db:"retries_enabled"`
	RetryCount        int        `db:"retry_count"`
	RetrySpeed        Speed      `db:"retry_speed"`
	Secret            []byte     `db:"secret"`
	PreviousSecret    []byte     `db:"previous_secret"`
	SecretRolledAt    *time.Time `db:"secret_rolled_at"`
	SignatureKeyCount int        `db:"signature_key_count"`
	LastAttemptAt     *time.Time `db:"last_attempt_at"`
	CreatedAt         time.Time  `db:"created_at"`
	UpdatedAt         time.Time  `db:"updated_at"`
}

const webhookColumns = `id, instance_id, name, url, enabled, publish_events, save_events, workflow_events,
	secure, retries_enabled, retry_count, retry_speed, secret, previous_secret, secret_rolled_at,
	signature_key_count, last_attempt_at, created_at, updated_at`

// secrets returns the secrets that sign an attempt at time now: the current
// one, and the previous one during the Overlap after a rotation. An
// unsigned webhook has none.
func (s *Store) secrets(w webhookRow, now time.Time) ([]string, error) {
	if !w.Secure {
		return nil, nil
	}
	if w.Secret == nil {
		return nil, errors.New("signing is on but the webhook has no secret")
	}
	cur, err := s.seal.open(w.Secret, []byte(w.ID))
	if err != nil {
		return nil, err
	}
	out := []string{string(cur)}
	if w.PreviousSecret != nil && w.SecretRolledAt != nil && now.Before(w.SecretRolledAt.Add(Overlap)) {
		prev, err := s.seal.open(w.PreviousSecret, []byte(w.ID))
		if err != nil {
			return nil, err
		}
		out = append(out, string(prev))
	}
	return out, nil
}

// mask hides all but the start of a secret.
func mask(secret string) string {
	enc := strings.TrimPrefix(secret, signature.SecretPrefix)
	if len(enc) > 4 {
		enc = enc[:4]
	}
	return signature.SecretPrefix + enc + "********"
}

// view turns a row into the Webhook shown to clients. fullSecret shows the
// current secret unmasked.
func (s *Store) view(w webhookRow, fullSecret bool) (Webhook, error) {
	v := Webhook{
		RowKey: w.ID, Name: w.Name, URL: w.URL, Enabled: w.Enabled,
		ContentPublishEvents: w.PublishEvents, ContentSaveEvents: w.SaveEvents, ContentWorkflowEvents: w.WorkflowEvents,
		SecureDeliveryEnabled: w.Secure, RetriesEnabled: w.RetriesEnabled, RetryCount: w.RetryCount, RetrySpeed: w.RetrySpeed,
		SignatureKeyCount: w.SignatureKeyCount, CreatedUtc: w.CreatedAt.UTC(), ModifiedUtc: w.UpdatedAt.UTC(),
	}
	if w.Secret != nil {
		cur, err := s.seal.open(w.Secret, []byte(w.ID))
		if err != nil {
			return Webhook{}, fmt.Errorf("webhook %s: %w", w.ID, err)
		}
		v.SigningSecret = mask(string(cur))
		if fullSecret {
			v.SigningSecret = string(cur)
		}
	}
	if w.SecretRolledAt != nil {
		t := w.SecretRolledAt.UTC()
		v.SecretRolledUtc = &t
		if w.PreviousSecret != nil && s.now().Before(t.Add(Overlap)) {
			prev, err := s.seal.open(w.PreviousSecret, []byte(w.ID))
			if err != nil {
				return Webhook{}, fmt.Errorf("webhook %s: %w", w.ID, err)
			}
			v.PreviousSigningSecret = mask(string(prev))
		}
	}
	return v, nil
}

const (
	getWebhookSQL    = `SELECT ` + webhookColumns + ` FROM webhooks WHERE instance_id = $1 AND id = $2`
	lockWebhookSQL   = getWebhookSQL + ` FOR UPDATE`
	insertWebhookSQL = `INSERT INTO webhooks (id, instance_id, name, url, enabled, publish_events, save_events,
		workflow_events, secure, retries_enabled, retry_count, retry_speed, secret, created_at, updated_at)
		VALUES (:id, :instance_id, :name, :url, :enabled, :publish_events, :save_events,
		:workflow_events, :secure, :retries_enabled, :retry_count, :retry_speed, :secret, :created_at, :updated_at)`
	updateWebhookSQL = `UPDATE webhooks SET name = :name, url = :url, enabled = :enabled,
		publish_events = :publish_events, save_events = :save_events, workflow_events = :workflow_events,
		secure = :secure, retries_enabled = :retries_enabled, retry_count = :retry_count,
		retry_speed = :retry_speed, secret = :secret, updated_at = :updated_at
		WHERE id = :id AND instance_id = :instance_id`
)

// loadWebhook reads webhook id of inst, or returns a NotFound problem.
func loadWebhook(ctx context.Context, q sqlx.QueryerContext, query string, inst content.Instance, id string) (webhookRow, error) {
	var w webhookRow
	err := sqlx.GetContext(ctx, q, &w, query, inst.ID, id)
	if errors.Is(err, sql.ErrNoRows) {
		return w, problem.NotFoundf("no webhook %q in this instance", id)
	}
	return w, err
}

// Save creates a webhook (in has no RowKey) or updates one, and reports
// whether it created it. The first save with secure delivery on generates
// the signing secret, and only that save shows it in full. A URL must be
// absolute http or https and is checked against the store's egress policy.
func (s *Store) Save(ctx context.Context, inst content.Instance, in Input) (Webhook, bool, error) {
	var (
		out     Webhook
		created = in.RowKey == nil
	)
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		now := s.now()
		w := webhookRow{ID: newID("wh_"), InstanceID: inst.ID, Enabled: true, RetryCount: 3,
			RetrySpeed: SpeedStandard, CreatedAt: now}
		if !created {
			var err error
			if w, err = loadWebhook(ctx, tx, lockWebhookSQL, inst, *in.RowKey); err != nil {
				return err
			}
		}
		if err := s.apply(&w, inst, in); err != nil {
			return err
		}
		w.UpdatedAt = now
		generated := false
		if w.Secure && w.Secret == nil {
			secret, err := signature.NewSecret()
			if err != nil {
				return err
			}
			w.Secret, generated = s.seal.seal([]byte(secret), []byte(w.ID)), true
		}
		query := updateWebhookSQL
		if created {
			query = insertWebhookSQL
		}
		if _, err := tx.NamedExecContext(ctx, query, w); err != nil {
			return err
		}
		var err error
		out, err = s.view(w, generated)
		return err
	})
	if err != nil {
		return Webhook{}, false, fmt.Errorf("save webhook: %w", err)
	}
	return out, created, nil
}

// apply validates in, a save in inst, and copies its members onto w.
func (s *Store) apply(w *webhookRow, inst content.Instance, in Input) error {
	var errs []problem.FieldError
	bad := func(field, format string, args ...any) {
		errs = append(errs, problem.FieldError{Field: field, Reason: fmt.Sprintf(format, args...)})
	}
	if in.InstanceGuid != nil {
		switch g, err := content.NormalizeGuid(*in.InstanceGuid); {
		case err != nil:
			bad("instanceGuid", "must be the guid of this instance, %q, or be left out", inst.Guid)
		case g != inst.Guid:
			bad("instanceGuid", "names instance %q, but this save is for instance %q", g, inst.Guid)
		}
	}
	if in.Name != nil {
		switch name := strings.TrimSpace(*in.Name); {
		case utf8.RuneCountInString(name) > maxNameLen:
			bad("name", "must be at most %d characters", maxNameLen)
		case strings.ContainsRune(name, 0):
			bad("name", "must not contain the NUL character")
		default:
			w.Name = name
		}
	}
	if in.URL != nil {
		u := strings.TrimSpace(*in.URL)
		switch {
		case u == "":
			bad("url", "is required")
		case len(u) > maxURLLen:
			bad("url", "must be at most %d bytes", maxURLLen)
		default:
			if err := s.policy.CheckURL(u); err != nil {
				var pe *problem.Error
				if errors.As(err, &pe) && len(pe.Fields) > 0 {
					errs = append(errs, pe.Fields...)
				} else {
					bad("url", "%v", err)
				}
			} else {
				w.URL = u
			}
		}
	} else if w.URL == "" {
		bad("url", "is required")
	}
	set := func(dst *bool, src *bool) {
		if src != nil {
			*dst = *src
		}
	}
	set(&w.Enabled, in.Enabled)
	set(&w.PublishEvents, in.ContentPublishEvents)
	set(&w.SaveEvents, in.ContentSaveEvents)
	set(&w.WorkflowEvents, in.ContentWorkflowEvents)
	set(&w.Secure, in.SecureDeliveryEnabled)
	set(&w.RetriesEnabled, in.RetriesEnabled)
	if in.RetryCount != nil {
		if n := *in.RetryCount; n < MinRetries || n > MaxRetries {
			bad("retryCount", "must be from %d to %d", MinRetries, MaxRetries)
		} else {
			w.RetryCount = n
		}
	}
	if in.RetrySpeed != nil {
		switch sp := Speed(*in.RetrySpeed); sp {
		case SpeedFast, SpeedStandard, SpeedSlow:
			w.RetrySpeed = sp
		default:
			bad("retrySpeed", "must be fast, standard or slow")
		}
	}
	return problem.Fields(errs)
}

// Webhook returns webhook id of inst.
func (s *Store) Webhook(ctx context.Context, inst content.Instance, id string) (Webhook, error) {
	w, err := loadWebhook(ctx, s.db, getWebhookSQL, inst, id)
	if err != nil {
		return Webhook{}, fmt.Errorf("webhook %s: %w", id, err)
	}
	return s.view(w, false)
}

// WebhookPage is one page of webhooks and the token of the next page (nil
// on the last).
type WebhookPage struct {
	Items []Webhook `json:"items"`
	Token *string   `json:"token"`
}

// Paging bounds of lists and history.
const (
	DefaultTake = 20
	MaxTake     = 100
)

const listWebhooksSQL = `SELECT ` + webhookColumns + ` FROM webhooks
	WHERE instance_id = $1 AND (created_at, id) > ($2, $3)
	ORDER BY created_at, id LIMIT $4`

// Webhooks returns a page of the webhooks of inst, oldest first: take of
// them (0 means DefaultTake; at most MaxTake), after the position in token
// (from the previous page; empty for the first).
func (s *Store) Webhooks(ctx context.Context, inst content.Instance, take int, token string) (WebhookPage, error) {
	if take == 0 {
		take = DefaultTake
	}
	if take < 1 || take > MaxTake {
		return WebhookPage{}, problem.Field("take", "must be an integer from 1 to %d", MaxTake)
	}
	after := position{T: time.Unix(0, 0).UTC()}
	if token != "" {
		var err error
		if after, err = s.decodeToken(token, "list", inst, ""); err != nil {
			return WebhookPage{}, err
		}
	}
	var rows []webhookRow
	if err := s.db.SelectContext(ctx, &rows, listWebhooksSQL, inst.ID, after.T, after.ID, take+1); err != nil {
		return WebhookPage{}, fmt.Errorf("list webhooks: %w", err)
	}
	page := WebhookPage{Items: []Webhook{}}
	if len(rows) > take {
		rows = rows[:take]
		last := rows[take-1]
		t := s.encodeToken("list", inst, "", position{T: last.CreatedAt, ID: last.ID})
		page.Token = &t
	}
	for _, w := range rows {
		v, err := s.view(w, false)
		if err != nil {
			return WebhookPage{}, err
		}
		page.Items = append(page.Items, v)
	}
	return page, nil
}

// Delete deletes webhook id of inst with its whole delivery history.
func (s *Store) Delete(ctx context.Context, inst content.Instance, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM webhooks WHERE instance_id = $1 AND id = $2`, inst.ID, id)
	if err != nil {
		return fmt.Errorf("delete webhook %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return problem.NotFoundf("no webhook %q in this instance", id)
	}
	return nil
}

// RotateSecret gives webhook id a new signing secret and keeps the current
// one as the previous secret: for Overlap, every delivery carries a
// signature with each. The answer shows the new secret in full; this is the
// only time it is shown. A webhook without signing has nothing to rotate
// (a Conflict problem).
func (s *Store) RotateSecret(ctx context.Context, inst content.Instance, id string) (Webhook, error) {
	var out Webhook
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		w, err := loadWebhook(ctx, tx, lockWebhookSQL, inst, id)
		if err != nil {
			return err
		}
		if !w.Secure || w.Secret == nil {
			return problem.Conflictf("webhook %q does not sign its deliveries: turn secureDeliveryEnabled on first", id)
		}
		secret, err := signature.NewSecret()
		if err != nil {
			return err
		}
		now := s.now()
		w.PreviousSecret, w.Secret = w.Secret, s.seal.seal([]byte(secret), []byte(w.ID))
		w.SecretRolledAt, w.UpdatedAt = &now, now
		if _, err := tx.ExecContext(ctx, `UPDATE webhooks SET secret = $2, previous_secret = $3,
			secret_rolled_at = $4, updated_at = $4 WHERE id = $1`, w.ID, w.Secret, w.PreviousSecret, now); err != nil {
			return err
		}
		out, err = s.view(w, true)
		return err
	})
	if err != nil {
		return Webhook{}, fmt.Errorf("rotate secret of webhook %s: %w", id, err)
	}
	return out, nil
}

// position is a place in an ordered listing: a time and an id.
type position struct {
	T  time.Time
	ID string
}

// encodeToken makes an opaque continuation token for a listing of kind
// (list, history) in inst, scoped to one webhook for history. It is signed,
// so a client cannot forge a position.
func (s *Store) encodeToken(kind string, inst content.Instance, scope string, p position) string {
	msg := strings.Join([]string{kind, strconv.FormatInt(inst.ID, 10), scope,
		strconv.FormatInt(p.T.UnixMicro(), 10), p.ID}, "\n")
	return base64.RawURLEncoding.EncodeToString([]byte(msg)) + "." + base64.RawURLEncoding.EncodeToString(s.seal.mac([]byte(msg)))
}

// decodeToken checks a token made by encodeToken for the same kind,
// instance and scope, and returns its position; any other string is an
// Invalid problem about the field token.
func (s *Store) decodeToken(token, kind string, inst content.Instance, scope string) (position, error) {
	bad := problem.Field("token", "is not a continuation token of this listing (malformed or altered)")
	enc, sig, ok := strings.Cut(token, ".")
	if !ok || len(token) > 1024 {
		return position{}, bad
	}
	msg, err1 := base64.RawURLEncoding.DecodeString(enc)
	mac, err2 := base64.RawURLEncoding.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, s.seal.mac(msg)) {
		return position{}, bad
	}
	parts := strings.Split(string(msg), "\n")
	if len(parts) != 5 || parts[0] != kind || parts[1] != strconv.FormatInt(inst.ID, 10) || parts[2] != scope {
		return position{}, bad
	}
	us, err := strconv.ParseInt(parts[3], 10, 64)
	if err != nil {
		return position{}, bad
	}
	return position{T: time.UnixMicro(us).UTC(), ID: parts[4]}, nil
}

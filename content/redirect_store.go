package content

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/internal/pg"
	"github.com/edgecms/edgecms/problem"
)

// Redirection is a URL redirection of an instance: a site that serves
// OriginURL answers with a redirect to DestinationURL and StatusCode (301
// or 302). Redirections have no locale and no workflow: a change is live
// at once.
type Redirection struct {
	ID             int64     `db:"id" json:"id"`
	OriginURL      string    `db:"origin_url" json:"originUrl"`
	DestinationURL string    `db:"destination_url" json:"destinationUrl"`
	StatusCode     int       `db:"status_code" json:"statusCode"`
	CreatedAt      time.Time `db:"created_at" json:"createdAt"`
	Modified       time.Time `db:"modified_at" json:"modified"`
}

// RedirectionInput is what a create or update of a redirection sets. Nil
// members keep their values; a create needs both URLs, and its status code
// defaults to 301.
type RedirectionInput struct {
	OriginURL      *string `json:"originUrl"`
	DestinationURL *string `json:"destinationUrl"`
	StatusCode     *int    `json:"statusCode"`
}

// maxRedirectURL bounds the URLs of a redirection, in bytes.
const maxRedirectURL = 2048

// checkRedirectURL validates one URL of a redirection: a site path
// ("/old", or "~/old" as Agility CMS writes them) or an absolute http(s)
// URL, without spaces or control characters.
func checkRedirectURL(field, s string) *problem.FieldError {
	bad := func(reason string) *problem.FieldError { return &problem.FieldError{Field: field, Reason: reason} }
	if s == "" {
		return bad("is required")
	}
	if len(s) > maxRedirectURL {
		return bad(fmt.Sprintf("must be at most %d bytes", maxRedirectURL))
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return bad("must not contain spaces or control characters")
		}
	}
	switch {
	case strings.HasPrefix(s, "//"):
		return bad("must be a site path (/old-page, ~/old-page) or an absolute http(s) URL, not a scheme-relative URL")
	case strings.HasPrefix(s, "/"), strings.HasPrefix(s, "~/"):
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return bad("must be a site path (/old-page, ~/old-page) or an absolute http(s) URL")
	}
	return nil
}

// apply applies in to r and validates the result.
func (in RedirectionInput) apply(r *Redirection) error {
	if in.OriginURL != nil {
		r.OriginURL = strings.TrimSpace(*in.OriginURL)
	}
	if in.DestinationURL != nil {
		r.DestinationURL = strings.TrimSpace(*in.DestinationURL)
	}
	if in.StatusCode != nil {
		r.StatusCode = *in.StatusCode
	}
	var errs []problem.FieldError
	if fe := checkRedirectURL("originUrl", r.OriginURL); fe != nil {
		errs = append(errs, *fe)
	}
	if fe := checkRedirectURL("destinationUrl", r.DestinationURL); fe != nil {
		errs = append(errs, *fe)
	} else if r.DestinationURL == r.OriginURL {
		errs = append(errs, problem.FieldError{Field: "destinationUrl", Reason: "must differ from originUrl"})
	}
	if r.StatusCode != 301 && r.StatusCode != 302 {
		errs = append(errs, problem.FieldError{Field: "statusCode", Reason: "must be 301 or 302"})
	}
	return problem.Fields(errs)
}

const (
	redirectionColumns = `id, origin_url, destination_url, status_code, created_at, modified_at`
	selectRedirectsSQL = `SELECT ` + redirectionColumns + ` FROM redirections WHERE instance_id = $1 ORDER BY id`
	selectRedirectSQL  = `SELECT ` + redirectionColumns + ` FROM redirections WHERE instance_id = $1 AND id = $2`
	lockRedirectSQL    = selectRedirectSQL + ` FOR UPDATE`
	insertRedirectSQL  = `INSERT INTO redirections (instance_id, origin_url, destination_url, status_code, created_at, modified_at)
		VALUES ($1, $2, $3, $4, $5, $5) RETURNING ` + redirectionColumns
	updateRedirectSQL = `UPDATE redirections SET origin_url = $3, destination_url = $4, status_code = $5, modified_at = $6
		WHERE instance_id = $1 AND id = $2 RETURNING ` + redirectionColumns
	deleteRedirectSQL = `DELETE FROM redirections WHERE instance_id = $1 AND id = $2`
	// bumpRedirectsSQL moves the instance's redirection version forward
	// by at least a millisecond; the row lock orders concurrent changes.
	bumpRedirectsSQL = `INSERT INTO redirection_versions (instance_id, changed_at)
		VALUES ($1, date_trunc('milliseconds', $2::timestamptz))
		ON CONFLICT (instance_id) DO UPDATE
		SET changed_at = greatest(excluded.changed_at, redirection_versions.changed_at + interval '1 millisecond')`
)

// redirectionsChanged records a change of the instance's redirections: it
// moves their version and writes the Deleted event without ids that the
// spec has for a redirect change.
func redirectionsChanged(ctx context.Context, tx *sqlx.Tx, inst Instance, now time.Time) error {
	if _, err := tx.ExecContext(ctx, bumpRedirectsSQL, inst.ID, now); err != nil {
		return err
	}
	return appendEvent(ctx, tx, inst, eventlog.Event{State: eventlog.Deleted, Subject: eventlog.SubjectRedirect, ChangeDate: now})
}

func duplicateOrigin(err error, origin string) error {
	if pg.IsUniqueViolation(err) {
		return problem.Conflictf("a redirection from %q exists already", origin)
	}
	return err
}

// CreateRedirection validates and creates a redirection.
func (s *Store) CreateRedirection(ctx context.Context, inst Instance, in RedirectionInput) (Redirection, error) {
	r := Redirection{StatusCode: 301}
	if err := in.apply(&r); err != nil {
		return Redirection{}, err
	}
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		now := s.now()
		if err := tx.GetContext(ctx, &r, insertRedirectSQL, inst.ID, r.OriginURL, r.DestinationURL, r.StatusCode, now); err != nil {
			return duplicateOrigin(err, r.OriginURL)
		}
		return redirectionsChanged(ctx, tx, inst, now)
	})
	if err != nil {
		return Redirection{}, fmt.Errorf("create redirection: %w", err)
	}
	return r, nil
}

// Redirections lists the instance's redirections in the order they were
// created.
func (s *Store) Redirections(ctx context.Context, inst Instance) ([]Redirection, error) {
	rs := []Redirection{}
	if err := s.db.SelectContext(ctx, &rs, selectRedirectsSQL, inst.ID); err != nil {
		return nil, fmt.Errorf("list redirections: %w", err)
	}
	return rs, nil
}

// Redirection returns one redirection.
func (s *Store) Redirection(ctx context.Context, inst Instance, id int64) (Redirection, error) {
	var r Redirection
	if err := s.db.GetContext(ctx, &r, selectRedirectSQL, inst.ID, id); err != nil {
		return Redirection{}, notFound(err, "redirection %d not found", id)
	}
	return r, nil
}

// UpdateRedirection sets the members of a redirection that in gives.
func (s *Store) UpdateRedirection(ctx context.Context, inst Instance, id int64, in RedirectionInput) (Redirection, error) {
	var r Redirection
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		if err := tx.GetContext(ctx, &r, lockRedirectSQL, inst.ID, id); err != nil {
			return notFound(err, "redirection %d not found", id)
		}
		if err := in.apply(&r); err != nil {
			return err
		}
		now := s.now()
		if err := tx.GetContext(ctx, &r, updateRedirectSQL, inst.ID, id, r.OriginURL, r.DestinationURL, r.StatusCode, now); err != nil {
			return duplicateOrigin(err, r.OriginURL)
		}
		return redirectionsChanged(ctx, tx, inst, now)
	})
	if err != nil {
		return Redirection{}, fmt.Errorf("update redirection %d: %w", id, err)
	}
	return r, nil
}

// DeleteRedirection deletes a redirection.
func (s *Store) DeleteRedirection(ctx context.Context, inst Instance, id int64) error {
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, deleteRedirectSQL, inst.ID, id)
		if err := checkAffected(res, err, "redirection %d not found", id); err != nil {
			return err
		}
		return redirectionsChanged(ctx, tx, inst, s.now())
	})
	if err != nil {
		return fmt.Errorf("delete redirection %d: %w", id, err)
	}
	return nil
}

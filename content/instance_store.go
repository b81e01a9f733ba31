package content

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/internal/pg"
	"github.com/edgecms/edgecms/problem"
)

var (
	guidPattern   = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)
	localePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)
)

// NormalizeGuid lower-cases a guid and checks its form.
func NormalizeGuid(guid string) (string, error) {
	g := strings.ToLower(strings.TrimSpace(guid))
	if !guidPattern.MatchString(g) {
		return "", problem.Field("guid", "must be 1 to 64 letters, digits or hyphens, starting with a letter or digit")
	}
	return g, nil
}

const (
	insertInstanceSQL = `INSERT INTO instances (guid) VALUES ($1) RETURNING id, guid, created_at`
	insertChannelSQL  = `INSERT INTO channels (instance_id, name) VALUES ($1, $2)`
	selectInstanceSQL = `SELECT id, guid, created_at FROM instances WHERE guid = $1`
)

// CreateInstance creates an instance with the given locales (the first is the
// default) and the `website` sitemap channel.
func (s *Store) CreateInstance(ctx context.Context, guid string, locales []Locale) (Instance, error) {
	guid, err := NormalizeGuid(guid)
	if err != nil {
		return Instance{}, err
	}
	if len(locales) == 0 {
		return Instance{}, problem.Field("locales", "at least one locale is required")
	}
	var inst Instance
	err = s.transact(ctx, func(tx *sqlx.Tx) error {
		if err := tx.GetContext(ctx, &inst, insertInstanceSQL, guid); err != nil {
			if pg.IsUniqueViolation(err) {
				return problem.Conflictf("instance %q already exists", guid)
			}
			return err
		}
		for i, l := range locales {
			l.IsDefault = i == 0
			if err := insertLocale(ctx, tx, inst.ID, l); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, insertChannelSQL, inst.ID, "website"); err != nil {
			return err
		}
		// The event has the publisher write the channel's sitemaps, which
		// the Fetch API answers (empty) before any page is published.
		return appendChannelEvents(ctx, tx, inst, "website", inst.CreatedAt.UTC())
	})
	if err != nil {
		return Instance{}, fmt.Errorf("create instance: %w", err)
	}
	return inst, nil
}

// Instance returns the instance with the given guid.
func (s *Store) Instance(ctx context.Context, guid string) (Instance, error) {
	var inst Instance
	err := s.db.GetContext(ctx, &inst, selectInstanceSQL, strings.ToLower(guid))
	if err != nil {
		return Instance{}, notFound(err, "instance %q not found", guid)
	}
	return inst, nil
}

const (
	insertLocaleSQL = `INSERT INTO locales (instance_id, code, name, is_default, position)
		VALUES ($1, $2, $3, $4, (SELECT coalesce(max(position), 0) + 1 FROM locales WHERE instance_id = $1))`
	selectLocalesSQL     = `SELECT code, name, is_default FROM locales WHERE instance_id = $1 ORDER BY position`
	selectLocaleCodesSQL = `SELECT code FROM locales WHERE instance_id = $1 ORDER BY position`
	deleteLocaleSQL      = `DELETE FROM locales WHERE instance_id = $1 AND code = $2`
	localeUsedSQL        = `SELECT EXISTS (SELECT 1 FROM item_copies WHERE instance_id = $1 AND locale = $2)
		OR EXISTS (SELECT 1 FROM page_copies WHERE instance_id = $1 AND locale = $2)`
)

// reservedLocaleCodes are the first path segments of management routes; a
// locale of that name would make routes ambiguous.
var reservedLocaleCodes = map[string]bool{
	"locales": true, "tokens": true, "apikeys": true, "models": true, "containers": true,
	"page-models": true, "channels": true, "webhook": true, "webhooks": true, "redirections": true,
	"assets": true, "galleries": true, "users": true, "items": true, "pages": true, "audit": true,
	"settings": true,
}

func validateLocale(l Locale) error {
	var errs []problem.FieldError
	if !localePattern.MatchString(l.Code) {
		errs = append(errs, problem.FieldError{Field: "code", Reason: "must be 1 to 32 letters, digits, hyphens or underscores, like en-us"})
	}
	if reservedLocaleCodes[strings.ToLower(l.Code)] {
		errs = append(errs, problem.FieldError{Field: "code", Reason: fmt.Sprintf("%q is reserved by the management API", l.Code)})
	}
	if strings.TrimSpace(l.Name) == "" || len(l.Name) > 100 {
		errs = append(errs, problem.FieldError{Field: "name", Reason: "must be 1 to 100 characters"})
	}
	return problem.Fields(errs)
}

func insertLocale(ctx context.Context, tx *sqlx.Tx, instanceID int64, l Locale) error {
	if err := validateLocale(l); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, insertLocaleSQL, instanceID, l.Code, strings.TrimSpace(l.Name), l.IsDefault)
	if pg.IsUniqueViolation(err) {
		return problem.Conflictf("locale %q already exists (codes are compared case-insensitively)", l.Code)
	}
	return err
}

// Locales lists the locales of an instance, the default first.
func (s *Store) Locales(ctx context.Context, inst Instance) ([]Locale, error) {
	ls := []Locale{}
	if err := s.db.SelectContext(ctx, &ls, selectLocalesSQL, inst.ID); err != nil {
		return nil, fmt.Errorf("list locales: %w", err)
	}
	return ls, nil
}

// localeChanged writes the event of a locale added or removed: a Deleted
// event without ids whose locale is the code, so that the publisher adds or
// withdraws the locale's objects (its sitemaps and list pages).
func localeChanged(ctx context.Context, tx *sqlx.Tx, inst Instance, code string, now time.Time) error {
	return appendEvent(ctx, tx, inst, eventlog.Event{State: eventlog.Deleted, Subject: eventlog.SubjectLocale, Locale: ptr(code), ChangeDate: now})
}

// CreateLocale adds a locale to an instance.
func (s *Store) CreateLocale(ctx context.Context, inst Instance, l Locale) (Locale, error) {
	l.IsDefault = false
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		if err := insertLocale(ctx, tx, inst.ID, l); err != nil {
			return err
		}
		return localeChanged(ctx, tx, inst, l.Code, s.now())
	})
	if err != nil {
		return Locale{}, fmt.Errorf("create locale: %w", err)
	}
	l.Name = strings.TrimSpace(l.Name)
	return l, nil
}

// DeleteLocale removes a locale that no item or page uses and that is not
// the default.
func (s *Store) DeleteLocale(ctx context.Context, inst Instance, code string) error {
	l, err := s.Locale(ctx, inst, code)
	if err != nil {
		return err
	}
	if l.IsDefault {
		return problem.Conflictf("locale %q is the default locale and cannot be deleted", l.Code)
	}
	return s.transact(ctx, func(tx *sqlx.Tx) error {
		var used bool
		if err := tx.GetContext(ctx, &used, localeUsedSQL, inst.ID, l.Code); err != nil {
			return err
		}
		if used {
			return problem.Conflictf("locale %q has items or pages; delete them first", l.Code)
		}
		res, err := tx.ExecContext(ctx, deleteLocaleSQL, inst.ID, l.Code)
		if err := checkAffected(res, err, "locale %q not found", code); err != nil {
			return err
		}
		return localeChanged(ctx, tx, inst, l.Code, s.now())
	})
}

// Locale resolves a locale code as a request sends it: the exact configured
// code, or its lower-case form. An unknown code is a NotFound problem that
// lists the configured codes.
func (s *Store) Locale(ctx context.Context, inst Instance, code string) (Locale, error) {
	ls, err := s.Locales(ctx, inst)
	if err != nil {
		return Locale{}, err
	}
	return ResolveLocale(ls, code)
}

// ResolveLocale finds code among ls: exactly, or by its lower-case form.
func ResolveLocale(ls []Locale, code string) (Locale, error) {
	for _, l := range ls {
		if l.Code == code {
			return l, nil
		}
	}
	for _, l := range ls {
		if strings.ToLower(l.Code) == code {
			return l, nil
		}
	}
	codes := make([]string, len(ls))
	for i, l := range ls {
		codes[i] = l.Code
	}
	return Locale{}, &problem.Error{
		Kind:   problem.NotFound,
		Detail: fmt.Sprintf("locale %q is not configured; configured locales: %s", code, strings.Join(codes, ", ")),
		Extra:  map[string]any{"locales": codes},
	}
}

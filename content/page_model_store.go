package content

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/internal/pg"
	"github.com/edgecms/edgecms/problem"
)

// PageModel names the zones a page of that model has.
type PageModel struct {
	ID        int64          `db:"id" json:"id"`
	Name      string         `db:"name" json:"name"`
	Zones     pq.StringArray `db:"zones" json:"zones"`
	CreatedAt time.Time      `db:"created_at" json:"createdAt"`
	// Revision counts the page model's changes; it is its ETag.
	Revision int64 `db:"revision" json:"revision"`
}

// Channel is a sitemap: a tree of pages. Every instance has `website`.
type Channel struct {
	ID        int64     `db:"id" json:"id"`
	Name      string    `db:"name" json:"name"`
	CreatedAt time.Time `db:"created_at" json:"createdAt"`
	// PreviewURL is the template of the links that open the channel's
	// pages on the site in preview (package origin fills it in), or nil.
	// Renders do not read it.
	PreviewURL *string `db:"preview_url" json:"previewUrl"`
}

const (
	insertPageModelSQL  = `INSERT INTO page_models (instance_id, name, zones) VALUES ($1, $2, $3) RETURNING id, name, zones, created_at, revision`
	selectPageModelsSQL = `SELECT id, name, zones, created_at, revision FROM page_models WHERE instance_id = $1 ORDER BY id`
	selectPageModelSQL  = `SELECT id, name, zones, created_at, revision FROM page_models WHERE instance_id = $1 AND lower(name) = lower($2)`
	pageModelUsedSQL    = `SELECT EXISTS (SELECT 1 FROM pages WHERE page_model_id = $1)`
	deletePageModelSQL  = `DELETE FROM page_models WHERE id = $1`
	insertChannelRetSQL = `INSERT INTO channels (instance_id, name) VALUES ($1, $2) RETURNING id, name, created_at, preview_url`
	selectChannelsSQL   = `SELECT id, name, created_at, preview_url FROM channels WHERE instance_id = $1 ORDER BY id`
	setPreviewURLSQL    = `UPDATE channels SET preview_url = $3 WHERE instance_id = $1 AND lower(name) = lower($2)
		RETURNING id, name, created_at, preview_url`
	selectPreviewURLSQL = `SELECT preview_url FROM channels WHERE instance_id = $1 AND lower(name) = lower($2)`
	selectChannelSQL    = `SELECT id, name, created_at FROM channels WHERE instance_id = $1 AND lower(name) = lower($2)`
)

// CreatePageModel creates a page model with named zones.
func (s *Store) CreatePageModel(ctx context.Context, inst Instance, name string, zones []string) (PageModel, error) {
	var errs []problem.FieldError
	if !namePattern.MatchString(name) {
		errs = append(errs, problem.FieldError{Field: "name", Reason: "must be 1 to 64 letters, digits or underscores, starting with a letter"})
	}
	if err := validateZones(zones); err != nil {
		errs = append(errs, err.(*problem.Error).Fields...)
	}
	if err := problem.Fields(errs); err != nil {
		return PageModel{}, err
	}
	var pm PageModel
	err := s.db.GetContext(ctx, &pm, insertPageModelSQL, inst.ID, name, pq.StringArray(zones))
	if pg.IsUniqueViolation(err) {
		return PageModel{}, problem.Conflictf("a page model named %q already exists", name)
	}
	if err != nil {
		return PageModel{}, fmt.Errorf("create page model: %w", err)
	}
	return pm, nil
}

// validateZones checks a page model's zone names.
func validateZones(zones []string) error {
	var errs []problem.FieldError
	if len(zones) == 0 || len(zones) > 50 {
		errs = append(errs, problem.FieldError{Field: "zones", Reason: "a page model needs 1 to 50 zones"})
	}
	seen := map[string]bool{}
	for i, z := range zones {
		if !namePattern.MatchString(z) {
			errs = append(errs, problem.FieldError{Field: fmt.Sprintf("zones[%d]", i), Reason: "must be 1 to 64 letters, digits or underscores, starting with a letter"})
		} else if seen[strings.ToLower(z)] {
			errs = append(errs, problem.FieldError{Field: fmt.Sprintf("zones[%d]", i), Reason: fmt.Sprintf("duplicate zone %q", z)})
		}
		seen[strings.ToLower(z)] = true
	}
	return problem.Fields(errs)
}

// PageModels lists an instance's page models.
func (s *Store) PageModels(ctx context.Context, inst Instance) ([]PageModel, error) {
	pms := []PageModel{}
	err := s.db.SelectContext(ctx, &pms, selectPageModelsSQL, inst.ID)
	return pms, err
}

func pageModelByName(ctx context.Context, q sqlx.QueryerContext, inst Instance, name string) (PageModel, error) {
	var pm PageModel
	err := sqlx.GetContext(ctx, q, &pm, selectPageModelSQL, inst.ID, name)
	return pm, notFound(err, "page model %q not found", name)
}

// DeletePageModel deletes a page model that no page uses.
func (s *Store) DeletePageModel(ctx context.Context, inst Instance, name string) error {
	return s.transact(ctx, func(tx *sqlx.Tx) error {
		pm, err := pageModelByName(ctx, tx, inst, name)
		if err != nil {
			return err
		}
		var used bool
		if err := tx.GetContext(ctx, &used, pageModelUsedSQL, pm.ID); err != nil {
			return err
		}
		if used {
			return problem.Conflictf("page model %q is used by pages", pm.Name)
		}
		_, err = tx.ExecContext(ctx, deletePageModelSQL, pm.ID)
		return err
	})
}

// CreateChannel creates a sitemap channel. It writes a Deleted event
// without ids per locale (the channel's sitemaps, empty, now exist), dated
// when the channel row was created, so that the two agree. (It reads no
// clock of its own: test fixtures that move their clock on every read
// keep their dates.)
func (s *Store) CreateChannel(ctx context.Context, inst Instance, name string) (Channel, error) {
	if !namePattern.MatchString(name) {
		return Channel{}, problem.Field("name", "must be 1 to 64 letters, digits or underscores, starting with a letter")
	}
	var c Channel
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		if err := tx.GetContext(ctx, &c, insertChannelRetSQL, inst.ID, name); err != nil {
			if pg.IsUniqueViolation(err) {
				return problem.Conflictf("a channel named %q already exists", name)
			}
			return err
		}
		return appendChannelEvents(ctx, tx, inst, c.Name, c.CreatedAt.UTC())
	})
	if err != nil {
		return Channel{}, fmt.Errorf("create channel: %w", err)
	}
	return c, nil
}

// appendChannelEvents writes the event of a channel change for every
// locale.
func appendChannelEvents(ctx context.Context, tx *sqlx.Tx, inst Instance, channel string, now time.Time) error {
	var locales []string
	if err := tx.SelectContext(ctx, &locales, selectLocaleCodesSQL, inst.ID); err != nil {
		return err
	}
	for _, l := range locales {
		e := eventlog.Event{State: eventlog.Deleted, Subject: eventlog.SubjectChannel, Locale: ptr(l), ReferenceName: ptr(channel), ChangeDate: now}
		if err := appendEvent(ctx, tx, inst, e); err != nil {
			return err
		}
	}
	return nil
}

// Channels lists an instance's sitemap channels.
func (s *Store) Channels(ctx context.Context, inst Instance) ([]Channel, error) {
	cs := []Channel{}
	err := s.db.SelectContext(ctx, &cs, selectChannelsSQL, inst.ID)
	return cs, err
}

// Channel returns the channel named name (case-insensitively).
func (s *Store) Channel(ctx context.Context, inst Instance, name string) (Channel, error) {
	return channelByName(ctx, s.db, inst, name)
}

// SetChannelPreviewURL sets (or, with nil, clears) the preview URL
// template of the channel named name. The caller validates the template.
func (s *Store) SetChannelPreviewURL(ctx context.Context, inst Instance, name string, url *string) (Channel, error) {
	var c Channel
	err := s.db.GetContext(ctx, &c, setPreviewURLSQL, inst.ID, name, url)
	return c, notFound(err, "channel %q not found", name)
}

// ChannelPreviewURL returns the preview URL template of the channel named
// name ("" when it has none).
func (s *Store) ChannelPreviewURL(ctx context.Context, inst Instance, name string) (string, error) {
	var url *string
	if err := s.db.GetContext(ctx, &url, selectPreviewURLSQL, inst.ID, name); err != nil {
		return "", notFound(err, "channel %q not found", name)
	}
	if url == nil {
		return "", nil
	}
	return *url, nil
}

func channelByName(ctx context.Context, q sqlx.QueryerContext, inst Instance, name string) (Channel, error) {
	var c Channel
	err := sqlx.GetContext(ctx, q, &c, selectChannelSQL, inst.ID, name)
	return c, notFound(err, "channel %q not found", name)
}

// PageModel returns the page model named name (case-insensitively).
func (s *Store) PageModel(ctx context.Context, inst Instance, name string) (PageModel, error) {
	return pageModelByName(ctx, s.db, inst, name)
}

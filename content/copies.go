package content

import (
	"context"
	"fmt"
	"time"

	"github.com/edgecms/edgecms/problem"
)

// Copy is the state of one locale's copy of an item or page: what an editor
// sees beside each locale before opening it.
type Copy struct {
	Locale    string    `db:"locale" json:"locale"`
	State     State     `db:"state" json:"state"`
	VersionID int64     `db:"version_id" json:"versionID"`
	Modified  time.Time `db:"modified" json:"modified"`
	// PublishedVersionID is the version live on the site, if any.
	PublishedVersionID *int64 `db:"published_version_id" json:"publishedVersionID"`
}

const (
	itemCopiesSQL = `SELECT c.locale, c.state, c.version_id, c.modified, c.published_version_id
		FROM item_copies c JOIN locales l ON l.instance_id = c.instance_id AND l.code = c.locale
		WHERE c.instance_id = $1 AND c.content_id = $2 ORDER BY l.position`
	pageCopiesSQL = `SELECT c.locale, c.state, c.version_id, c.modified, c.published_version_id
		FROM page_copies c JOIN locales l ON l.instance_id = c.instance_id AND l.code = c.locale
		WHERE c.instance_id = $1 AND c.page_id = $2 ORDER BY l.position`
)

// ItemCopies lists the locale copies of an item, in locale order. An item
// without copies (or of another instance) is NotFound.
func (s *Store) ItemCopies(ctx context.Context, inst Instance, contentID int64) ([]Copy, error) {
	return s.copies(ctx, itemCopiesSQL, inst, contentID, "item")
}

// PageCopies lists the locale copies of a page, in locale order.
func (s *Store) PageCopies(ctx context.Context, inst Instance, pageID int64) ([]Copy, error) {
	return s.copies(ctx, pageCopiesSQL, inst, pageID, "page")
}

func (s *Store) copies(ctx context.Context, query string, inst Instance, id int64, what string) ([]Copy, error) {
	cs := []Copy{}
	if err := s.db.SelectContext(ctx, &cs, query, inst.ID, id); err != nil {
		return nil, fmt.Errorf("list copies of %s %d: %w", what, id, err)
	}
	if len(cs) == 0 {
		return nil, problem.NotFoundf("%s %d not found", what, id)
	}
	return cs, nil
}

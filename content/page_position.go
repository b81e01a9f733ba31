package content

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/edgecms/edgecms/internal/pg"
	"github.com/edgecms/edgecms/problem"
)

// nameFree checks that no live sibling of page h in locale is named name.
func nameFree(ctx context.Context, tx *sqlx.Tx, h pageHead, locale, name string) error {
	var names []string
	if err := tx.SelectContext(ctx, &names, siblingNamesSQL, h.ChannelID, h.ParentID, locale, h.PageID); err != nil {
		return err
	}
	for _, n := range names {
		if n == strings.ToLower(name) {
			return problem.Conflictf("a sibling page is already named %q", name)
		}
	}
	return nil
}

const (
	renameCopySQL         = `UPDATE page_copies SET name = $3 WHERE page_id = $1 AND locale = $2`
	redirectFromSQL       = `SELECT id FROM redirections WHERE instance_id = $1 AND lower(origin_url) = lower($2) FOR UPDATE`
	redirectToPathSQL     = `UPDATE redirections SET destination_url = $3, status_code = 301, modified_at = $4 WHERE instance_id = $1 AND id = $2`
	insertPageRedirectSQL = `INSERT INTO redirections (instance_id, origin_url, destination_url, status_code, created_at, modified_at)
		VALUES ($1, $2, $3, 301, $4, $4)`
	deleteRedirectFromSQL = `DELETE FROM redirections WHERE instance_id = $1 AND lower(origin_url) = lower($2)`
)

// renamePage gives the copy of page h in locale a new name, and redirects
// its old path to the new one (301, in the instance's URL redirections).
// A redirection from the new path, left by an earlier rename the other
// way, is removed, so that the two never loop.
func renamePage(ctx context.Context, tx *sqlx.Tx, inst Instance, h pageHead, locale, old, name string, now time.Time) error {
	if err := checkPageName(name); err != nil {
		return err
	}
	if old == name {
		return nil
	}
	if !strings.EqualFold(old, name) { // a change of case keeps the name's place
		if err := nameFree(ctx, tx, h, locale, name); err != nil {
			return err
		}
	}
	var oldPath string
	if err := pagePath(ctx, tx, h.PageID, locale, &oldPath); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, renameCopySQL, h.PageID, locale, name); err != nil {
		if pg.IsUniqueViolation(err) {
			return problem.Conflictf("a sibling page is already named %q", name)
		}
		return err
	}
	var newPath string
	if err := pagePath(ctx, tx, h.PageID, locale, &newPath); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, deleteRedirectFromSQL, inst.ID, newPath); err != nil {
		return err
	}
	var id int64
	err := tx.GetContext(ctx, &id, redirectFromSQL, inst.ID, oldPath)
	switch {
	case err == nil:
		_, err = tx.ExecContext(ctx, redirectToPathSQL, inst.ID, id, newPath, now)
	case problem.Is(notFound(err, ""), problem.NotFound):
		_, err = tx.ExecContext(ctx, insertPageRedirectSQL, inst.ID, oldPath, newPath, now)
	}
	if err != nil {
		return err
	}
	return redirectionsChanged(ctx, tx, inst, now)
}

// pagePath reads the path of a page's copy in locale (its names from the
// root, joined by /).
func pagePath(ctx context.Context, tx *sqlx.Tx, pageID int64, locale string, out *string) error {
	var names []string
	if err := tx.SelectContext(ctx, &names, pagePathSQL, pageID, locale); err != nil {
		return err
	}
	*out = "/" + strings.Join(names, "/")
	return nil
}

// Position is where PUT /{locale}/pages/{id}/position puts a page: under
// ParentPageID (absent: the parent it has; null: the root), before the
// sibling BeforePageID (absent or null: last).
type Position struct {
	ParentPageID json.RawMessage `json:"parentPageID"`
	BeforePageID json.RawMessage `json:"beforePageID"`
}

const (
	siblingsSQL = `SELECT page_id FROM pages WHERE channel_id = $1 AND coalesce(parent_id, 0) = coalesce($2::bigint, 0)
		ORDER BY sort_order, page_id FOR UPDATE`
	setSortOrderSQL = `UPDATE pages SET sort_order = o.n FROM unnest($1::bigint[]) WITH ORDINALITY AS o(id, n) WHERE pages.page_id = o.id`
)

// MovePage moves a page under a parent and orders it among its siblings,
// in every locale (the tree is the page's, not a copy's). Sitemaps and
// menus follow the siblings' order. Each live copy's sitemap changes: it
// writes a Saved event for every one of them.
func (s *Store) MovePage(ctx context.Context, inst Instance, locale string, pageID int64, pos Position) (Page, error) {
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		h, err := lockPage(ctx, tx, inst, pageID)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, lockChannelSQL, h.ChannelID); err != nil {
			return err
		}
		c, err := loadPageCopy(ctx, tx, pageID, locale)
		if err != nil {
			return err
		}
		if err := checkIfMatch(ctx, c.VersionID, true); err != nil {
			return err
		}
		if c.State == Deleted {
			return problem.Conflictf("cannot move: page %d is deleted in locale %q", pageID, locale)
		}
		if _, err := movePage(ctx, tx, inst, &h, pos.ParentPageID); err != nil {
			return err
		}
		if err := updateHead(ctx, tx, h); err != nil {
			return err
		}
		var before *int64
		if len(pos.BeforePageID) > 0 && string(pos.BeforePageID) != "null" {
			var n int64
			if err := json.Unmarshal(pos.BeforePageID, &n); err != nil || n <= 0 {
				return problem.Field("beforePageID", "must be a page id or null")
			}
			if n == pageID {
				return problem.Field("beforePageID", "a page cannot go before itself")
			}
			before = &n
		}
		var sibs []int64
		if err := tx.SelectContext(ctx, &sibs, siblingsSQL, h.ChannelID, h.ParentID); err != nil {
			return err
		}
		order := make([]int64, 0, len(sibs))
		placed := false
		for _, id := range sibs {
			if id == pageID {
				continue
			}
			if before != nil && id == *before {
				order = append(order, pageID)
				placed = true
			}
			order = append(order, id)
		}
		if before != nil && !placed {
			return problem.Field("beforePageID", "page %d is not a sibling under the new parent in channel %q", *before, h.Channel)
		}
		if !placed {
			order = append(order, pageID)
		}
		if _, err := tx.ExecContext(ctx, setSortOrderSQL, pq.Array(order)); err != nil {
			return err
		}
		return appendMoveEvents(ctx, tx, inst, pageID, "", s.now())
	})
	if err != nil {
		return Page{}, fmt.Errorf("move page %d: %w", pageID, err)
	}
	return s.Page(ctx, inst, locale, pageID)
}

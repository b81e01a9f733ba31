package content

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/problem"
)

// Schedule is when a copy is to be published and unpublished.
type Schedule struct {
	PublishAt   *time.Time `json:"publishAt"`
	UnpublishAt *time.Time `json:"unpublishAt"`
}

func (sc Schedule) validate(now time.Time) error {
	var errs []problem.FieldError
	if sc.PublishAt != nil && !sc.PublishAt.After(now) {
		errs = append(errs, problem.FieldError{Field: "publishAt", Reason: "must be in the future"})
	}
	if sc.UnpublishAt != nil && !sc.UnpublishAt.After(now) {
		errs = append(errs, problem.FieldError{Field: "unpublishAt", Reason: "must be in the future"})
	}
	if sc.PublishAt != nil && sc.UnpublishAt != nil && !sc.UnpublishAt.After(*sc.PublishAt) {
		errs = append(errs, problem.FieldError{Field: "unpublishAt", Reason: "must be after publishAt"})
	}
	return problem.Fields(errs)
}

const (
	setItemScheduleSQL = `UPDATE item_copies SET publish_at = $3, unpublish_at = $4
		WHERE content_id = $1 AND locale = $2 AND state <> 3`
	setPageScheduleSQL = `UPDATE page_copies SET publish_at = $3, unpublish_at = $4
		WHERE page_id = $1 AND locale = $2 AND state <> 3`
)

// ScheduleItem sets (or, with nil dates, clears) the publish and unpublish
// dates of the copy of an item in locale. The dates are not versioned, but
// they act on the version the editor saw: If-Match is checked as for a
// save.
func (s *Store) ScheduleItem(ctx context.Context, inst Instance, locale string, contentID int64, sc Schedule) (Schedule, error) {
	if err := sc.validate(s.now()); err != nil {
		return Schedule{}, err
	}
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		if _, _, _, err := lockCopy(ctx, tx, inst, locale, contentID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, setItemScheduleSQL, contentID, locale, sc.PublishAt, sc.UnpublishAt)
		return checkAffected(res, err, "item %d has no live copy in locale %q", contentID, locale)
	})
	return sc, err
}

// SchedulePage sets (or clears) the publish and unpublish dates of the copy
// of a page in locale.
func (s *Store) SchedulePage(ctx context.Context, inst Instance, locale string, pageID int64, sc Schedule) (Schedule, error) {
	if err := sc.validate(s.now()); err != nil {
		return Schedule{}, err
	}
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		if _, err := lockPage(ctx, tx, inst, pageID); err != nil {
			return err
		}
		c, err := loadPageCopy(ctx, tx, pageID, locale)
		if err != nil {
			return err
		}
		if err := checkIfMatch(ctx, c.VersionID, true); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, setPageScheduleSQL, pageID, locale, sc.PublishAt, sc.UnpublishAt)
		return checkAffected(res, err, "page %d has no live copy in locale %q", pageID, locale)
	})
	return sc, err
}

// dueSQL finds the copies whose publish or unpublish date has come: items
// and pages, with the instance each belongs to.
const dueSQL = `
	SELECT 'item' AS subject, ic.content_id AS id, ic.locale, i.guid, i.id AS instance_id, coalesce(ic.publish_at <= $1, false) AS publish
	FROM item_copies ic JOIN instances i ON i.id = ic.instance_id
	WHERE ic.publish_at <= $1 OR ic.unpublish_at <= $1
	UNION ALL
	SELECT 'page', pc.page_id, pc.locale, i.guid, i.id, coalesce(pc.publish_at <= $1, false)
	FROM page_copies pc JOIN instances i ON i.id = pc.instance_id
	WHERE pc.publish_at <= $1 OR pc.unpublish_at <= $1
	LIMIT $2`

type dueRow struct {
	Subject    string `db:"subject"`
	ID         int64  `db:"id"`
	Locale     string `db:"locale"`
	Guid       string `db:"guid"`
	InstanceID int64  `db:"instance_id"`
	Publish    bool   `db:"publish"`
}

const (
	clearItemDateSQL = `UPDATE item_copies SET publish_at = CASE WHEN $3 THEN NULL ELSE publish_at END,
		unpublish_at = CASE WHEN $3 THEN unpublish_at ELSE NULL END WHERE content_id = $1 AND locale = $2`
	clearPageDateSQL = `UPDATE page_copies SET publish_at = CASE WHEN $3 THEN NULL ELSE publish_at END,
		unpublish_at = CASE WHEN $3 THEN unpublish_at ELSE NULL END WHERE page_id = $1 AND locale = $2`
)

// RunDueSchedules carries out every publish and unpublish whose date has
// come, and returns how many it carried out. A scheduled action the state
// does not allow (publishing what is published) just clears the date.
// Several schedulers may run at once: each copy is locked while it is handled.
func (s *Store) RunDueSchedules(ctx context.Context) (int, error) {
	now := s.now()
	var due []dueRow
	if err := s.db.SelectContext(ctx, &due, dueSQL, now, 500); err != nil {
		return 0, fmt.Errorf("find due schedules: %w", err)
	}
	n := 0
	for _, d := range due {
		inst := Instance{ID: d.InstanceID, Guid: d.Guid}
		a := ActionUnpublish
		if d.Publish {
			a = ActionPublish
		}
		err := s.transact(ctx, func(tx *sqlx.Tx) error {
			clear := clearItemDateSQL
			if d.Subject == "page" {
				clear = clearPageDateSQL
				if _, err := lockPage(ctx, tx, inst, d.ID); err != nil {
					return err
				}
				c, err := loadPageCopy(ctx, tx, d.ID, d.Locale)
				if err != nil {
					return err
				}
				if !isDue(c.PublishAt, c.UnpublishAt, d.Publish, now) {
					return nil // another scheduler got there first
				}
				if _, err := pageAction(ctx, tx, inst, d.Locale, d.ID, a, now); err != nil && !problem.Is(err, problem.Conflict) {
					return err
				}
			} else {
				h, _, err := lockItem(ctx, tx, inst, d.ID)
				if err != nil {
					return err
				}
				c, err := loadCopy(ctx, tx, d.ID, d.Locale)
				if err != nil {
					return err
				}
				if !isDue(c.PublishAt, c.UnpublishAt, d.Publish, now) {
					return nil
				}
				if _, err := applyItemAction(ctx, tx, inst, h, c, a, now); err != nil && !problem.Is(err, problem.Conflict) {
					return err
				}
			}
			_, err := tx.ExecContext(ctx, clear, d.ID, d.Locale, d.Publish)
			n++
			return err
		})
		if err != nil {
			return n, fmt.Errorf("run schedule of %s %d (%s): %w", d.Subject, d.ID, d.Locale, err)
		}
	}
	return n, nil
}

func isDue(publishAt, unpublishAt *time.Time, publish bool, now time.Time) bool {
	if publish {
		return publishAt != nil && !publishAt.After(now)
	}
	return unpublishAt != nil && !unpublishAt.After(now)
}

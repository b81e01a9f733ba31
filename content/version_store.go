package content

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/problem"
)

// Every save of an item or page copy keeps a version (schema 015: triggers
// copy each new version_id of a copy into item_versions and page_versions,
// with the actor and the kind of change). A restore and a discard write
// the working copy anew; they never rewrite the versions kept.

// Version is one kept version of a copy, as the versions list shows it.
type Version struct {
	VersionID int64     `db:"version_id" json:"versionID"`
	State     State     `db:"state" json:"state"`
	Modified  time.Time `db:"modified" json:"modified"`
	// Actor made it ("user:<id>", "token:<id>"; "" for changes made
	// before versions were kept, or by the scheduler).
	Actor string `db:"actor" json:"actor"`
	// Action is what made it: create, save, restore or discard.
	Action string `db:"action" json:"action"`
	// Current and Published say whether it is the working copy now and
	// the published one.
	Current   bool `db:"current" json:"current"`
	Published bool `db:"published" json:"published"`
}

// VersionPage is a window of a copy's versions, newest first.
type VersionPage struct {
	Items      []Version `json:"items"`
	TotalCount int       `json:"totalCount"`
}

// ItemAtVersion is an item copy as it was at one version.
type ItemAtVersion struct {
	Version
	ContentID int64  `json:"contentID"`
	Locale    string `json:"locale"`
	Fields    Values `db:"fields" json:"fields"`
}

// PageAtVersion is a page copy as it was at one version: its editable
// fields, its zones, and the field values its components had.
type PageAtVersion struct {
	Version
	PageID int64  `json:"pageID"`
	Locale string `json:"locale"`
	// Doc is the page's editable fields (title, menuText, seo...).
	Doc        PageDoc           `db:"doc" json:"doc"`
	Zones      Zones             `db:"zones" json:"zones"`
	Components map[string]Values `db:"-" json:"components"`
	RawComps   []byte            `db:"components" json:"-"`
}

const (
	itemVersionsSQL = `SELECT v.version_id, v.state, v.modified, v.actor, v.action,
			v.version_id = c.version_id AS current, v.version_id IS NOT DISTINCT FROM c.published_version_id AS published
		FROM item_versions v JOIN item_copies c ON c.content_id = v.content_id AND c.locale = v.locale
		WHERE v.content_id = $1 AND v.locale = $2 ORDER BY v.version_id DESC LIMIT $3 OFFSET $4`
	countItemVersionsSQL = `SELECT count(*) FROM item_versions WHERE content_id = $1 AND locale = $2`
	itemVersionSQL       = `SELECT v.version_id, v.state, v.modified, v.actor, v.action, v.fields,
			v.version_id = c.version_id AS current, v.version_id IS NOT DISTINCT FROM c.published_version_id AS published
		FROM item_versions v JOIN item_copies c ON c.content_id = v.content_id AND c.locale = v.locale
		WHERE v.content_id = $1 AND v.locale = $2 AND v.version_id = $3`
	pageVersionsSQL = `SELECT v.version_id, v.state, v.modified, v.actor, v.action,
			v.version_id = c.version_id AS current, v.version_id IS NOT DISTINCT FROM c.published_version_id AS published
		FROM page_versions v JOIN page_copies c ON c.page_id = v.page_id AND c.locale = v.locale
		WHERE v.page_id = $1 AND v.locale = $2 ORDER BY v.version_id DESC LIMIT $3 OFFSET $4`
	countPageVersionsSQL = `SELECT count(*) FROM page_versions WHERE page_id = $1 AND locale = $2`
	pageVersionSQL       = `SELECT v.version_id, v.state, v.modified, v.actor, v.action, v.doc, v.zones, v.components,
			v.version_id = c.version_id AS current, v.version_id IS NOT DISTINCT FROM c.published_version_id AS published
		FROM page_versions v JOIN page_copies c ON c.page_id = v.page_id AND c.locale = v.locale
		WHERE v.page_id = $1 AND v.locale = $2 AND v.version_id = $3`
	itemInInstanceSQL = `SELECT EXISTS (SELECT 1 FROM item_copies WHERE content_id = $1 AND locale = $2 AND instance_id = $3)`
	pageInInstanceSQL = `SELECT EXISTS (SELECT 1 FROM page_copies WHERE page_id = $1 AND locale = $2 AND instance_id = $3)`
)

// copyExists checks that the instance has the copy, for reads that go by
// key.
func (s *Store) copyExists(ctx context.Context, sql, what string, inst Instance, locale string, id int64) error {
	var ok bool
	if err := s.db.GetContext(ctx, &ok, sql, id, locale, inst.ID); err != nil {
		return err
	}
	if !ok {
		return problem.NotFoundf("%s %d has no copy in locale %q", what, id, locale)
	}
	return nil
}

// ItemVersions lists the versions of an item's copy in locale, newest first.
func (s *Store) ItemVersions(ctx context.Context, inst Instance, locale string, contentID int64, take, skip int) (VersionPage, error) {
	return s.versions(ctx, itemInInstanceSQL, itemVersionsSQL, countItemVersionsSQL, "item", inst, locale, contentID, take, skip)
}

// PageVersions lists the versions of a page's copy in locale, newest first.
func (s *Store) PageVersions(ctx context.Context, inst Instance, locale string, pageID int64, take, skip int) (VersionPage, error) {
	return s.versions(ctx, pageInInstanceSQL, pageVersionsSQL, countPageVersionsSQL, "page", inst, locale, pageID, take, skip)
}

func (s *Store) versions(ctx context.Context, existsSQL, listSQL, countSQL, what string, inst Instance, locale string, id int64, take, skip int) (VersionPage, error) {
	if err := s.copyExists(ctx, existsSQL, what, inst, locale, id); err != nil {
		return VersionPage{}, err
	}
	p := VersionPage{Items: []Version{}}
	if err := s.db.SelectContext(ctx, &p.Items, listSQL, id, locale, take, skip); err != nil {
		return VersionPage{}, fmt.Errorf("list %s versions: %w", what, err)
	}
	if err := s.db.GetContext(ctx, &p.TotalCount, countSQL, id, locale); err != nil {
		return VersionPage{}, fmt.Errorf("count %s versions: %w", what, err)
	}
	return p, nil
}

// ItemVersion returns an item's copy in locale as it was at versionID.
func (s *Store) ItemVersion(ctx context.Context, inst Instance, locale string, contentID, versionID int64) (ItemAtVersion, error) {
	if err := s.copyExists(ctx, itemInInstanceSQL, "item", inst, locale, contentID); err != nil {
		return ItemAtVersion{}, err
	}
	v, err := itemVersion(ctx, s.db, locale, contentID, versionID)
	if err != nil {
		return ItemAtVersion{}, err
	}
	v.Fields = withImageURLs(v.Fields, s.PublicURL)
	return v, nil
}

func itemVersion(ctx context.Context, q sqlx.QueryerContext, locale string, contentID, versionID int64) (ItemAtVersion, error) {
	v := ItemAtVersion{ContentID: contentID, Locale: locale}
	if err := sqlx.GetContext(ctx, q, &v, itemVersionSQL, contentID, locale, versionID); err != nil {
		return ItemAtVersion{}, notFound(err, "item %d has no version %d in locale %q", contentID, versionID, locale)
	}
	if v.Fields == nil {
		v.Fields = Values{}
	}
	return v, nil
}

// PageVersion returns a page's copy in locale as it was at versionID.
func (s *Store) PageVersion(ctx context.Context, inst Instance, locale string, pageID, versionID int64) (PageAtVersion, error) {
	if err := s.copyExists(ctx, pageInInstanceSQL, "page", inst, locale, pageID); err != nil {
		return PageAtVersion{}, err
	}
	return pageVersion(ctx, s.db, locale, pageID, versionID)
}

func pageVersion(ctx context.Context, q sqlx.QueryerContext, locale string, pageID, versionID int64) (PageAtVersion, error) {
	v := PageAtVersion{PageID: pageID, Locale: locale}
	if err := sqlx.GetContext(ctx, q, &v, pageVersionSQL, pageID, locale, versionID); err != nil {
		return PageAtVersion{}, notFound(err, "page %d has no version %d in locale %q", pageID, versionID, locale)
	}
	v.Components = map[string]Values{}
	if err := json.Unmarshal(v.RawComps, &v.Components); err != nil {
		return PageAtVersion{}, fmt.Errorf("page %d version %d: components: %w", pageID, versionID, err)
	}
	if v.Zones == nil {
		v.Zones = Zones{}
	}
	return v, nil
}

// RestoreItemVersion makes the fields of an earlier version the working
// copy's, as a new version (action restore): history is never rewritten.
// Fields the model no longer has are left out; shared fields are saved in
// the other copies too, as a save does.
func (s *Store) RestoreItemVersion(ctx context.Context, inst Instance, locale string, contentID, versionID int64) (Status, error) {
	var st Status
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		h, m, cur, err := lockCopy(ctx, tx, inst, locale, contentID)
		if err != nil {
			return err
		}
		old, err := itemVersion(ctx, tx, locale, contentID, versionID)
		if err != nil {
			return err
		}
		vals := Values{}
		for _, f := range m.Fields {
			if v, ok := old.Fields[f.Name]; ok {
				vals[f.Name] = v
			}
		}
		st, err = rewriteItemCopy(ctx, tx, inst, h, m, cur, vals, "restore", s.now())
		return err
	})
	if err != nil {
		return Status{}, fmt.Errorf("restore item %d version %d: %w", contentID, versionID, err)
	}
	return st, nil
}

// rewriteItemCopy writes vals as a new working version of copy cur, in
// staging, with its event, and saves the shared ones in the other copies.
func rewriteItemCopy(ctx context.Context, tx *sqlx.Tx, inst Instance, h itemHead, m Model, cur copyRow, vals Values, action string, now time.Time) (Status, error) {
	next, err := Transition(cur.State, cur.PublishedVersionID != nil, ActionSave)
	if err != nil {
		return Status{}, err
	}
	if err := missingRequired(m, vals); err != nil {
		return Status{}, err
	}
	changes := Values{}
	for _, f := range m.Fields {
		if f.Shared {
			changes[f.Name] = vals[f.Name]
		}
	}
	v, err := nextVersion(ctx, tx)
	if err != nil {
		return Status{}, err
	}
	if err := setAction(ctx, tx, action); err != nil {
		return Status{}, err
	}
	cur.Fields, cur.State, cur.VersionID, cur.Modified = vals, next, v, now
	if err := writeCopy(ctx, tx, h.ContentID, cur); err != nil {
		return Status{}, err
	}
	if err := appendEvent(ctx, tx, inst, itemEvent(h, cur.Locale, eventlog.Saved, v, now)); err != nil {
		return Status{}, err
	}
	var copies []copyRow
	if err := tx.SelectContext(ctx, &copies, selectCopiesSQL, h.ContentID); err != nil {
		return Status{}, err
	}
	if err := propagateShared(ctx, tx, inst, h, m, cur.Locale, copies, changes, now); err != nil {
		return Status{}, err
	}
	if err := setAction(ctx, tx, ""); err != nil {
		return Status{}, err
	}
	return Status{ContentID: h.ContentID, VersionID: v, State: next}, nil
}

// DiscardItem drops the changes of an item's copy in locale since it was
// published: the working copy becomes the published version again. A
// copy that was never published (or was unpublished) has nothing to go
// back to (409); one without changes is left as it is.
func (s *Store) DiscardItem(ctx context.Context, inst Instance, locale string, contentID int64) (Status, error) {
	var st Status
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		h, _, c, err := lockCopy(ctx, tx, inst, locale, contentID)
		if err != nil {
			return err
		}
		st, err = discardItemCopy(ctx, tx, inst, h, c, s.now())
		return err
	})
	if err != nil {
		return Status{}, fmt.Errorf("discard item %d: %w", contentID, err)
	}
	return st, nil
}

func discardItemCopy(ctx context.Context, tx *sqlx.Tx, inst Instance, h itemHead, c copyRow, now time.Time) (Status, error) {
	if c.State == Deleted {
		return Status{}, problem.Conflictf("cannot discard: it is deleted")
	}
	if c.PublishedVersionID == nil {
		return Status{}, problem.Conflictf("cannot discard: item %d has no published version in locale %q to go back to", h.ContentID, c.Locale)
	}
	if c.State == Published && c.VersionID == *c.PublishedVersionID {
		return Status{ContentID: h.ContentID, VersionID: c.VersionID, State: c.State}, nil
	}
	if err := setAction(ctx, tx, "discard"); err != nil {
		return Status{}, err
	}
	c.Fields, c.VersionID, c.Modified, c.State = *c.PublishedFields, *c.PublishedVersionID, *c.PublishedModified, Published
	if err := writeCopy(ctx, tx, h.ContentID, c); err != nil {
		return Status{}, err
	}
	if err := appendEvent(ctx, tx, inst, itemEvent(h, c.Locale, eventlog.Saved, c.VersionID, now)); err != nil {
		return Status{}, err
	}
	if err := setAction(ctx, tx, ""); err != nil {
		return Status{}, err
	}
	return Status{ContentID: h.ContentID, VersionID: c.VersionID, State: Published}, nil
}

// RestorePageVersion makes an earlier version of a page's copy the working
// one, as a new version: its fields, its zones (those the page model still
// has) and the field values its components had, components removed since
// coming back and those added since removed. The page's name and place in
// the tree are not versioned (PUT .../position and name move them).
func (s *Store) RestorePageVersion(ctx context.Context, inst Instance, locale string, pageID, versionID int64) (Status, error) {
	var st Status
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		h, err := lockPage(ctx, tx, inst, pageID)
		if err != nil {
			return err
		}
		c, err := loadPageCopy(ctx, tx, pageID, locale)
		if err != nil {
			return err
		}
		if err := checkIfMatch(ctx, c.VersionID, true); err != nil {
			return err
		}
		next, err := Transition(c.State, c.PublishedVersionID != nil, ActionSave)
		if err != nil {
			return err
		}
		old, err := pageVersion(ctx, tx, locale, pageID, versionID)
		if err != nil {
			return err
		}
		pm, err := pageModelByName(ctx, tx, inst, h.PageModel)
		if err != nil {
			return err
		}
		if err := setAction(ctx, tx, "restore"); err != nil {
			return err
		}
		zones := Zones{}
		keep := map[int64]bool{}
		now := s.now()
		for _, z := range pm.Zones {
			zones[z] = []int64{}
			for _, id := range old.Zones[z] {
				vals, ok := old.Components[strconv.FormatInt(id, 10)]
				if !ok {
					continue
				}
				ok, err := restoreComponent(ctx, tx, inst, locale, id, vals, now)
				if err != nil {
					return err
				}
				if ok {
					zones[z] = append(zones[z], id)
					keep[id] = true
				}
			}
		}
		if err := dropComponents(ctx, tx, inst, locale, c.Zones, keep, now); err != nil {
			return err
		}
		c.Doc, c.Zones = old.Doc, zones
		// Restoring the components reset the action.
		if err := setAction(ctx, tx, "restore"); err != nil {
			return err
		}
		if err := savePageCopy(ctx, tx, inst, pageID, c, next, now); err != nil {
			return err
		}
		if err := setAction(ctx, tx, ""); err != nil {
			return err
		}
		st = Status{PageID: pageID, VersionID: c.VersionID, State: next}
		var v int64
		err = tx.GetContext(ctx, &v, `SELECT version_id FROM page_copies WHERE page_id = $1 AND locale = $2`, pageID, locale)
		st.VersionID = v
		return err
	})
	if err != nil {
		return Status{}, fmt.Errorf("restore page %d version %d: %w", pageID, versionID, err)
	}
	return st, nil
}

// restoreComponent gives a component's copy in locale the values vals
// again (a new version, in staging), and reports whether the component
// can be placed (its copy exists).
func restoreComponent(ctx context.Context, tx *sqlx.Tx, inst Instance, locale string, id int64, vals Values, now time.Time) (bool, error) {
	h, m, err := lockItem(ctx, tx, inst, id)
	if problem.Is(err, problem.NotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	c, err := loadCopy(ctx, tx, id, locale)
	if problem.Is(err, problem.NotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if c.State != Deleted && jsonEqual(c.Fields, vals) {
		return true, nil
	}
	if c.State == Deleted {
		c.State = Staging // a removed component comes back
	}
	kept := Values{}
	for _, f := range m.Fields {
		if v, ok := vals[f.Name]; ok {
			kept[f.Name] = v
		}
	}
	_, err = rewriteItemCopy(ctx, tx, inst, h, m, c, kept, "restore", now)
	return err == nil, err
}

// dropComponents deletes the copies in locale of the components of zones
// that keep does not hold.
func dropComponents(ctx context.Context, tx *sqlx.Tx, inst Instance, locale string, zones Zones, keep map[int64]bool, now time.Time) error {
	for _, ids := range zones {
		for _, id := range ids {
			if keep[id] {
				continue
			}
			h, _, err := lockItem(ctx, tx, inst, id)
			if err != nil {
				return err
			}
			ic, err := loadCopy(ctx, tx, id, locale)
			if problem.Is(err, problem.NotFound) {
				continue
			} else if err != nil {
				return err
			}
			if ic.State == Deleted {
				continue
			}
			if _, err := applyItemAction(ctx, tx, inst, h, ic, ActionDelete, now); err != nil {
				return err
			}
		}
	}
	return nil
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// DiscardPage drops the changes of a page's copy in locale since it was
// published: its fields and zones become the published ones again, the
// components in them their published values, and components added since
// are removed.
func (s *Store) DiscardPage(ctx context.Context, inst Instance, locale string, pageID int64) (Status, error) {
	var st Status
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
		if c.State == Deleted {
			return problem.Conflictf("cannot discard: it is deleted")
		}
		if c.PublishedVersionID == nil {
			return problem.Conflictf("cannot discard: page %d has no published version in locale %q to go back to", pageID, locale)
		}
		st = Status{PageID: pageID, VersionID: c.VersionID, State: c.State}
		if c.State == Published && c.VersionID == *c.PublishedVersionID {
			return nil
		}
		now := s.now()
		keep := map[int64]bool{}
		for _, ids := range *c.PublishedZones {
			for _, id := range ids {
				keep[id] = true
				h, _, err := lockItem(ctx, tx, inst, id)
				if err != nil {
					return err
				}
				ic, err := loadCopy(ctx, tx, id, locale)
				if err != nil {
					return err
				}
				if ic.PublishedVersionID != nil && ic.State != Deleted {
					if _, err := discardItemCopy(ctx, tx, inst, h, ic, now); err != nil {
						return err
					}
				}
			}
		}
		if err := dropComponents(ctx, tx, inst, locale, c.Zones, keep, now); err != nil {
			return err
		}
		if err := setAction(ctx, tx, "discard"); err != nil {
			return err
		}
		c.Doc, c.Zones, c.VersionID, c.Modified, c.State = *c.PublishedDoc, *c.PublishedZones, *c.PublishedVersionID, *c.PublishedModified, Published
		if err := writePageCopy(ctx, tx, pageID, c); err != nil {
			return err
		}
		if err := appendEvent(ctx, tx, inst, pageEvent(pageID, locale, eventlog.Saved, c.VersionID, now)); err != nil {
			return err
		}
		st = Status{PageID: pageID, VersionID: c.VersionID, State: Published}
		return setAction(ctx, tx, "")
	})
	if err != nil {
		return Status{}, fmt.Errorf("discard page %d: %w", pageID, err)
	}
	return st, nil
}

package content

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/internal/pg"
	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/problem"
)

// Item is one locale's copy of a content item as the management API shows
// it: the working copy, its state, and what is published.
type Item struct {
	ContentID     int64          `db:"content_id" json:"contentID"`
	Locale        string         `db:"locale" json:"locale"`
	ReferenceName string         `db:"reference_name" json:"referenceName"`
	Model         string         `db:"model" json:"model"`
	State         State          `db:"state" json:"state"`
	VersionID     int64          `db:"version_id" json:"versionID"`
	Modified      time.Time      `db:"modified" json:"modified"`
	ItemOrder     int            `db:"item_order" json:"itemOrder"`
	Fields        Values         `db:"fields" json:"fields"`
	Published     *PublishedInfo `db:"-" json:"published"`
	PublishAt     *time.Time     `db:"publish_at" json:"publishAt"`
	UnpublishAt   *time.Time     `db:"unpublish_at" json:"unpublishAt"`
}

// PublishedInfo says which version of a copy is published, and when it was saved.
type PublishedInfo struct {
	VersionID int64     `json:"versionID"`
	Modified  time.Time `json:"modified"`
}

// Status is what a change answers: the copy's id, version and state.
type Status struct {
	ContentID int64 `json:"contentID,omitempty"`
	PageID    int64 `json:"pageID,omitempty"`
	VersionID int64 `json:"versionID"`
	State     State `json:"state"`
}

// itemHead is the locale-independent part of an item.
type itemHead struct {
	ContentID     int64  `db:"content_id"`
	ModelID       int64  `db:"model_id"`
	ContainerID   *int64 `db:"container_id"`
	ReferenceName string `db:"reference_name"`
	ItemOrder     int    `db:"item_order"`
}

// copyRow is one item_copies row.
type copyRow struct {
	Locale             string     `db:"locale"`
	State              State      `db:"state"`
	VersionID          int64      `db:"version_id"`
	Fields             Values     `db:"fields"`
	Modified           time.Time  `db:"modified"`
	PublishedVersionID *int64     `db:"published_version_id"`
	PublishedFields    *Values    `db:"published_fields"`
	PublishedModified  *time.Time `db:"published_modified"`
	PublishAt          *time.Time `db:"publish_at"`
	UnpublishAt        *time.Time `db:"unpublish_at"`
}

// ComponentReferenceNameSQL is the SQL of the referenceName of a component
// item (i an item joined to its model m), which lives in a page zone rather
// than in a container. The render read model (package render/source) uses
// it too.
const ComponentReferenceNameSQL = `lower(m.name) || '_' || i.content_id`

const (
	lockItemSQL = `SELECT i.content_id, i.model_id, i.container_id, i.item_order,
			coalesce(c.reference_name, ` + ComponentReferenceNameSQL + `) AS reference_name
		FROM items i JOIN models m ON m.id = i.model_id LEFT JOIN containers c ON c.id = i.container_id
		WHERE i.instance_id = $1 AND i.content_id = $2 FOR UPDATE OF i`
	selectModelByIDSQL = `SELECT id, name, kind, fields, created_at, revision FROM models WHERE id = $1`
	selectCopySQL      = `SELECT locale, state, version_id, fields, modified, published_version_id, published_fields,
			published_modified, publish_at, unpublish_at
		FROM item_copies WHERE content_id = $1 AND locale = $2`
	selectCopiesSQL = `SELECT locale, state, version_id, fields, modified, published_version_id, published_fields,
			published_modified, publish_at, unpublish_at
		FROM item_copies WHERE content_id = $1 ORDER BY locale`
	nextVersionSQL = `SELECT nextval('versions')`
	insertItemSQL  = `INSERT INTO items (instance_id, model_id, container_id, item_order)
		VALUES ($1, $2, $3, coalesce((SELECT max(item_order) FROM items WHERE container_id = $3), 0) + 1)
		RETURNING content_id, item_order`
	lockContainerSQL = `SELECT id FROM containers WHERE id = $1 FOR UPDATE`
	insertCopySQL    = `INSERT INTO item_copies (content_id, instance_id, locale, state, version_id, fields, modified)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`
	updateCopySQL = `UPDATE item_copies SET state = $3, version_id = $4, fields = $5, modified = $6,
			published_version_id = $7, published_fields = $8, published_modified = $9,
			publish_at = $10, unpublish_at = $11
		WHERE content_id = $1 AND locale = $2`
)

func lockItem(ctx context.Context, tx *sqlx.Tx, inst Instance, contentID int64) (itemHead, Model, error) {
	var h itemHead
	if err := tx.GetContext(ctx, &h, lockItemSQL, inst.ID, contentID); err != nil {
		return h, Model{}, notFound(err, "item %d not found", contentID)
	}
	var m Model
	if err := tx.GetContext(ctx, &m, selectModelByIDSQL, h.ModelID); err != nil {
		return h, Model{}, err
	}
	return h, m, nil
}

// lockCopy locks an item (as lockItem) and loads its copy in locale,
// refusing with 412 when the request's If-Match names another version:
// what every change of one copy starts with.
func lockCopy(ctx context.Context, tx *sqlx.Tx, inst Instance, locale string, contentID int64) (itemHead, Model, copyRow, error) {
	h, m, err := lockItem(ctx, tx, inst, contentID)
	if err != nil {
		return itemHead{}, Model{}, copyRow{}, err
	}
	c, err := loadCopy(ctx, tx, contentID, locale)
	if err != nil {
		return itemHead{}, Model{}, copyRow{}, err
	}
	if err := checkIfMatch(ctx, c.VersionID, true); err != nil {
		return itemHead{}, Model{}, copyRow{}, err
	}
	return h, m, c, nil
}

func loadCopy(ctx context.Context, tx *sqlx.Tx, contentID int64, locale string) (copyRow, error) {
	var c copyRow
	err := tx.GetContext(ctx, &c, selectCopySQL, contentID, locale)
	return c, notFound(err, "item %d has no copy in locale %q", contentID, locale)
}

func writeCopy(ctx context.Context, tx *sqlx.Tx, contentID int64, c copyRow) error {
	fields, _ := json.Marshal(c.Fields)
	var pub []byte
	if c.PublishedFields != nil {
		pub, _ = json.Marshal(*c.PublishedFields)
	}
	_, err := tx.ExecContext(ctx, updateCopySQL, contentID, c.Locale, c.State, c.VersionID, fields, c.Modified,
		c.PublishedVersionID, pub, c.PublishedModified, c.PublishAt, c.UnpublishAt)
	return err
}

func nextVersion(ctx context.Context, tx *sqlx.Tx) (int64, error) {
	var v int64
	err := tx.GetContext(ctx, &v, nextVersionSQL)
	return v, err
}

func itemEvent(h itemHead, locale string, state eventlog.State, version int64, at time.Time) eventlog.Event {
	return eventlog.Event{State: state, Subject: eventlog.SubjectItem, Locale: ptr(locale), ReferenceName: ptr(h.ReferenceName),
		ContentID: ptr(h.ContentID), VersionID: ptr(version), ChangeDate: at}
}

// CreateItem creates a content item in a container, with its first copy in
// locale, in the staging state.
func (s *Store) CreateItem(ctx context.Context, inst Instance, locale, referenceName string, fields map[string]json.RawMessage) (Status, error) {
	var st Status
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		c, err := containerByName(ctx, tx, inst, referenceName)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, lockContainerSQL, c.ID); err != nil {
			return err
		}
		var m Model
		if err := tx.GetContext(ctx, &m, selectModelByIDSQL, c.ModelID); err != nil {
			return err
		}
		st, err = createItem(ctx, tx, inst, locale, m, &c, fields, s.now())
		return err
	})
	if err != nil {
		return Status{}, fmt.Errorf("create item: %w", err)
	}
	return st, nil
}

// createItem creates an item of model m (in container c, or a component when
// c is nil) with its first copy in locale.
func createItem(ctx context.Context, tx *sqlx.Tx, inst Instance, locale string, m Model, c *Container, fields map[string]json.RawMessage, now time.Time) (Status, error) {
	vals, err := normalizeValues(ctx, tx, inst, m, fields)
	if err != nil {
		return Status{}, err
	}
	vals = merge(nil, vals)
	if err := missingRequired(m, vals); err != nil {
		return Status{}, err
	}
	h := itemHead{ModelID: m.ID}
	var containerID *int64
	if c != nil {
		containerID = &c.ID
	}
	if err := tx.QueryRowxContext(ctx, insertItemSQL, inst.ID, m.ID, containerID).Scan(&h.ContentID, &h.ItemOrder); err != nil {
		return Status{}, err
	}
	if c != nil {
		h.ReferenceName = c.ReferenceName
	} else {
		h.ReferenceName = fmt.Sprintf("%s_%d", lower(m.Name), h.ContentID)
	}
	v, err := nextVersion(ctx, tx)
	if err != nil {
		return Status{}, err
	}
	raw, _ := json.Marshal(vals)
	if _, err := tx.ExecContext(ctx, insertCopySQL, h.ContentID, inst.ID, locale, Staging, v, raw, now); err != nil {
		return Status{}, unknownLocale(err, locale)
	}
	if err := appendEvent(ctx, tx, inst, itemEvent(h, locale, eventlog.Saved, v, now)); err != nil {
		return Status{}, err
	}
	return Status{ContentID: h.ContentID, VersionID: v, State: Staging}, nil
}

// SaveItem saves field values to the copy of an item in locale, creating the
// connected copy when the locale has none. Fields not named keep their
// values; a null clears a field. Shared fields are saved in every connected
// copy, and that counts as a save of each.
func (s *Store) SaveItem(ctx context.Context, inst Instance, locale string, contentID int64, fields map[string]json.RawMessage) (Status, error) {
	var st Status
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		var err error
		st, err = saveItem(ctx, tx, inst, locale, contentID, fields, s.now())
		return err
	})
	if err != nil {
		return Status{}, fmt.Errorf("save item %d: %w", contentID, err)
	}
	return st, nil
}

func saveItem(ctx context.Context, tx *sqlx.Tx, inst Instance, locale string, contentID int64, fields map[string]json.RawMessage, now time.Time) (Status, error) {
	h, m, err := lockItem(ctx, tx, inst, contentID)
	if err != nil {
		return Status{}, err
	}
	changes, err := normalizeValues(ctx, tx, inst, m, fields)
	if err != nil {
		return Status{}, err
	}
	var copies []copyRow
	if err := tx.SelectContext(ctx, &copies, selectCopiesSQL, contentID); err != nil {
		return Status{}, err
	}
	var cur *copyRow
	for i := range copies {
		if copies[i].Locale == locale {
			cur = &copies[i]
		}
	}
	if cur != nil {
		err = checkIfMatch(ctx, cur.VersionID, true)
	} else {
		err = checkIfMatch(ctx, 0, false)
	}
	if err != nil {
		return Status{}, err
	}
	v, err := nextVersion(ctx, tx)
	if err != nil {
		return Status{}, err
	}
	if cur == nil {
		// A new connected copy starts from the shared values of the others.
		base := Values{}
		for _, c := range copies {
			if c.State == Deleted {
				continue
			}
			for _, f := range m.Fields {
				if val, ok := c.Fields[f.Name]; ok && f.Shared {
					base[f.Name] = val
				}
			}
			break
		}
		vals := merge(base, changes)
		if err := missingRequired(m, vals); err != nil {
			return Status{}, err
		}
		raw, _ := json.Marshal(vals)
		if _, err := tx.ExecContext(ctx, insertCopySQL, contentID, inst.ID, locale, Staging, v, raw, now); err != nil {
			return Status{}, unknownLocale(err, locale)
		}
	} else {
		next, err := Transition(cur.State, cur.PublishedVersionID != nil, ActionSave)
		if err != nil {
			return Status{}, err
		}
		cur.Fields = merge(cur.Fields, changes)
		if err := missingRequired(m, cur.Fields); err != nil {
			return Status{}, err
		}
		cur.State, cur.VersionID, cur.Modified = next, v, now
		if err := writeCopy(ctx, tx, contentID, *cur); err != nil {
			return Status{}, err
		}
	}
	if err := appendEvent(ctx, tx, inst, itemEvent(h, locale, eventlog.Saved, v, now)); err != nil {
		return Status{}, err
	}
	if err := propagateShared(ctx, tx, inst, h, m, locale, copies, changes, now); err != nil {
		return Status{}, err
	}
	return Status{ContentID: contentID, VersionID: v, State: Staging}, nil
}

// unknownLocale turns the foreign key violation of a copy in a locale the
// instance does not have into a NotFound problem.
func unknownLocale(err error, locale string) error {
	if pg.Code(err) == pg.CodeForeignKeyViolation {
		return problem.NotFoundf("locale %q is not configured", locale)
	}
	return err
}

// propagateShared saves the shared fields among changes in every other
// non-deleted copy of the item.
func propagateShared(ctx context.Context, tx *sqlx.Tx, inst Instance, h itemHead, m Model, locale string, copies []copyRow, changes Values, now time.Time) error {
	shared := Values{}
	for name, v := range changes {
		if f, _ := m.Field(name); f.Shared {
			shared[name] = v
		}
	}
	if len(shared) == 0 {
		return nil
	}
	for _, c := range copies {
		if c.Locale == locale || c.State == Deleted {
			continue
		}
		v, err := nextVersion(ctx, tx)
		if err != nil {
			return err
		}
		c.Fields = merge(c.Fields, shared)
		c.State, c.VersionID, c.Modified = Staging, v, now
		if err := writeCopy(ctx, tx, h.ContentID, c); err != nil {
			return err
		}
		if err := appendEvent(ctx, tx, inst, itemEvent(h, c.Locale, eventlog.Saved, v, now)); err != nil {
			return err
		}
	}
	return nil
}

// ItemAction takes a workflow action (publish, unpublish, request-approval,
// approve, decline, delete) on the copy of an item in locale.
func (s *Store) ItemAction(ctx context.Context, inst Instance, locale string, contentID int64, a Action) (Status, error) {
	if a == ActionSave {
		return Status{}, problem.Invalidf("save is not an action; PUT the item's fields")
	}
	var st Status
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		h, _, c, err := lockCopy(ctx, tx, inst, locale, contentID)
		if err != nil {
			return err
		}
		st, err = applyItemAction(ctx, tx, inst, h, c, a, s.now())
		return err
	})
	if err != nil {
		return Status{}, fmt.Errorf("%s item %d: %w", a, contentID, err)
	}
	return st, nil
}

// applyItemAction moves copy c of item h through action a and writes its event.
func applyItemAction(ctx context.Context, tx *sqlx.Tx, inst Instance, h itemHead, c copyRow, a Action, now time.Time) (Status, error) {
	next, err := Transition(c.State, c.PublishedVersionID != nil, a)
	if err != nil {
		return Status{}, err
	}
	c.State = next
	switch a {
	case ActionPublish:
		c.PublishedVersionID, c.PublishedFields, c.PublishedModified = ptr(c.VersionID), ptr(c.Fields), ptr(c.Modified)
		c.PublishAt = nil
	case ActionUnpublish:
		c.PublishedVersionID, c.PublishedFields, c.PublishedModified = nil, nil, nil
		c.UnpublishAt = nil
	case ActionDelete:
		c.PublishedVersionID, c.PublishedFields, c.PublishedModified = nil, nil, nil
		c.PublishAt, c.UnpublishAt = nil, nil
	}
	if err := writeCopy(ctx, tx, h.ContentID, c); err != nil {
		return Status{}, err
	}
	if err := appendEvent(ctx, tx, inst, itemEvent(h, c.Locale, a.EventState(), c.VersionID, now)); err != nil {
		return Status{}, err
	}
	return Status{ContentID: h.ContentID, VersionID: c.VersionID, State: next}, nil
}

// DeleteItem deletes the copy of an item in locale. Its published version,
// if any, is withdrawn.
func (s *Store) DeleteItem(ctx context.Context, inst Instance, locale string, contentID int64) error {
	_, err := s.ItemAction(ctx, inst, locale, contentID, ActionDelete)
	return err
}

const (
	itemColumns = `i.content_id, ic.locale, coalesce(c.reference_name, ` + ComponentReferenceNameSQL + `) AS reference_name,
		m.name AS model, ic.state, ic.version_id, ic.modified, i.item_order, ic.fields, ic.publish_at, ic.unpublish_at,
		ic.published_version_id, ic.published_modified`
	itemFrom = ` FROM items i JOIN item_copies ic ON ic.content_id = i.content_id
		JOIN models m ON m.id = i.model_id LEFT JOIN containers c ON c.id = i.container_id`
	selectItemSQL       = `SELECT ` + itemColumns + itemFrom + ` WHERE i.instance_id = $1 AND i.content_id = $2 AND ic.locale = $3`
	selectItemsSQL      = `SELECT ` + itemColumns + itemFrom + ` WHERE i.container_id = $1 AND ic.locale = $2 ORDER BY i.item_order, i.content_id LIMIT $3 OFFSET $4`
	countItemsSQL       = `SELECT count(*) FROM items i JOIN item_copies ic ON ic.content_id = i.content_id WHERE i.container_id = $1 AND ic.locale = $2`
	itemExistsSQL       = `SELECT EXISTS (SELECT 1 FROM items WHERE instance_id = $1 AND content_id = $2)`
	containerItemIDsSQL = `SELECT content_id FROM items WHERE container_id = $1 ORDER BY item_order, content_id FOR UPDATE`
	setItemOrderSQL     = `UPDATE items SET item_order = o.n FROM unnest($1::bigint[]) WITH ORDINALITY AS o(id, n) WHERE items.content_id = o.id`
)

type itemRow struct {
	Item
	PublishedVersionID *int64     `db:"published_version_id"`
	PublishedModified  *time.Time `db:"published_modified"`
}

// item is the Item of the row, with the URLs of its asset images made
// from u.
func (r itemRow) item(u media.PublicURL) Item {
	it := r.Item
	if r.PublishedVersionID != nil {
		it.Published = &PublishedInfo{VersionID: *r.PublishedVersionID, Modified: *r.PublishedModified}
	}
	if it.Fields == nil {
		it.Fields = Values{}
	}
	it.Fields = withImageURLs(it.Fields, u)
	return it
}

// Item returns the working copy of an item in locale.
func (s *Store) Item(ctx context.Context, inst Instance, locale string, contentID int64) (Item, error) {
	var r itemRow
	if err := s.db.GetContext(ctx, &r, selectItemSQL, inst.ID, contentID, locale); err != nil {
		if problem.Is(notFound(err, ""), problem.NotFound) {
			var exists bool
			if err := s.db.GetContext(ctx, &exists, itemExistsSQL, inst.ID, contentID); err == nil && exists {
				return Item{}, problem.NotFoundf("item %d has no copy in locale %q", contentID, locale)
			}
			return Item{}, problem.NotFoundf("item %d not found", contentID)
		}
		return Item{}, fmt.Errorf("get item %d: %w", contentID, err)
	}
	return r.item(s.PublicURL), nil
}

// ItemPage is one page of a container's items.
type ItemPage struct {
	Items      []Item `json:"items"`
	TotalCount int    `json:"totalCount"`
}

// Items lists the working copies in locale of a container's items, in
// container order.
func (s *Store) Items(ctx context.Context, inst Instance, locale, referenceName string, take, skip int) (ItemPage, error) {
	c, err := s.Container(ctx, inst, referenceName)
	if err != nil {
		return ItemPage{}, err
	}
	var rows []itemRow
	if err := s.db.SelectContext(ctx, &rows, selectItemsSQL, c.ID, locale, take, skip); err != nil {
		return ItemPage{}, fmt.Errorf("list items: %w", err)
	}
	p := ItemPage{Items: make([]Item, len(rows))}
	for i, r := range rows {
		p.Items[i] = r.item(s.PublicURL)
	}
	if err := s.db.GetContext(ctx, &p.TotalCount, countItemsSQL, c.ID, locale); err != nil {
		return ItemPage{}, fmt.Errorf("count items: %w", err)
	}
	return p, nil
}

// ReorderContainer sets the order of a container's items: the listed items
// come first, in the order given, and the others follow in their current
// order. It writes one whole-list Deleted event per locale, as the spec has
// it for changes that concern a whole list.
func (s *Store) ReorderContainer(ctx context.Context, inst Instance, referenceName string, contentIDs []int64) error {
	return s.transact(ctx, func(tx *sqlx.Tx) error {
		c, err := containerByName(ctx, tx, inst, referenceName)
		if err != nil {
			return err
		}
		var current []int64
		if err := tx.SelectContext(ctx, &current, containerItemIDsSQL, c.ID); err != nil {
			return err
		}
		in := map[int64]bool{}
		for _, id := range current {
			in[id] = true
		}
		listed := map[int64]bool{}
		for _, id := range contentIDs {
			if !in[id] {
				return problem.Field("contentIDs", "item %d is not in container %q", id, c.ReferenceName)
			}
			if listed[id] {
				return problem.Field("contentIDs", "item %d is listed twice", id)
			}
			listed[id] = true
		}
		order := append([]int64{}, contentIDs...)
		for _, id := range current {
			if !listed[id] {
				order = append(order, id)
			}
		}
		if _, err := tx.ExecContext(ctx, setItemOrderSQL, pq.Array(order)); err != nil {
			return err
		}
		return appendListEvents(ctx, tx, inst, c.ReferenceName, s.now())
	})
}

// appendListEvents writes a whole-list Deleted event for every locale.
func appendListEvents(ctx context.Context, tx *sqlx.Tx, inst Instance, referenceName string, now time.Time) error {
	var locales []string
	if err := tx.SelectContext(ctx, &locales, selectLocaleCodesSQL, inst.ID); err != nil {
		return err
	}
	for _, l := range locales {
		e := eventlog.Event{State: eventlog.Deleted, Subject: eventlog.SubjectList, Locale: ptr(l), ReferenceName: ptr(referenceName), ChangeDate: now}
		if err := appendEvent(ctx, tx, inst, e); err != nil {
			return err
		}
	}
	return nil
}

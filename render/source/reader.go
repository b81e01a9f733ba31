// Package source is the render read model: the reads of the Fetch API
// renderer (package render) on the content tables that package content
// writes. It has the two implementations of render.Source: Reader, which
// reads Postgres with prepared statements a fixed number of queries per
// answer (the origin, the publisher's event handling), and Snapshot, the
// published content of one instance and locale loaded into memory in one
// transaction (the publisher's republish). render's differential test
// checks that both give the same bytes. The sync streams (SyncChanges) read
// the positions package syncstamp gives, stamping first.
package source

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lib/pq"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/syncstamp"
)

// This file holds the reads of the Fetch API renderer (package render), as
// methods of a Reader that keeps them prepared: item copies with everything
// their links need, container contents, the pages of a channel and the
// items behind dynamic pages, each in one flavour. Every read takes whole
// sets of ids or names, so rendering costs a fixed number of queries
// whatever the number of links.

// Flavour says which copy of content the Fetch API delivers. Its values are
// the API types of the Fetch API path.
type Flavour string

// The two flavours.
const (
	// FlavourFetch delivers the published copy of items and pages that have
	// one, always in state Published.
	FlavourFetch Flavour = "fetch"
	// FlavourPreview delivers the working copy, in its own state, of every
	// item and page that is not deleted.
	FlavourPreview Flavour = "preview"
)

func (fl Flavour) pick(fetch, preview string) (string, error) {
	switch fl {
	case FlavourFetch:
		return fetch, nil
	case FlavourPreview:
		return preview, nil
	}
	return "", fmt.Errorf("unknown flavour %q", fl)
}

// ItemVersion is one locale's copy of an item in one flavour, as the Fetch
// API renders it.
type ItemVersion struct {
	ContentID int64
	ModelID   int64
	// Model is the name of the item's model (its definitionName).
	Model string
	// ModelFields is the JSON of the model's field definitions (a Fields)
	// as stored. Items of one model carry equal bytes, so a caller decodes
	// each distinct value once; keying a cache by the bytes rather than by
	// the model id stays right if models ever become editable.
	ModelFields json.RawMessage
	// ReferenceName is the item's container, or for a component the
	// component's own reference name.
	ReferenceName string
	ItemOrder     int
	State         content.State // content.Published for the fetch flavour
	VersionID     int64
	Modified      time.Time
	Fields        content.Values
}

// ItemHead names a visible item and its model, for references that are not
// expanded.
type ItemHead struct {
	ContentID int64
	Model     string
}

// ContainerContents is a container, how many of its items are visible in
// one flavour, and the contentIDs of a window of them in container order.
type ContainerContents struct {
	ReferenceName string
	// Model is the name of the container's model and ModelFields the JSON
	// of its field definitions, as in ItemVersion.
	Model       string
	ModelFields json.RawMessage
	Total       int
	ContentIDs  []int64
}

// PageVersion is one locale's copy of a page in one flavour, as the Fetch
// API renders it.
type PageVersion struct {
	PageID    int64
	ParentID  *int64
	SortOrder int
	Name      string
	PageType  string
	// Model is the name of the page model (the page's templateName) and
	// ModelZones its zones in order.
	Model      string
	ModelZones []string
	// DynamicContainerID, DynamicReferenceName and DynamicPathField bind a
	// dynamic page to a container; they are zero for other pages.
	DynamicContainerID   int64
	DynamicReferenceName string
	DynamicPathField     string
	// DynamicTitleField names the field that titles the page's sitemap
	// nodes: the page's titleField, else the model's field named title,
	// else "" (the path value titles them).
	DynamicTitleField string
	State             content.State // content.Published for the fetch flavour
	VersionID         int64
	Modified          time.Time
	Doc               content.PageDoc
	Zones             content.Zones
}

// DynamicBinding asks for the items behind a dynamic page: the visible items
// of a container with the value of one of their text fields.
type DynamicBinding struct {
	ContainerID int64
	PathField   string
	TitleField  string
}

// DynamicItem is an item behind a dynamic page: Order its place in the
// container, PathValue the value of the binding's path field and TitleValue
// that of its title field ("" when it has none or it is unset).
type DynamicItem struct {
	ContentID  int64
	Order      int
	PathValue  string
	TitleValue string
}

// ItemNode is an item copy reached by ItemGraph, Depth links away from the
// nearest root. Within the graph's levels it carries everything (Head is
// false); one level past them it is a head (Head is true): the item is
// visible, and Version lacks its Fields and ModelFields.
type ItemNode struct {
	Depth   int
	Head    bool
	Version ItemVersion
}

// How the item reads stay index-driven. Every read of one item copy is a
// LATERAL subquery with LIMIT 1 on the primary key (content_id, locale), so
// that Postgres can only run it as a nested loop of index lookups, one per
// item returned: never a hash join over the items of a locale or instance,
// whatever the table statistics say (they may be missing, or old). The
// instance is checked outside the subquery, on the row found: inside, it
// would let the planner read the copy through item_copies_locale (every
// copy of the locale) when it has no statistics to tell them apart. Sets of
// ids are read with unnest((SELECT $3::bigint[])): the sub-select hides the
// array from the planner in custom plans as in generic ones, so it
// estimates 10 rows either way; a prepared statement then settles on its
// generic plan (see Reader), and the estimates, and the hash tables sized
// from them, stay small. Container windows and counts read item_copies'
// container order indexes and container_counts
// (schema/009_index_driven_reads.sql).
const (
	// itemVersionCols are the columns of an item version, from ic (the
	// copy), m (its model) and c (its container, if any), before the
	// flavour's own columns.
	itemVersionCols = `ic.content_id, ic.model_id, m.name, m.fields, coalesce(c.reference_name, ` + copyReferenceName + `), ic.item_order, `
	itemFetchCols   = `2, ic.published_version_id, ic.published_modified, ic.published_fields`
	itemPreviewCols = `ic.state, ic.version_id, ic.modified, ic.fields`
	itemFetchSeen   = ` AND ic.published_version_id IS NOT NULL`
	itemPreviewSeen = ` AND ic.state <> 3`
	// copyReferenceName is content.ComponentReferenceNameSQL for a copy joined to its
	// model without its item.
	copyReferenceName = `lower(m.name) || '_' || ic.content_id`

	// modelAndContainer joins the model and container of copy ic.
	modelAndContainer = `
		CROSS JOIN LATERAL (SELECT m.name, m.fields FROM models m WHERE m.id = ic.model_id LIMIT 1) AS m
		LEFT JOIN LATERAL (SELECT c.reference_name FROM containers c WHERE c.id = ic.container_id LIMIT 1) AS c ON true`

	// containerItems reads the visible copies in locale $2 of the items of
	// container c (%[1]s is the flavour's condition) in container order,
	// by the flavour's container order index: one container at a time, so
	// that the cost is the container's size, not its share of the locale
	// that the statistics give the average container.
	containerItems = `
		CROSS JOIN LATERAL (SELECT * FROM item_copies ic WHERE ic.container_id = c.id AND ic.locale = $2%[1]s
			ORDER BY ic.item_order, ic.content_id OFFSET 0) AS ic`
	containerOrder = ` ORDER BY c.id, ic.item_order, ic.content_id`

	containerVersionsSQL = `SELECT ` + itemVersionCols + `%[2]s FROM containers c` + containerItems + `
		JOIN models m ON m.id = ic.model_id
		WHERE c.instance_id = $1 AND lower(c.reference_name) = ANY($3)` + containerOrder

	// itemLinks is the array of the contentIDs an item copy's values (%[1]s)
	// link to: item links and selections, in field order. It is the
	// expression of the GIN indexes item_copies_links and
	// item_copies_published_links, and the item graph follows exactly
	// these.
	itemLinks = `translate((jsonb_path_query_array(%[1]s, '$.*.contentID')
		|| jsonb_path_query_array(%[1]s, '$.*.contentIDs[*]'))::text, '[]', '{}')::bigint[]`

	// itemGraphSQL walks item links and selections from the roots $3 for
	// $4 levels. Items past the last level come back
	// as heads, without fields. Links to whole containers are not
	// followed: they can reach any number of items, which the caller loads
	// in steps.
	//
	// The walk looks up each copy it reaches once, by key, and carries its
	// row's address (ctid, read again by a TID scan under the statement's
	// one snapshot) and, while the walk goes on past it, its links; UNION
	// keeps one row per item and depth, so the walk is bounded by items x
	// depth even through cycles. Each item comes back once, at its
	// smallest depth. %[1]s is the flavour's values, %[2]s its visibility
	// condition, %[3]s its version columns, %[4]s the links of %[1]s.
	itemGraphSQL = `WITH RECURSIVE walk(content_id, depth, tid, links) AS (
			SELECT ic.content_id, 0, ic.ctid, ic.links
			FROM unnest((SELECT $3::bigint[])) AS t(id)
			CROSS JOIN LATERAL (SELECT ic.content_id, ic.instance_id, ic.ctid, %[4]s AS links
				FROM item_copies ic WHERE ic.content_id = t.id AND ic.locale = $2%[2]s LIMIT 1) AS ic
			WHERE ic.instance_id = $1
		UNION
			SELECT ic.content_id, w.depth + 1, ic.ctid, ic.links
			FROM walk w
			CROSS JOIN LATERAL unnest(w.links) AS t(id)
			CROSS JOIN LATERAL (SELECT ic.content_id, ic.instance_id, ic.ctid, CASE WHEN w.depth + 1 < $4 THEN %[4]s END AS links
				FROM item_copies ic WHERE ic.content_id = t.id AND ic.locale = $2%[2]s LIMIT 1) AS ic
			WHERE w.depth < $4 AND ic.instance_id = $1
		)
		SELECT d.depth, ic.content_id, ic.model_id, m.name, CASE WHEN d.depth < $4 THEN m.fields END,
			coalesce(c.reference_name, ` + copyReferenceName + `), ic.item_order, %[3]s,
			CASE WHEN d.depth < $4 THEN %[1]s END
		FROM (SELECT DISTINCT ON (content_id) content_id, depth, tid FROM walk ORDER BY content_id, depth) AS d
		CROSS JOIN LATERAL (SELECT * FROM item_copies ic WHERE ic.ctid = d.tid LIMIT 1) AS ic` + modelAndContainer + `
		ORDER BY d.depth, ic.content_id`

	// containerIDsSQL lists the visible items of containers, in container
	// order within each.
	containerIDsSQL = `SELECT lower(c.reference_name), ic.content_id FROM containers c` + containerItems + `
		WHERE c.instance_id = $1 AND lower(c.reference_name) = ANY($3)` + containerOrder

	// itemHeadsSQL reads the visible copies among the ids $3, with their
	// model names.
	itemHeadsSQL = `SELECT ic.content_id, m.name FROM (SELECT DISTINCT unnest((SELECT $3::bigint[])) AS id) AS t
		CROSS JOIN LATERAL (SELECT ic.content_id, ic.instance_id, ic.model_id FROM item_copies ic
			WHERE ic.content_id = t.id AND ic.locale = $2%s LIMIT 1) AS ic
		CROSS JOIN LATERAL (SELECT m.name FROM models m WHERE m.id = ic.model_id LIMIT 1) AS m
		WHERE ic.instance_id = $1
		ORDER BY ic.content_id`

	// containerContentsSQL reads a container, how many of its items are
	// visible (container_counts) and a window of them (the container
	// order index). LIMIT and OFFSET are sub-selects so that the planner
	// estimates them the same in custom and generic plans, which lets the
	// prepared statement keep its generic plan.
	containerContentsSQL = `SELECT c.reference_name, m.name, m.fields,
			coalesce((SELECT cc.%[1]s FROM container_counts cc WHERE cc.container_id = c.id AND cc.locale = $2), 0),
			ARRAY(SELECT ic.content_id FROM item_copies ic WHERE ic.container_id = c.id AND ic.locale = $2%[2]s
				ORDER BY ic.item_order, ic.content_id LIMIT (SELECT $4::int) OFFSET (SELECT $5::int))
		FROM containers c JOIN models m ON m.id = c.model_id
		WHERE c.instance_id = $1 AND lower(c.reference_name) = lower($3)`

	dynamicItemsSQL = `SELECT ic.content_id, ic.item_order, coalesce(%[2]s ->> $4, ''), coalesce(%[2]s ->> nullif($5, ''), '')
		FROM item_copies ic
		WHERE ic.container_id = $3 AND ic.locale = $2%[1]s AND (ic.item_order, ic.content_id) > ($6, $7) AND ic.instance_id = $1
		ORDER BY ic.item_order, ic.content_id
		LIMIT $8`
	// dynamicItemsOfSQL is dynamicItemsSQL for the items among the ids $6
	// only, each read by key, all of them.
	dynamicItemsOfSQL = `SELECT ic.content_id, ic.item_order, coalesce(%[2]s ->> $4, ''), coalesce(%[2]s ->> nullif($5, ''), '')
		FROM (SELECT DISTINCT unnest((SELECT $6::bigint[])) AS id) AS t
		CROSS JOIN LATERAL (SELECT * FROM item_copies ic WHERE ic.content_id = t.id AND ic.locale = $2%[1]s LIMIT 1) AS ic
		WHERE ic.instance_id = $1 AND ic.container_id = $3
		ORDER BY ic.item_order, ic.content_id`
)

// The roots of an item graph are read first, by key and in full, with
// their links (itemLinks): a statement as simple as a lookup by key,
// without the walk's recursion, hash tables and sorts, whose setup costs
// Postgres more than the lookup itself. The walk (itemGraphSQL) runs only
// from the links found, so an item without links costs that one lookup.
// itemRootSQL reads one root ($3), itemRootsSQL the roots among the ids
// $3, each with the columns of itemsByIDSQL. As in the walk, each copy is
// read by a subquery with LIMIT 1 on the primary key and its instance
// checked outside it, on the row found; the model and container are then
// joined by key to at most one copy per id.
const (
	itemRootSQL = `SELECT ` + itemVersionCols + `%[2]s, %[3]s
	FROM (SELECT * FROM item_copies ic WHERE ic.content_id = $3 AND ic.locale = $2%[1]s LIMIT 1) AS ic
	JOIN models m ON m.id = ic.model_id LEFT JOIN containers c ON c.id = ic.container_id
	WHERE ic.instance_id = $1`
	itemRootsSQL = `SELECT ` + itemVersionCols + `%[2]s, %[3]s
	FROM unnest((SELECT $3::bigint[])) AS t(id)
	CROSS JOIN LATERAL (SELECT * FROM item_copies ic WHERE ic.content_id = t.id AND ic.locale = $2%[1]s LIMIT 1) AS ic
	JOIN models m ON m.id = ic.model_id LEFT JOIN containers c ON c.id = ic.container_id
	WHERE ic.instance_id = $1`
)

var (
	fetchItemRootSQL    = fmt.Sprintf(itemRootSQL, itemFetchSeen, itemFetchCols, fmt.Sprintf(itemLinks, "ic.published_fields"))
	previewItemRootSQL  = fmt.Sprintf(itemRootSQL, itemPreviewSeen, itemPreviewCols, fmt.Sprintf(itemLinks, "ic.fields"))
	fetchItemRootsSQL   = fmt.Sprintf(itemRootsSQL, itemFetchSeen, itemFetchCols, fmt.Sprintf(itemLinks, "ic.published_fields"))
	previewItemRootsSQL = fmt.Sprintf(itemRootsSQL, itemPreviewSeen, itemPreviewCols, fmt.Sprintf(itemLinks, "ic.fields"))
)

// itemsByIDSQL reads the visible copies among the ids $3, in full, with
// their links.
const itemsByIDSQL = `SELECT ` + itemVersionCols + `%[2]s, %[3]s
	FROM (SELECT DISTINCT unnest((SELECT $3::bigint[])) AS id) AS t
	CROSS JOIN LATERAL (SELECT * FROM item_copies ic WHERE ic.content_id = t.id AND ic.locale = $2%[1]s LIMIT 1) AS ic` +
	modelAndContainer + `
	WHERE ic.instance_id = $1
	ORDER BY ic.content_id`

var (
	fetchItemsByIDSQL   = fmt.Sprintf(itemsByIDSQL, itemFetchSeen, itemFetchCols, fmt.Sprintf(itemLinks, "ic.published_fields"))
	previewItemsByIDSQL = fmt.Sprintf(itemsByIDSQL, itemPreviewSeen, itemPreviewCols, fmt.Sprintf(itemLinks, "ic.fields"))
)

var (
	fetchContainerVersionsSQL   = fmt.Sprintf(containerVersionsSQL, itemFetchSeen, itemFetchCols)
	previewContainerVersionsSQL = fmt.Sprintf(containerVersionsSQL, itemPreviewSeen, itemPreviewCols)
	fetchContainerIDsSQL        = fmt.Sprintf(containerIDsSQL, itemFetchSeen)
	previewContainerIDsSQL      = fmt.Sprintf(containerIDsSQL, itemPreviewSeen)
	fetchItemHeadsSQL           = fmt.Sprintf(itemHeadsSQL, itemFetchSeen)
	previewItemHeadsSQL         = fmt.Sprintf(itemHeadsSQL, itemPreviewSeen)
	fetchContainerContentsSQL   = fmt.Sprintf(containerContentsSQL, "fetch_count", itemFetchSeen)
	previewContainerContentsSQL = fmt.Sprintf(containerContentsSQL, "preview_count", itemPreviewSeen)
	fetchDynamicItemsSQL        = fmt.Sprintf(dynamicItemsSQL, itemFetchSeen, "ic.published_fields")
	previewDynamicItemsSQL      = fmt.Sprintf(dynamicItemsSQL, itemPreviewSeen, "ic.fields")
	fetchDynamicItemsOfSQL      = fmt.Sprintf(dynamicItemsOfSQL, itemFetchSeen, "ic.published_fields")
	previewDynamicItemsOfSQL    = fmt.Sprintf(dynamicItemsOfSQL, itemPreviewSeen, "ic.fields")
	fetchItemGraphSQL           = fmt.Sprintf(itemGraphSQL, "ic.published_fields", itemFetchSeen,
		"2, ic.published_version_id, ic.published_modified", fmt.Sprintf(itemLinks, "ic.published_fields"))
	previewItemGraphSQL = fmt.Sprintf(itemGraphSQL, "ic.fields", itemPreviewSeen,
		"ic.state, ic.version_id, ic.modified", fmt.Sprintf(itemLinks, "ic.fields"))
)

// The columns of a page version in each flavour.
const (
	pageVersionHead = `SELECT p.page_id, p.parent_id, p.sort_order, p.page_type, pm.name, pm.zones,
		coalesce(p.dynamic_container_id, 0), coalesce(dc.reference_name, ''), coalesce(p.dynamic_path_field, ''),
		coalesce(p.dynamic_title_field, (SELECT f->>'name' FROM jsonb_array_elements(dm.fields) f
			WHERE lower(f->>'name') = 'title' AND f->>'type' IN ('text', 'html') LIMIT 1), ''), pc.name, `
	pageFetchCols   = `2, pc.published_version_id, pc.published_modified, pc.published_doc, pc.published_zones`
	pagePreviewCols = `pc.state, pc.version_id, pc.modified, pc.doc, pc.zones`
	pageFetchSeen   = ` AND pc.published_version_id IS NOT NULL`
	pagePreviewSeen = ` AND pc.state <> 3`
	pageVersionFrom = ` FROM pages p JOIN page_copies pc ON pc.page_id = p.page_id AND pc.locale = $2
		JOIN page_models pm ON pm.id = p.page_model_id LEFT JOIN containers dc ON dc.id = p.dynamic_container_id
		LEFT JOIN models dm ON dm.id = dc.model_id`

	pageVersionWhere      = ` WHERE p.instance_id = $1 AND p.page_id = $3`
	fetchPageVersionSQL   = pageVersionHead + pageFetchCols + pageVersionFrom + pageVersionWhere + pageFetchSeen
	previewPageVersionSQL = pageVersionHead + pagePreviewCols + pageVersionFrom + pageVersionWhere + pagePreviewSeen

	channelPagesWhere      = ` WHERE p.instance_id = $1 AND p.channel_id = $3`
	channelPagesOrder      = ` ORDER BY p.sort_order, p.page_id`
	fetchChannelPagesSQL   = pageVersionHead + pageFetchCols + pageVersionFrom + channelPagesWhere + pageFetchSeen + channelPagesOrder
	previewChannelPagesSQL = pageVersionHead + pagePreviewCols + pageVersionFrom + channelPagesWhere + pagePreviewSeen + channelPagesOrder
)

// Reader runs the reads of the Fetch API renderer. It prepares each query
// once and keeps the statement, so that Postgres parses and plans it once
// per connection instead of on every request: for these small queries
// planning costs several times more than running them. (Statements are
// prepared on a connection when first used there; a connection pooler in
// transaction mode would need them turned off.) A Reader is safe for
// concurrent use; Close releases its statements.
type Reader struct {
	db        *sql.DB
	stamper   *syncstamp.Stamper
	mu        sync.Mutex
	stmts     map[string]*sql.Stmt
	publicURL media.PublicURL

	// models holds one copy of each distinct model field definitions read
	// (ItemVersion.ModelFields), so that rows of one model share it
	// instead of each allocating its own.
	modelMu sync.RWMutex
	models  map[string]json.RawMessage
}

// maxModels bounds Reader.models.
const maxModels = 4096

// modelFields returns the shared copy of the model field definitions raw
// (nil for NULL), which the caller may keep: raw may be a row's buffer.
func (r *Reader) modelFields(raw []byte) json.RawMessage {
	if raw == nil {
		return nil
	}
	r.modelMu.RLock()
	m, ok := r.models[string(raw)]
	r.modelMu.RUnlock()
	if ok {
		return m
	}
	m = bytes.Clone(raw)
	r.modelMu.Lock()
	if len(r.models) >= maxModels {
		clear(r.models)
	}
	r.models[string(m)] = m
	r.modelMu.Unlock()
	return m
}

// NewReader returns a new Reader on the database of cs, which renders
// asset URLs below cs.PublicURL. Keep it for the life of the process
// (package render keeps one per Renderer).
func NewReader(cs *content.Store) *Reader {
	return &Reader{db: cs.DB().DB, stamper: syncstamp.New(cs.DB()), stmts: map[string]*sql.Stmt{}, publicURL: cs.PublicURL,
		models: map[string]json.RawMessage{}}
}

// AssetURL is the URL of the asset bytes at key, below the content store's
// PublicURL when the Reader was made.
func (r *Reader) AssetURL(key string) string { return r.publicURL.URL(key) }

// Close releases the Reader's prepared statements.
func (r *Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var first error
	for q, st := range r.stmts {
		if err := st.Close(); err != nil && first == nil {
			first = err
		}
		delete(r.stmts, q)
	}
	return first
}

// query runs q as a prepared statement.
func (r *Reader) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	r.mu.Lock()
	st, ok := r.stmts[q]
	r.mu.Unlock()
	if !ok {
		prepared, err := r.db.PrepareContext(ctx, q)
		if err != nil {
			return nil, err
		}
		r.mu.Lock()
		if st, ok = r.stmts[q]; ok {
			prepared.Close() // another goroutine was first
		} else {
			st = prepared
			r.stmts[q] = st
		}
		r.mu.Unlock()
	}
	return st.QueryContext(ctx, args...)
}

// ItemGraph loads the copies in locale, visible in flavour fl, of the roots
// and of the items their item links and selections reach within levels
// links (levels >= 0). Each item comes once, at its smallest depth; items at
// depth levels+1 (linked from the last level) come as heads. Roots and
// linked items that are not visible are left out. Links to whole
// containers are not followed (see ContainerIDs).
//
// The roots are read by key first, with their links; only when they link
// to something is the rest read, in one more query whatever the depth:
// the walk from the links found (or, at levels 0, their heads).
func (r *Reader) ItemGraph(ctx context.Context, inst content.Instance, locale string, fl Flavour, roots []int64, levels int) ([]ItemNode, error) {
	if len(roots) == 0 {
		_, err := fl.pick("", "")
		return nil, err
	}
	out, next, err := r.itemRoots(ctx, inst, locale, fl, roots)
	if err != nil || len(next) == 0 {
		return out, err
	}
	var more []ItemNode
	if levels == 0 {
		hs, err := r.ItemHeads(ctx, inst, locale, fl, next)
		if err != nil {
			return nil, fmt.Errorf("load item graph: %w", err)
		}
		more = make([]ItemNode, len(hs))
		for i, h := range hs {
			more[i] = ItemNode{Depth: 1, Head: true, Version: ItemVersion{ContentID: h.ContentID, Model: h.Model}}
		}
	} else if more, err = r.itemWalk(ctx, inst, locale, fl, next, levels); err != nil {
		return nil, err
	}
	rooted := make(map[int64]bool, len(out))
	for _, n := range out {
		rooted[n.Version.ContentID] = true
	}
	for _, n := range more {
		if !rooted[n.Version.ContentID] { // a root is at depth 0, wherever else it is linked
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b ItemNode) int {
		if a.Depth != b.Depth {
			return a.Depth - b.Depth
		}
		return cmp.Compare(a.Version.ContentID, b.Version.ContentID)
	})
	return out, nil
}

// itemRoots reads the visible copies of roots in full (at depth 0, ordered
// by contentID) and returns them with the contentIDs they link to that are
// not among roots, sorted and once each.
func (r *Reader) itemRoots(ctx context.Context, inst content.Instance, locale string, fl Flavour, roots []int64) ([]ItemNode, []int64, error) {
	var rows *sql.Rows
	var err error
	if len(roots) == 1 {
		q, perr := fl.pick(fetchItemRootSQL, previewItemRootSQL)
		if perr != nil {
			return nil, nil, perr
		}
		rows, err = r.query(ctx, q, inst.ID, locale, roots[0])
	} else {
		q, perr := fl.pick(fetchItemRootsSQL, previewItemRootsSQL)
		if perr != nil {
			return nil, nil, perr
		}
		rows, err = r.query(ctx, q, inst.ID, locale, pq.Array(roots))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("load item graph: %w", err)
	}
	defer rows.Close()
	out := make([]ItemNode, 0, len(roots))
	var next []int64
	for rows.Next() {
		var n ItemNode
		var modelFields sql.RawBytes
		var fields []byte
		var links pq.Int64Array
		v := &n.Version
		if err := rows.Scan(&v.ContentID, &v.ModelID, &v.Model, &modelFields, &v.ReferenceName, &v.ItemOrder,
			&v.State, &v.VersionID, &v.Modified, &fields, &links); err != nil {
			return nil, nil, fmt.Errorf("load item graph: %w", err)
		}
		v.ModelFields = r.modelFields(modelFields)
		if v.Fields, err = SplitObject(fields); err != nil {
			return nil, nil, fmt.Errorf("load item graph: item %d: %w", v.ContentID, err)
		}
		out = append(out, n)
		for _, id := range links {
			if !slices.Contains(roots, id) {
				next = append(next, id)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("load item graph: %w", err)
	}
	if len(out) > 1 {
		slices.SortFunc(out, func(a, b ItemNode) int { return cmp.Compare(a.Version.ContentID, b.Version.ContentID) })
	}
	slices.Sort(next)
	return out, slices.Compact(next), nil
}

// itemWalk loads what the links of an item graph's roots lead to, levels
// >= 1 links deep: the items the links name at depth 1, and what their
// own links reach, by one recursive query (itemGraphSQL) walking levels-1
// more levels from them.
func (r *Reader) itemWalk(ctx context.Context, inst content.Instance, locale string, fl Flavour, ids []int64, levels int) ([]ItemNode, error) {
	q, err := fl.pick(fetchItemGraphSQL, previewItemGraphSQL)
	if err != nil {
		return nil, err
	}
	rows, err := r.query(ctx, q, inst.ID, locale, pq.Array(ids), levels)
	if err != nil {
		return nil, fmt.Errorf("load item graph: %w", err)
	}
	defer rows.Close()
	var out []ItemNode
	for rows.Next() {
		var n ItemNode
		var modelFields sql.RawBytes
		var fields []byte
		v := &n.Version
		if err := rows.Scan(&n.Depth, &v.ContentID, &v.ModelID, &v.Model, &modelFields, &v.ReferenceName, &v.ItemOrder,
			&v.State, &v.VersionID, &v.Modified, &fields); err != nil {
			return nil, fmt.Errorf("load item graph: %w", err)
		}
		n.Depth++ // the walk's roots are one link from the graph's
		n.Head = n.Depth > levels
		if !n.Head {
			v.ModelFields = r.modelFields(modelFields)
			if v.Fields, err = SplitObject(fields); err != nil {
				return nil, fmt.Errorf("load item graph: item %d: %w", v.ContentID, err)
			}
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load item graph: %w", err)
	}
	return out, nil
}

// LinkedItem is an item version with the contentIDs its values link to:
// its item links and selections, which ItemGraph follows.
type LinkedItem struct {
	Version ItemVersion
	Links   []int64
}

// ItemsByID loads the copies in locale, visible in flavour fl, of the items
// ids, in full and with their links, ordered by contentID; the others are
// left out. It is one query, by key, however many ids: a caller that
// renders many items walks their links a level at a time with it (see
// render.Renderer.RenderMany).
func (r *Reader) ItemsByID(ctx context.Context, inst content.Instance, locale string, fl Flavour, ids []int64) ([]LinkedItem, error) {
	q, err := fl.pick(fetchItemsByIDSQL, previewItemsByIDSQL)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	rows, err := r.query(ctx, q, inst.ID, locale, pq.Array(ids))
	if err != nil {
		return nil, fmt.Errorf("load items: %w", err)
	}
	defer rows.Close()
	var out []LinkedItem
	for rows.Next() {
		var it LinkedItem
		var modelFields sql.RawBytes
		var fields []byte
		var links pq.Int64Array
		v := &it.Version
		if err := rows.Scan(&v.ContentID, &v.ModelID, &v.Model, &modelFields, &v.ReferenceName, &v.ItemOrder,
			&v.State, &v.VersionID, &v.Modified, &fields, &links); err != nil {
			return nil, fmt.Errorf("load items: %w", err)
		}
		v.ModelFields = r.modelFields(modelFields)
		if v.Fields, err = SplitObject(fields); err != nil {
			return nil, fmt.Errorf("load items: item %d: %w", v.ContentID, err)
		}
		it.Links = links
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load items: %w", err)
	}
	return out, nil
}

// ContainerVersions loads the copies in locale, visible in flavour fl, of
// every item of the containers named (case-insensitively), grouped by
// container and in container order within each.
func (r *Reader) ContainerVersions(ctx context.Context, inst content.Instance, locale string, fl Flavour, referenceNames []string) ([]ItemVersion, error) {
	q, err := fl.pick(fetchContainerVersionsSQL, previewContainerVersionsSQL)
	if err != nil || len(referenceNames) == 0 {
		return nil, err
	}
	names := make([]string, len(referenceNames))
	for i, n := range referenceNames {
		names[i] = strings.ToLower(n)
	}
	vs, err := r.scanItemVersions(ctx, q, inst.ID, locale, pq.Array(names))
	if err != nil {
		return nil, fmt.Errorf("load container items: %w", err)
	}
	return vs, nil
}

func (r *Reader) scanItemVersions(ctx context.Context, q string, args ...any) ([]ItemVersion, error) {
	rows, err := r.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ItemVersion
	for rows.Next() {
		var v ItemVersion
		var modelFields sql.RawBytes
		var fields []byte
		if err := rows.Scan(&v.ContentID, &v.ModelID, &v.Model, &modelFields, &v.ReferenceName, &v.ItemOrder,
			&v.State, &v.VersionID, &v.Modified, &fields); err != nil {
			return nil, err
		}
		v.ModelFields = r.modelFields(modelFields)
		if v.Fields, err = SplitObject(fields); err != nil {
			return nil, fmt.Errorf("item %d: %w", v.ContentID, err)
		}
		if v.Fields == nil {
			v.Fields = content.Values{}
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// ContainerIDs returns, per container named (case-insensitively; the keys
// are lower case), the contentIDs of its items that have a copy in locale
// visible in flavour fl, in container order. Unknown containers have no key.
func (r *Reader) ContainerIDs(ctx context.Context, inst content.Instance, locale string, fl Flavour, referenceNames []string) (map[string][]int64, error) {
	q, err := fl.pick(fetchContainerIDsSQL, previewContainerIDsSQL)
	if err != nil || len(referenceNames) == 0 {
		return nil, err
	}
	names := make([]string, len(referenceNames))
	for i, n := range referenceNames {
		names[i] = strings.ToLower(n)
	}
	rows, err := r.query(ctx, q, inst.ID, locale, pq.Array(names))
	if err != nil {
		return nil, fmt.Errorf("load container items: %w", err)
	}
	defer rows.Close()
	out := map[string][]int64{}
	for rows.Next() {
		var ref string
		var id int64
		if err := rows.Scan(&ref, &id); err != nil {
			return nil, fmt.Errorf("load container items: %w", err)
		}
		out[ref] = append(out[ref], id)
	}
	return out, rows.Err()
}

// ItemHeads returns, ordered by contentID, the items among contentIDs that
// have a copy in locale visible in flavour fl, with their model names. It
// is the light check for links that are rendered as references.
func (r *Reader) ItemHeads(ctx context.Context, inst content.Instance, locale string, fl Flavour, contentIDs []int64) ([]ItemHead, error) {
	q, err := fl.pick(fetchItemHeadsSQL, previewItemHeadsSQL)
	if err != nil || len(contentIDs) == 0 {
		return nil, err
	}
	rows, err := r.query(ctx, q, inst.ID, locale, pq.Array(contentIDs))
	if err != nil {
		return nil, fmt.Errorf("load item heads: %w", err)
	}
	defer rows.Close()
	var out []ItemHead
	for rows.Next() {
		var h ItemHead
		if err := rows.Scan(&h.ContentID, &h.Model); err != nil {
			return nil, fmt.Errorf("load item heads: %w", err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// ContainerContents returns the container named referenceName
// (case-insensitively), the number of its items that have a copy in locale
// visible in flavour fl, and the contentIDs of take of them after skip, in
// container order. An unknown container is a NotFound problem.
func (r *Reader) ContainerContents(ctx context.Context, inst content.Instance, locale string, fl Flavour, referenceName string, skip, take int) (ContainerContents, error) {
	q, err := fl.pick(fetchContainerContentsSQL, previewContainerContentsSQL)
	if err != nil {
		return ContainerContents{}, err
	}
	rows, err := r.query(ctx, q, inst.ID, locale, referenceName, take, skip)
	if err != nil {
		return ContainerContents{}, fmt.Errorf("load container %q: %w", referenceName, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return ContainerContents{}, fmt.Errorf("load container %q: %w", referenceName, err)
		}
		return ContainerContents{}, problem.NotFoundf("container %q not found", referenceName)
	}
	var c ContainerContents
	var modelFields sql.RawBytes
	var ids pq.Int64Array
	if err := rows.Scan(&c.ReferenceName, &c.Model, &modelFields, &c.Total, &ids); err != nil {
		return ContainerContents{}, fmt.Errorf("load container %q: %w", referenceName, err)
	}
	c.ModelFields = r.modelFields(modelFields)
	c.ContentIDs = ids
	return c, nil
}

// PageVersion loads the copy in locale of a page visible in flavour fl. A
// page that does not exist, has no copy in locale or is not visible is a
// NotFound problem.
func (r *Reader) PageVersion(ctx context.Context, inst content.Instance, locale string, fl Flavour, pageID int64) (PageVersion, error) {
	q, err := fl.pick(fetchPageVersionSQL, previewPageVersionSQL)
	if err != nil {
		return PageVersion{}, err
	}
	ps, err := r.scanPageVersions(ctx, q, inst.ID, locale, pageID)
	if err != nil {
		return PageVersion{}, fmt.Errorf("load page %d: %w", pageID, err)
	}
	if len(ps) == 0 {
		if fl == FlavourFetch {
			return PageVersion{}, problem.NotFoundf("page %d is not published in locale %q", pageID, locale)
		}
		return PageVersion{}, problem.NotFoundf("page %d not found in locale %q", pageID, locale)
	}
	return ps[0], nil
}

// ChannelPages returns the channel named channel (case-insensitively) and
// the copies in locale, visible in flavour fl, of its pages, ordered by sort
// order (so siblings come in menu order). Whether a page's parent is
// visible is left to the caller. An unknown channel is a NotFound problem.
func (r *Reader) ChannelPages(ctx context.Context, inst content.Instance, locale string, fl Flavour, channel string) (content.Channel, []PageVersion, error) {
	q, err := fl.pick(fetchChannelPagesSQL, previewChannelPagesSQL)
	if err != nil {
		return content.Channel{}, nil, err
	}
	ch, err := r.channel(ctx, inst, channel)
	if err != nil {
		return content.Channel{}, nil, err
	}
	ps, err := r.scanPageVersions(ctx, q, inst.ID, locale, ch.ID)
	if err != nil {
		return content.Channel{}, nil, fmt.Errorf("load pages of channel %q: %w", channel, err)
	}
	return ch, ps, nil
}

func (r *Reader) scanPageVersions(ctx context.Context, q string, args ...any) ([]PageVersion, error) {
	rows, err := r.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PageVersion
	for rows.Next() {
		var p PageVersion
		var parent sql.NullInt64
		var zones pq.StringArray
		if err := rows.Scan(&p.PageID, &parent, &p.SortOrder, &p.PageType, &p.Model, &zones,
			&p.DynamicContainerID, &p.DynamicReferenceName, &p.DynamicPathField, &p.DynamicTitleField, &p.Name,
			&p.State, &p.VersionID, &p.Modified, &p.Doc, &p.Zones); err != nil {
			return nil, err
		}
		if parent.Valid {
			p.ParentID = &parent.Int64
		}
		p.ModelZones = zones
		if p.Zones == nil {
			p.Zones = content.Zones{}
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// DynamicItems returns up to limit items behind the dynamic page bound by
// b (limit < 0: all of them): the items of its container that have a copy
// in locale visible in flavour fl, in container order, after the item
// after (nil: from the first), with the values of the binding's path and
// title fields (empty when unset). A sitemap reads a large container a page
// at a time this way, whatever its size.
func (r *Reader) DynamicItems(ctx context.Context, inst content.Instance, locale string, fl Flavour, b DynamicBinding, after *DynamicItem, limit int) ([]DynamicItem, error) {
	q, err := fl.pick(fetchDynamicItemsSQL, previewDynamicItemsSQL)
	if err != nil {
		return nil, err
	}
	order, id := dynamicStart(after)
	return r.dynamicItems(ctx, q, inst.ID, locale, b.ContainerID, b.PathField, b.TitleField, order, id, sqlLimit(limit))
}

// dynamicStart is the keyset position after which a page of dynamic items
// starts: before every item when after is nil.
func dynamicStart(after *DynamicItem) (int64, int64) {
	if after == nil {
		return math.MinInt32, 0
	}
	return int64(after.Order), after.ContentID
}

// sqlLimit makes a LIMIT argument: NULL (no limit) for a negative limit.
func sqlLimit(limit int) any {
	if limit < 0 {
		return nil
	}
	return limit
}

// DynamicItemsOf answers as DynamicItems does, for the items among
// contentIDs only, read by key whatever the size of their container: the
// sitemap as it would be if the dynamic page showed only those items.
// Up to the -2, -3, ... that make a path unique, their nodes are those of
// the whole sitemap (the publisher renders a new item's page by path from
// it: publisher/nodes.go).
func (r *Reader) DynamicItemsOf(ctx context.Context, inst content.Instance, locale string, fl Flavour, b DynamicBinding, contentIDs []int64) ([]DynamicItem, error) {
	q, err := fl.pick(fetchDynamicItemsOfSQL, previewDynamicItemsOfSQL)
	if err != nil || len(contentIDs) == 0 {
		return nil, err
	}
	return r.dynamicItems(ctx, q, inst.ID, locale, b.ContainerID, b.PathField, b.TitleField, pq.Array(contentIDs))
}

func (r *Reader) dynamicItems(ctx context.Context, q string, args ...any) ([]DynamicItem, error) {
	rows, err := r.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("load dynamic page items: %w", err)
	}
	defer rows.Close()
	var out []DynamicItem
	for rows.Next() {
		var d DynamicItem
		if err := rows.Scan(&d.ContentID, &d.Order, &d.PathValue, &d.TitleValue); err != nil {
			return nil, fmt.Errorf("load dynamic page items: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

const readChannelSQL = `SELECT id, name, created_at FROM channels WHERE instance_id = $1 AND lower(name) = lower($2)`

func (r *Reader) channel(ctx context.Context, inst content.Instance, name string) (content.Channel, error) {
	rows, err := r.query(ctx, readChannelSQL, inst.ID, name)
	if err != nil {
		return content.Channel{}, fmt.Errorf("load channel %q: %w", name, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return content.Channel{}, fmt.Errorf("load channel %q: %w", name, err)
		}
		return content.Channel{}, problem.NotFoundf("channel %q not found", name)
	}
	var c content.Channel
	if err := rows.Scan(&c.ID, &c.Name, &c.CreatedAt); err != nil {
		return content.Channel{}, fmt.Errorf("load channel %q: %w", name, err)
	}
	return c, nil
}

// SplitObject splits the JSON text of an object (such as stored field
// values, or an image value, as Postgres writes jsonb) into its members,
// leaving the values undecoded. It is several times faster than
// json.Unmarshal into Values, which matters since every item rendered goes
// through it. Text that is not a well-formed object is left to
// json.Unmarshal, for its error; nil gives empty Values.
func SplitObject(b []byte) (content.Values, error) {
	if b == nil {
		return content.Values{}, nil
	}
	v, ok := splitMembers(b)
	if !ok {
		v = content.Values{}
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func splitMembers(b []byte) (content.Values, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	v := content.Values{}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return v, skipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return nil, false
		}
		end := skipString(b, i)
		if end < 0 {
			return nil, false
		}
		var key string
		if bytes.IndexByte(b[i:end], '\\') < 0 {
			key = string(b[i+1 : end-1])
		} else if json.Unmarshal(b[i:end], &key) != nil {
			return nil, false
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		end = skipValue(b, i)
		if end < 0 {
			return nil, false
		}
		v[key] = json.RawMessage(b[i:end:end])
		i = skipSpace(b, end)
		if i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return v, skipSpace(b, i+1) == len(b)
		default:
			return nil, false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"'), or
// -1.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index after the JSON value starting at b[i], or -1.
// It checks only the structure it needs to find the end.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end := skipString(b, i)
				if end < 0 {
					return -1
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	start := i
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	if i == start {
		return -1
	}
	return i
}

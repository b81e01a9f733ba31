package content

import (
	"context"
	"fmt"

	"github.com/edgecms/edgecms/problem"
)

const (
	selectChannelPagesSQL = `SELECT ` + pageHeadColumns + `, p.sort_order, c.locale, c.name, c.state, c.version_id, c.doc, c.zones, c.modified,
			c.published_version_id, c.published_modified, c.publish_at, c.unpublish_at
		` + pageHeadFrom + ` JOIN page_copies c ON c.page_id = p.page_id
		WHERE p.instance_id = $1 AND c.locale = $2 AND ($3 = '' OR lower(ch.name) = lower($3))
		ORDER BY p.channel_id, p.sort_order, p.page_id`
	pageExistsSQL      = `SELECT EXISTS (SELECT 1 FROM pages WHERE instance_id = $1 AND page_id = $2)`
	componentModelsSQL = `SELECT i.content_id, m.name FROM items i JOIN models m ON m.id = i.model_id
		WHERE i.instance_id = $1 AND m.kind = 'component'`
)

type pageListRow struct {
	pageHead
	SortOrder int `db:"sort_order"`
	pageCopy
}

// Page returns the working copy of a page in locale.
func (s *Store) Page(ctx context.Context, inst Instance, locale string, pageID int64) (Page, error) {
	pages, err := s.Pages(ctx, inst, locale, "")
	if err != nil {
		return Page{}, err
	}
	for _, p := range pages {
		if p.PageID == pageID {
			return p, nil
		}
	}
	var exists bool
	if err := s.db.GetContext(ctx, &exists, pageExistsSQL, inst.ID, pageID); err != nil {
		return Page{}, err
	}
	if exists {
		return Page{}, problem.NotFoundf("page %d has no copy in locale %q", pageID, locale)
	}
	return Page{}, problem.NotFoundf("page %d not found", pageID)
}

// Pages lists the working copies in locale of the pages of a channel (of
// every channel when channel is empty), parents before children, siblings in
// order, each with its path.
func (s *Store) Pages(ctx context.Context, inst Instance, locale, channel string) ([]Page, error) {
	if channel != "" {
		if _, err := s.Channel(ctx, inst, channel); err != nil {
			return nil, err
		}
	}
	var rows []pageListRow
	if err := s.db.SelectContext(ctx, &rows, selectChannelPagesSQL, inst.ID, locale, channel); err != nil {
		return nil, fmt.Errorf("list pages: %w", err)
	}
	modules := map[int64]string{}
	rs, err := s.db.QueryxContext(ctx, componentModelsSQL, inst.ID)
	if err != nil {
		return nil, fmt.Errorf("list pages: %w", err)
	}
	for rs.Next() {
		var id int64
		var name string
		if err := rs.Scan(&id, &name); err != nil {
			rs.Close()
			return nil, err
		}
		modules[id] = name
	}
	rs.Close()

	children := map[int64][]pageListRow{}
	byID := map[int64]bool{}
	for _, r := range rows {
		byID[r.PageID] = true
	}
	var roots []pageListRow
	for _, r := range rows {
		if r.ParentID == nil || !byID[*r.ParentID] {
			roots = append(roots, r)
		} else {
			children[*r.ParentID] = append(children[*r.ParentID], r)
		}
	}
	out := []Page{}
	var walk func(rs []pageListRow, prefix string)
	walk = func(rs []pageListRow, prefix string) {
		for _, r := range rs {
			p := toPage(r, locale, prefix+"/"+r.Name, modules)
			out = append(out, p)
			walk(children[r.PageID], p.Path)
		}
	}
	walk(roots, "")
	return out, nil
}

func toPage(r pageListRow, locale, path string, modules map[int64]string) Page {
	p := Page{
		PageID: r.PageID, Locale: locale, Name: r.Name, Path: path, Channel: r.Channel, ParentPageID: r.ParentID,
		PageModel: r.PageModel, PageType: r.PageType, State: r.State, VersionID: r.VersionID, Modified: r.Modified,
		PublishAt: r.PublishAt, UnpublishAt: r.UnpublishAt, PageDoc: r.Doc, Zones: map[string][]ZoneEntry{},
	}
	if r.DynamicContainer != nil {
		p.Dynamic = &Dynamic{ReferenceName: *r.DynamicContainer, PathField: deref(r.DynamicPathField), TitleField: deref(r.DynamicTitleField)}
	}
	if r.PublishedVersionID != nil {
		p.Published = &PublishedInfo{VersionID: *r.PublishedVersionID, Modified: *r.PublishedModified}
	}
	for z, ids := range r.Zones {
		entries := make([]ZoneEntry, len(ids))
		for i, id := range ids {
			entries[i] = ZoneEntry{Module: modules[id], ContentID: id}
		}
		p.Zones[z] = entries
	}
	return p
}

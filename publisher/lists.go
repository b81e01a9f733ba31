package publisher

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/lib/pq"

	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/render"
)

// List pages. A plain list page (no filter, no sort) of a container shows
// a window of its visible items and their count (totalCount). The
// publisher keeps, per container and locale, the visible items the pages
// were last rendered from (list_members), and renders again only the pages
// whose window or count changed, instead of every page on every change of
// the container (its c: tag). Of those, page 0 and the pages that show an
// item of the batch's events go in the fast lane; the others, which only
// a shifted window or the count tells apart, in the slow lane (the
// backlog): a new item in a container of 100,000 writes 2 list pages at
// once and leaves 9,999 to the background.

// membership is the visible items of a container in one locale, as the
// plain list pages must show them.
type membership struct {
	locale, referenceName string // configured locale code, lower-case name
	ids                   []int64
	gone                  bool // the container no longer exists
}

// listCheck is what a batch's events say of a container in one locale.
type listCheck struct {
	items  []int64 // published, unpublished or deleted
	others bool    // anything but a publish of items: an unpublish, a delete, a reorder, a locale
	// kept is listChanges's answer that the events only published items
	// the lists showed already: an edit.
	kept bool
}

const (
	// listObjectsSQL skips variants: dropTouched drops them.
	listObjectsSQL = `SELECT request FROM objects
		WHERE guid = $1 AND locale = $2 AND list_of = $3 AND etag IS NOT NULL AND last_read IS NULL`
	selectMembersSQL = `SELECT content_ids FROM list_members WHERE guid = $1 AND locale = $2 AND reference_name = $3`
	// membersHaveSQL tells whether the recorded membership holds every
	// item of $4.
	membersHaveSQL = `SELECT content_ids @> $4::bigint[] FROM list_members
		WHERE guid = $1 AND locale = $2 AND reference_name = $3`
)

// listChanges compares a container's visible items in locale with those
// its plain list pages were rendered from, and returns the list pages to
// render at once and later, and the new membership to save (nil when
// nothing changed).
func (p *Publisher) listChanges(ctx context.Context, site render.Site, locale, ref string, chk *listCheck) (now, later []fetch.Request, _ *membership, _ error) {
	guid := site.Instance.Guid
	if !chk.others && len(chk.items) > 0 {
		// A publish of items the lists show already changes no window
		// (the order changes by list events only): an edit costs no
		// read of the container.
		var have bool
		err := p.db.GetContext(ctx, &have, membersHaveSQL, guid, strings.ToLower(locale), ref, pq.Array(chk.items))
		if err != nil && !isNoRows(err) {
			return nil, nil, nil, fmt.Errorf("list members: %w", err)
		}
		if have {
			chk.kept = true
			return nil, nil, nil, nil
		}
	}
	m := membership{locale: locale, referenceName: ref}
	ids, found, err := p.content.VisibleItems(ctx, site.Instance, locale, ref)
	if err != nil {
		return nil, nil, nil, err
	}
	m.ids, m.gone = ids, !found
	var old pq.Int64Array
	err = p.db.GetContext(ctx, &old, selectMembersSQL, guid, strings.ToLower(locale), ref)
	known := err == nil
	if err != nil && !isNoRows(err) {
		return nil, nil, nil, fmt.Errorf("list members: %w", err)
	}
	if known && !m.gone && slices.Equal([]int64(old), m.ids) {
		return nil, nil, nil, nil
	}
	var stored []string
	if err := p.db.SelectContext(ctx, &stored, listObjectsSQL, guid, strings.ToLower(locale), ref); err != nil {
		return nil, nil, nil, fmt.Errorf("list objects: %w", err)
	}
	named := map[int64]bool{}
	for _, id := range chk.items {
		named[id] = true
	}
	// urgent: page 0 of every variant, and the pages that show an item
	// the events name.
	urgent := func(req fetch.Request) bool {
		if req.Skip == 0 {
			return true
		}
		for _, id := range window(m.ids, req.Skip, req.Take) {
			if named[id] {
				return true
			}
		}
		return false
	}
	add := func(req fetch.Request) {
		if urgent(req) {
			now = append(now, req)
		} else {
			later = append(later, req)
		}
	}
	have := map[string]bool{}
	for _, s := range stored {
		req, err := parseRequestString(s)
		if err != nil {
			p.log.Warn("publisher: unreadable request in objects table", "request", s, "err", err)
			continue
		}
		have[req.Key()] = true
		if !known || m.gone || len(old) != len(m.ids) ||
			!slices.Equal(window(old, req.Skip, req.Take), window(m.ids, req.Skip, req.Take)) {
			add(req)
		}
	}
	if !known && m.gone {
		// A component's reference name, a container never seen, or one
		// deleted whose list pages only the origin wrote back (with no
		// membership): those pages, if any, are withdrawn.
		return now, later, nil, nil
	}
	if !m.gone {
		// The maintained pages the store lacks (the container grew).
		for _, req := range listPages(guid, locale, ref, len(m.ids), p.cfg.ListPages) {
			if !have[req.Key()] {
				add(req)
			}
		}
	}
	return now, later, &m, nil
}

// recordedMembers returns the recorded memberships (list_members) of the
// containers whose plain list pages are among reqs, for renders to take
// the pages' windows from. A batch diffs a container's new membership
// against the recorded one to choose the list pages to render, so every
// other writer of list pages (the background lane, a republish) renders
// the recorded windows, read under the instance lock, and leaves it to
// the batches to move them. Containers with none recorded are left out.
func (p *Publisher) recordedMembers(ctx context.Context, guid string, reqs []fetch.Request) ([]membership, error) {
	var members []membership
	seen := map[string]bool{}
	for _, r := range reqs {
		ref := strings.ToLower(listOf(r))
		if ref == "" || seen[membersKey(r.Locale, ref)] {
			continue
		}
		seen[membersKey(r.Locale, ref)] = true
		var ids pq.Int64Array
		err := p.db.GetContext(ctx, &ids, selectMembersSQL, guid, strings.ToLower(r.Locale), ref)
		if isNoRows(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list members: %w", err)
		}
		members = append(members, membership{locale: r.Locale, referenceName: ref, ids: ids})
	}
	return members, nil
}

// window returns the part of ids a list page with skip and take shows.
func window(ids []int64, skip, take int) []int64 {
	if skip >= len(ids) {
		return nil
	}
	ids = ids[skip:]
	if take < len(ids) {
		ids = ids[:take]
	}
	return ids
}

const (
	upsertMembersSQL = `INSERT INTO list_members (guid, locale, reference_name, content_ids) VALUES ($1, $2, $3, $4)
		ON CONFLICT (guid, locale, reference_name) DO UPDATE SET content_ids = excluded.content_ids`
	deleteMembersSQL = `DELETE FROM list_members WHERE guid = $1 AND locale = $2 AND reference_name = $3`
)

// saveMembers records the memberships the list pages were just rendered
// from.
func (p *Publisher) saveMembers(ctx context.Context, guid string, ms []membership) error {
	for _, m := range ms {
		var err error
		if m.gone {
			_, err = p.db.ExecContext(ctx, deleteMembersSQL, guid, strings.ToLower(m.locale), m.referenceName)
		} else {
			ids := m.ids
			if ids == nil {
				ids = []int64{}
			}
			_, err = p.db.ExecContext(ctx, upsertMembersSQL, guid, strings.ToLower(m.locale), m.referenceName, pq.Array(ids))
		}
		if err != nil {
			return fmt.Errorf("save list members: %w", err)
		}
	}
	return nil
}

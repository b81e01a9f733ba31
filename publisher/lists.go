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
// publisher keeps, per container and locale, what the maintained pages
// were last rendered from (list_members): the container's head, its first
// Config.ListPages × 10 visible ids (all of them when fewer), and the
// count. It renders again only the pages whose window or count changed,
// instead of every page on every change of the container (its c: tag).
// Of those, page 0 and the pages that show an item of the batch's events
// go in the fast lane; the others, which only a shifted window or the
// count tells apart, in the slow lane (the backlog): a new item in a
// container of 100,000 writes 2 list pages at once and leaves 9 to the
// background, and reads and writes some 100 ids to decide so, not
// 100,000. A plain page deeper than the head (written back by the origin,
// or kept under a larger ListPages before) has a window the head does not
// tell: it is rendered again, in the slow lane, whenever the container
// changes in a way an edit does not.

// membership is what the plain list pages of a container in one locale
// show: the head of its visible items, in container order, and their
// count.
type membership struct {
	locale, referenceName string // configured locale code, lower-case name
	head                  []int64
	total                 int
	gone                  bool // the container no longer exists
}

// window returns the ids a list page with skip and take shows, and false
// when the head does not reach that far.
func (m *membership) window(skip, take int) ([]int64, bool) {
	if skip >= m.total {
		return nil, true
	}
	if skip+take > len(m.head) && len(m.head) < m.total {
		return nil, false
	}
	return window(m.head, skip, take), true
}

// headSize is how many ids of a container the memberships keep: those the
// maintained list pages show.
func (p *Publisher) headSize() int { return p.cfg.ListPages * listTake }

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
	selectMembersSQL = `SELECT head_ids, total FROM list_members WHERE guid = $1 AND locale = $2 AND reference_name = $3`
)

// loadMembers reads the membership the list pages of container ref were
// last rendered from, and false when none is recorded.
func (p *Publisher) loadMembers(ctx context.Context, guid, locale, ref string) (membership, bool, error) {
	m := membership{locale: locale, referenceName: ref}
	var head pq.Int64Array
	err := p.db.QueryRowxContext(ctx, selectMembersSQL, guid, strings.ToLower(locale), ref).Scan(&head, &m.total)
	if isNoRows(err) {
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("list members: %w", err)
	}
	m.head = head
	return m, true, nil
}

// listChanges compares a container's visible items in locale with those
// its plain list pages were rendered from, and returns the list pages to
// render at once and later, and the new membership to save (nil when
// nothing changed).
//
// A batch whose events only publish items of the container (no
// unpublish, delete, reorder or locale) is an edit when every item was
// visible already, which changes no window (the order changes by list
// events only) and needs no membership saved: either the recorded head
// holds every item, or the count is as recorded (publishes only make
// items visible, so if none became visible all were) and so is the head.
// A change committed meanwhile whose event is in a later batch can make
// the count look unchanged; that batch is not an edit, and compares with
// the membership recorded before both.
func (p *Publisher) listChanges(ctx context.Context, site render.Site, locale, ref string, chk *listCheck) (now, later []fetch.Request, _ *membership, _ error) {
	guid := site.Instance.Guid
	old, known, err := p.loadMembers(ctx, guid, locale, ref)
	if err != nil {
		return nil, nil, nil, err
	}
	publishes := !chk.others && len(chk.items) > 0
	if publishes && known && containsAll(old.head, chk.items) {
		chk.kept = true
		return nil, nil, nil, nil
	}
	m := membership{locale: locale, referenceName: ref}
	head, total, found, err := p.content.VisibleHead(ctx, site.Instance, locale, ref, p.headSize())
	if err != nil {
		return nil, nil, nil, err
	}
	m.head, m.total, m.gone = head, total, !found
	same := known && found && old.total == m.total && slices.Equal(old.head, m.head)
	if same && publishes {
		chk.kept = true
		return nil, nil, nil, nil
	}
	if same && len(m.head) >= m.total {
		return nil, nil, nil, nil // every window known, and as it was
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
		ids, _ := m.window(req.Skip, req.Take)
		for _, id := range ids {
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
	changed := func(req fetch.Request) bool {
		if !known || m.gone || old.total != m.total {
			return true
		}
		was, ok := old.window(req.Skip, req.Take)
		is, ok2 := m.window(req.Skip, req.Take)
		return !ok || !ok2 || !slices.Equal(was, is)
	}
	have := map[string]bool{}
	for _, s := range stored {
		req, err := parseRequestString(s)
		if err != nil {
			p.log.Warn("publisher: unreadable request in objects table", "request", s, "err", err)
			continue
		}
		have[req.Key()] = true
		if changed(req) {
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
		for _, req := range listPages(guid, locale, ref, m.total, p.cfg.ListPages) {
			if !have[req.Key()] {
				add(req)
			}
		}
	}
	return now, later, &m, nil
}

// containsAll tells whether ids holds every item of items.
func containsAll(ids, items []int64) bool {
	set := make(map[int64]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	for _, id := range items {
		if !set[id] {
			return false
		}
	}
	return true
}

// recordedMembers returns the recorded memberships (list_members) of the
// containers whose plain list pages are among reqs, for renders to take
// the pages' windows from. A batch diffs a container's new membership
// against the recorded one to choose the list pages to render, so every
// other writer of list pages (the background lane, a republish) renders
// the recorded windows, read under the instance lock (a republish chunk)
// or after a render number taken under it (a background chunk), and
// leaves it to the batches to move them. Containers with none recorded are left out.
func (p *Publisher) recordedMembers(ctx context.Context, guid string, reqs []fetch.Request) ([]membership, error) {
	var members []membership
	seen := map[string]bool{}
	for _, r := range reqs {
		ref := strings.ToLower(listOf(r))
		if ref == "" || seen[membersKey(r.Locale, ref)] {
			continue
		}
		seen[membersKey(r.Locale, ref)] = true
		m, known, err := p.loadMembers(ctx, guid, r.Locale, ref)
		if err != nil {
			return nil, err
		}
		if known {
			members = append(members, m)
		}
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
	upsertMembersSQL = `INSERT INTO list_members (guid, locale, reference_name, head_ids, total) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (guid, locale, reference_name) DO UPDATE SET head_ids = excluded.head_ids, total = excluded.total`
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
			ids := m.head
			if ids == nil {
				ids = []int64{}
			}
			_, err = p.db.ExecContext(ctx, upsertMembersSQL, guid, strings.ToLower(m.locale), m.referenceName, pq.Array(ids), m.total)
		}
		if err != nil {
			return fmt.Errorf("save list members: %w", err)
		}
	}
	return nil
}

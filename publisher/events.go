package publisher

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/internal/pg"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/render"
)

// runBatch handles the next batch of events, if this publisher can take the
// event cursor (with wait, it waits for it), and returns how many events it
// handled. The cursor moves past the batch, in one transaction with the
// events' confirmations, only after every object of the batch is written.
func (p *Publisher) runBatch(ctx context.Context, wait bool) (int, error) {
	l, err := p.acquire(ctx, wait, lockSpace, cursorLock, "")
	if err != nil || l == nil {
		return 0, err
	}
	defer l.release()
	evs, err := eventlog.Read(ctx, p.db, Consumer, p.cfg.BatchSize)
	if err != nil || len(evs) == 0 {
		return 0, err
	}
	var order []string
	byInstance := map[string][]eventlog.Event{}
	for _, e := range evs {
		if _, ok := byInstance[e.InstanceGuid]; !ok {
			order = append(order, e.InstanceGuid)
		}
		byInstance[e.InstanceGuid] = append(byInstance[e.InstanceGuid], e)
	}
	var purge []string
	changed := 0
	for _, guid := range order {
		out, tags, err := p.publishEvents(ctx, guid, byInstance[guid])
		if err != nil {
			return 0, err
		}
		purge = append(purge, tags...)
		changed += len(out.changed)
		if len(out.changed) > 0 || out.superseded > 0 {
			p.log.Debug("publisher: published", "guid", guid, "events", len(byInstance[guid]), "rendered", out.rendered,
				"written", out.written, "deleted", out.deleted, "unchanged", out.unchanged, "superseded", out.superseded)
		}
	}
	if p.cfg.Purger != nil && len(purge) > 0 {
		slices.Sort(purge)
		if err := p.cfg.Purger.Purge(ctx, slices.Compact(purge)); err != nil {
			// The store is right; a CDN keeps a stale copy at most
			// s-maxage. Confirming anyway keeps webhooks flowing.
			p.log.Error("publisher: CDN purge failed", "tags", len(purge), "err", err)
		}
	}
	// Edges learn of the changes from the feed before the events are
	// confirmed, so that webhooks, which wait for confirmations, go out
	// after edges can serve the new state.
	if changed > 0 {
		if err := p.flushNow(ctx); err != nil {
			p.log.Warn("publisher: flush feed", "err", err)
		}
	}
	if err := p.confirm(ctx, evs); err != nil {
		return 0, err
	}
	if p.afterBatch != nil {
		p.afterBatch(evs)
	}
	return len(evs), nil
}

const insertConfirmationsSQL = `INSERT INTO event_confirmations (event_id)
	SELECT unnest($1::bigint[]) ON CONFLICT DO NOTHING`

// confirm records that the events' objects are in the store and moves the
// cursor past them.
func (p *Publisher) confirm(ctx context.Context, evs []eventlog.Event) error {
	ids := make([]int64, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	return pg.Transact(ctx, p.db, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, insertConfirmationsSQL, pq.Array(ids)); err != nil {
			return fmt.Errorf("confirm events: %w", err)
		}
		return eventlog.Ack(ctx, tx, Consumer, evs[len(evs)-1])
	})
}

// membership is the visible items of a container in one locale, as the
// plain list pages must show them.
type membership struct {
	locale, referenceName string // configured locale code, lower-case name
	ids                   []int64
	gone                  bool // the container no longer exists
}

// plan is what a batch of one instance's events asks to render.
type plan struct {
	affected map[string]bool // qualified tags
	reqs     []fetch.Request
	members  []membership
}

func (pl *plan) tag(guid, locale, tag string) { pl.affected[qualified(guid, locale, tag)] = true }

// publishEvents renders and writes what one instance's events affect and
// returns the outcome and the tags to purge from a CDN.
func (p *Publisher) publishEvents(ctx context.Context, guid string, evs []eventlog.Event) (outcome, []string, error) {
	site, err := render.LoadSite(ctx, p.content, guid)
	if problem.Is(err, problem.NotFound) {
		return outcome{}, nil, nil // the instance is gone
	}
	if err != nil {
		return outcome{}, nil, err
	}
	l, err := p.lockInstance(ctx, guid)
	if err != nil {
		return outcome{}, nil, err
	}
	defer l.release()
	own := ownRequests(site, evs)
	first, err := p.publishFirst(ctx, site, own)
	if err != nil {
		return first, nil, err
	}
	pl, err := p.plan(ctx, site, evs)
	if err != nil {
		return first, nil, err
	}
	// The render number is taken after the plan read the objects table,
	// so it is larger than that of any write the plan could have missed.
	seq, err := p.nextSeq(ctx)
	if err != nil {
		return first, nil, err
	}
	out, err := p.publish(ctx, site, withoutKeys(pl.reqs, own), writeOpts{seq: seq, expand: true}, nil)
	out.add(first)
	if err != nil {
		return out, nil, err
	}
	if err := p.saveMembers(ctx, guid, pl.members); err != nil {
		return out, nil, err
	}
	// Purge exactly the changed things, where some cached object had them.
	purge := map[string]bool{}
	for _, c := range out.changed {
		for _, t := range c.oldTags {
			if pl.affected[t] {
				purge[t] = true
			}
		}
	}
	tags := make([]string, 0, len(purge))
	for t := range purge {
		tags = append(tags, t)
	}
	return out, tags, nil
}

// ownRequests returns the objects the events name themselves (as plan
// does): the own object of an item published or deleted, both objects of
// a page in every locale. publishEvents writes them before it plans the
// rest, so that edges serve them without waiting for the objects that
// embed them.
func ownRequests(site render.Site, evs []eventlog.Event) []fetch.Request {
	guid := site.Instance.Guid
	var reqs []fetch.Request
	for _, e := range evs {
		switch e.Subject {
		case eventlog.SubjectItem:
			if (e.State == eventlog.Published || e.State == eventlog.Deleted) && e.Locale != nil && e.ContentID != nil {
				reqs = append(reqs, itemRequest(guid, *e.Locale, *e.ContentID))
			}
		case eventlog.SubjectPage:
			switch e.State {
			case eventlog.AwaitingApproval, eventlog.Approved, eventlog.Declined:
				continue
			}
			if e.PageID != nil {
				for _, l := range site.Locales {
					reqs = append(reqs, pageRequest(guid, l.Code, *e.PageID, false), pageRequest(guid, l.Code, *e.PageID, true))
				}
			}
		}
	}
	return reqs
}

const (
	pageChannelSQL = `SELECT lower(ch.name) FROM pages p JOIN channels ch ON ch.id = p.channel_id
		WHERE p.instance_id = $1 AND p.page_id = $2`
	affectedObjectsSQL = `SELECT locale, request, coalesce(list_of, '') AS list_of, tags FROM objects
		WHERE guid = $1 AND etag IS NOT NULL AND tags && $2::text[]`
	listObjectsSQL = `SELECT request FROM objects
		WHERE guid = $1 AND locale = $2 AND list_of = $3 AND etag IS NOT NULL`
	// containerMembersSQL lists the items of a container visible in the
	// fetch flavour (those with a published copy in the locale), in
	// container order, as render lists them.
	containerMembersSQL = `SELECT coalesce(array_agg(i.content_id ORDER BY i.item_order, i.content_id)
			FILTER (WHERE i.content_id IS NOT NULL), '{}')
		FROM containers c LEFT JOIN (items i JOIN item_copies ic ON ic.content_id = i.content_id
			AND ic.locale = $2 AND ic.published_version_id IS NOT NULL) ON i.container_id = c.id
		WHERE c.instance_id = $1 AND lower(c.reference_name) = $3 GROUP BY c.id`
	selectMembersSQL = `SELECT content_ids FROM list_members WHERE guid = $1 AND locale = $2 AND reference_name = $3`
)

// plan works out which objects a batch of one instance's events affects:
//
//   - an item published, unpublished or deleted in a locale: objects
//     tagged with the item (i:<id>) or its container (c:<ref>) in that
//     locale, and the item's own object. Plain list pages of the container
//     are not re-rendered for c:<ref> but compared with the container's
//     membership: only windows that changed (all pages when the count
//     changed) are rendered again, and new pages are added.
//   - a page event (any save may move a page or change its type, which
//     every locale shows): objects tagged with the page (p:<id>) or its
//     channel (s:<channel>) in every locale, the page's own objects and
//     the channel's sitemaps (whose paths then give the page-path objects).
//   - a list event (a reorder, or the container deleted): objects tagged
//     c:<ref> in that locale, as for items, and those tagged with any of
//     its visible items, whose itemOrder changed. A deleted container has
//     no members left: its list pages are withdrawn.
//   - a channel event (a channel added): the channel's sitemaps in that
//     locale and the objects tagged s:<channel>.
//   - a locale event (a locale added or removed): every object of the
//     locale in the store and, while the locale is configured, its
//     sitemaps and list pages (see localeRequests).
//
// Saves, approvals and declines of items change no published content and
// are skipped, as are redirections (not maintained).
func (p *Publisher) plan(ctx context.Context, site render.Site, evs []eventlog.Event) (*plan, error) {
	guid := site.Instance.Guid
	pl := &plan{affected: map[string]bool{}}
	checks := map[[2]string]bool{}    // (locale, container) whose membership may have changed
	reordered := map[[2]string]bool{} // (locale, container) reordered
	channels := map[int64]string{}
	locales := map[string]bool{} // lower-case codes of locales added or removed
	for _, e := range evs {
		switch e.Subject {
		case eventlog.SubjectLocale:
			if e.Locale != nil {
				locales[strings.ToLower(*e.Locale)] = true
			}
		case eventlog.SubjectChannel:
			if e.Locale == nil || e.ReferenceName == nil {
				continue
			}
			ch := strings.ToLower(*e.ReferenceName)
			pl.tag(guid, *e.Locale, render.ChannelTag(ch))
			pl.reqs = append(pl.reqs, sitemapRequest(guid, *e.Locale, ch, false), sitemapRequest(guid, *e.Locale, ch, true))
		case eventlog.SubjectItem:
			if (e.State != eventlog.Published && e.State != eventlog.Deleted) || e.Locale == nil || e.ContentID == nil {
				continue
			}
			pl.tag(guid, *e.Locale, render.ItemTag(*e.ContentID))
			pl.reqs = append(pl.reqs, itemRequest(guid, *e.Locale, *e.ContentID))
			if e.ReferenceName != nil {
				pl.tag(guid, *e.Locale, render.ContainerTag(*e.ReferenceName))
				checks[[2]string{*e.Locale, strings.ToLower(*e.ReferenceName)}] = true
			}
		case eventlog.SubjectList:
			if e.Locale == nil || e.ReferenceName == nil {
				continue
			}
			pl.tag(guid, *e.Locale, render.ContainerTag(*e.ReferenceName))
			c := [2]string{*e.Locale, strings.ToLower(*e.ReferenceName)}
			checks[c] = true
			reordered[c] = true
		case eventlog.SubjectPage:
			switch e.State {
			case eventlog.AwaitingApproval, eventlog.Approved, eventlog.Declined:
				continue
			}
			if e.PageID == nil {
				continue
			}
			id := *e.PageID
			ch, ok := channels[id]
			if !ok {
				err := p.db.GetContext(ctx, &ch, pageChannelSQL, site.Instance.ID, id)
				if err != nil && !isNoRows(err) {
					return nil, fmt.Errorf("channel of page %d: %w", id, err)
				}
				channels[id] = ch
			}
			for _, l := range site.Locales {
				pl.tag(guid, l.Code, render.PageTag(id))
				pl.reqs = append(pl.reqs, pageRequest(guid, l.Code, id, false), pageRequest(guid, l.Code, id, true))
				if ch != "" {
					pl.tag(guid, l.Code, render.ChannelTag(ch))
					pl.reqs = append(pl.reqs, sitemapRequest(guid, l.Code, ch, false), sitemapRequest(guid, l.Code, ch, true))
				}
			}
		}
	}
	for code := range locales {
		if err := p.localeRequests(ctx, site, code, pl, checks); err != nil {
			return nil, err
		}
	}
	// A reorder changes the itemOrder every object shows of the
	// container's items.
	for c := range reordered {
		ids, _, err := p.members(ctx, site.Instance.ID, c[0], c[1])
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			pl.tag(guid, c[0], render.ItemTag(id))
		}
	}
	if len(pl.affected) == 0 && len(checks) == 0 {
		return pl, nil
	}

	// Objects that embed something affected.
	affected := make([]string, 0, len(pl.affected))
	for t := range pl.affected {
		affected = append(affected, t)
	}
	var rows []struct {
		Locale  string         `db:"locale"`
		Request string         `db:"request"`
		ListOf  string         `db:"list_of"`
		Tags    pq.StringArray `db:"tags"`
	}
	if err := p.db.SelectContext(ctx, &rows, affectedObjectsSQL, guid, pq.Array(affected)); err != nil {
		return nil, fmt.Errorf("find affected objects: %w", err)
	}
	for _, row := range rows {
		own := ""
		if row.ListOf != "" {
			own = qualified(guid, row.Locale, render.ContainerTag(row.ListOf))
		}
		hit := false
		for _, t := range row.Tags {
			if pl.affected[t] && t != own {
				hit = true
				break
			}
		}
		if !hit {
			continue
		}
		req, err := parseRequestString(row.Request)
		if err != nil {
			p.log.Warn("publisher: unreadable request in objects table", "request", row.Request, "err", err)
			continue
		}
		pl.reqs = append(pl.reqs, req)
	}

	// Plain list pages whose window of the container changed, and the
	// container's pages for its new size.
	for c := range checks {
		reqs, m, err := p.listChanges(ctx, site, c[0], c[1])
		if err != nil {
			return nil, err
		}
		pl.reqs = append(pl.reqs, reqs...)
		if m != nil {
			pl.members = append(pl.members, *m)
		}
	}
	return pl, nil
}

const (
	localeObjectsSQL = `SELECT request, tags FROM objects WHERE guid = $1 AND locale = $2 AND etag IS NOT NULL`
	localeListsSQL   = `SELECT reference_name FROM list_members WHERE guid = $1 AND locale = $2`
	channelsSQL      = `SELECT lower(name) FROM channels WHERE instance_id = $1 ORDER BY 1`
	containersSQL    = `SELECT lower(reference_name) FROM containers WHERE instance_id = $1 ORDER BY 1`
)

// localeRequests adds to pl what a locale added or removed (code, lower
// case) asks for: every object of the locale in the store, rendered again
// (all of them gone when the locale is), and, while the locale is
// configured, the sitemaps of every channel and the list pages of every
// container, whose memberships are then checked (checks). The
// memberships of a removed locale are dropped.
func (p *Publisher) localeRequests(ctx context.Context, site render.Site, code string, pl *plan, checks map[[2]string]bool) error {
	guid := site.Instance.Guid
	var rows []struct {
		Request string         `db:"request"`
		Tags    pq.StringArray `db:"tags"`
	}
	if err := p.db.SelectContext(ctx, &rows, localeObjectsSQL, guid, code); err != nil {
		return fmt.Errorf("objects of locale %s: %w", code, err)
	}
	for _, row := range rows {
		req, err := parseRequestString(row.Request)
		if err != nil {
			p.log.Warn("publisher: unreadable request in objects table", "request", row.Request, "err", err)
			continue
		}
		pl.reqs = append(pl.reqs, req)
		for _, t := range row.Tags {
			pl.affected[t] = true // so that a CDN drops what it cached of them
		}
	}
	var configured string
	for _, l := range site.Locales {
		if strings.ToLower(l.Code) == code {
			configured = l.Code
		}
	}
	if configured == "" {
		var refs []string
		if err := p.db.SelectContext(ctx, &refs, localeListsSQL, guid, code); err != nil {
			return fmt.Errorf("lists of locale %s: %w", code, err)
		}
		for _, ref := range refs {
			pl.members = append(pl.members, membership{locale: code, referenceName: ref, gone: true})
		}
		return nil
	}
	var channels, containers []string
	if err := p.db.SelectContext(ctx, &channels, channelsSQL, site.Instance.ID); err != nil {
		return fmt.Errorf("channels: %w", err)
	}
	if err := p.db.SelectContext(ctx, &containers, containersSQL, site.Instance.ID); err != nil {
		return fmt.Errorf("containers: %w", err)
	}
	for _, ch := range channels {
		pl.reqs = append(pl.reqs, sitemapRequest(guid, configured, ch, false), sitemapRequest(guid, configured, ch, true))
	}
	for _, ref := range containers {
		checks[[2]string{configured, ref}] = true
	}
	return nil
}

// listChanges compares a container's visible items in locale with those
// its plain list pages were rendered from, and returns the list pages to
// render and the new membership to save (nil when nothing changed).
func (p *Publisher) listChanges(ctx context.Context, site render.Site, locale, ref string) ([]fetch.Request, *membership, error) {
	guid := site.Instance.Guid
	m := membership{locale: locale, referenceName: ref}
	ids, found, err := p.members(ctx, site.Instance.ID, locale, ref)
	if err != nil {
		return nil, nil, err
	}
	m.ids, m.gone = ids, !found
	var old pq.Int64Array
	err = p.db.GetContext(ctx, &old, selectMembersSQL, guid, strings.ToLower(locale), ref)
	known := err == nil
	if err != nil && !isNoRows(err) {
		return nil, nil, fmt.Errorf("list members: %w", err)
	}
	if known && !m.gone && slices.Equal([]int64(old), m.ids) {
		return nil, nil, nil
	}
	var stored []string
	if err := p.db.SelectContext(ctx, &stored, listObjectsSQL, guid, strings.ToLower(locale), ref); err != nil {
		return nil, nil, fmt.Errorf("list objects: %w", err)
	}
	var reqs []fetch.Request
	for _, s := range stored {
		req, err := parseRequestString(s)
		if err != nil {
			p.log.Warn("publisher: unreadable request in objects table", "request", s, "err", err)
			continue
		}
		if !known || m.gone || len(old) != len(m.ids) ||
			!slices.Equal(window(old, req.Skip, req.Take), window(m.ids, req.Skip, req.Take)) {
			reqs = append(reqs, req)
		}
	}
	if !known && m.gone {
		// A component's reference name, a container never seen, or one
		// deleted whose list pages only the origin wrote back (with no
		// membership): those pages, if any, are withdrawn.
		return reqs, nil, nil
	}
	if !m.gone {
		reqs = append(reqs, listPages(guid, locale, ref, len(m.ids))...)
	}
	return reqs, &m, nil
}

// members returns the visible items of container ref in locale, in order,
// and false when there is no such container.
func (p *Publisher) members(ctx context.Context, instanceID int64, locale, ref string) ([]int64, bool, error) {
	var ids pq.Int64Array
	err := p.db.GetContext(ctx, &ids, containerMembersSQL, instanceID, locale, ref)
	if isNoRows(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("members of %s: %w", ref, err)
	}
	return ids, true, nil
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

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

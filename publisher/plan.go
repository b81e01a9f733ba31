package publisher

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/lib/pq"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/render"
)

// plan is what a batch of one instance's events asks to render: reqs at
// once (the fast lane), later in the background (the slow lane, queued in
// the backlog).
type plan struct {
	affected map[string]bool // qualified tags
	reqs     []fetch.Request
	later    []fetch.Request
	members  []membership
	// maybe are the sitemaps that only an edit of items behind their
	// dynamic pages touched: rendered only if the items' nodes changed.
	maybe []maybeSitemap
	// kept are the pages by path of edited items whose node is as it was
	// (nodeKept): not rendered, and counted as unchanged for maybe.
	kept []nodePath
	// hitTags are, by key, the affected tags that hit each object found
	// in the objects table: what to purge from a CDN once it changed.
	hitTags map[string][]string
	// sweep, when set, is the pages by path the batch hit past
	// Publisher.sweepAbove, which the hand-off queues in the backlog
	// straight from the objects table rather than from here.
	sweep *sweep
}

// sweep is the pages by path of one instance hit by a batch's affected
// tags, but those of except (handled by the plan: nodeKept), which the
// hand-off queues in the backlog in one statement. An edit of a dynamic
// page hits one page by path per item of its container: some 3 KB each
// held until the hand-off (row, request, key, purge tags), 300 MB at
// 100,000 items; swept, a few rows at a time in Postgres.
type sweep struct {
	guid   string
	tags   []string // qualified
	except []string // keys
}

// defaultSweepAbove is how many pages by path a plan holds before it
// sweeps them instead (Publisher.sweepAbove; tests make it small): those
// held keep their exact CDN purge (the tags that hit them); swept ones
// purge their channel's tag (backlogPurge).
const defaultSweepAbove = 2048

// maybeSitemap is a sitemap an edit of items may leave as it is: its
// bytes change only if the items' nodes do, and each item's page by path
// shows its node. So when every page by path of the items in the
// sitemap's channel rendered unchanged, the sitemap is unchanged too
// (publish checks that; a new, removed or renamed item is never an edit:
// its container's membership or its page by path changes).
type maybeSitemap struct {
	req   fetch.Request
	items []int64
}

// maybeOf tells whether a sitemap req, which the qualified tags hits
// affected, is a maybeSitemap: a sitemap hit only by the container tags of
// edited (with the items edited).
func maybeOf(req fetch.Request, hits []string, edited map[string][]int64) (maybeSitemap, bool) {
	if req.Kind != fetch.SitemapFlat && req.Kind != fetch.SitemapNested {
		return maybeSitemap{}, false
	}
	m := maybeSitemap{req: req}
	for _, t := range hits {
		items, ok := edited[t]
		if !ok {
			return maybeSitemap{}, false
		}
		m.items = append(m.items, items...)
	}
	return m, true
}

func (pl *plan) tag(guid, locale, tag string) { pl.affected[qualified(guid, locale, tag)] = true }

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
	// affectedObjectsSQL skips variants: dropTouched drops them.
	affectedObjectsSQL = `SELECT locale, request, coalesce(list_of, '') AS list_of, tags FROM objects
		WHERE guid = $1 AND etag IS NOT NULL AND tags && $2::text[] AND last_read IS NULL`
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
//   - a model event (a model's fields changed): objects tagged with any of
//     the model's items in that locale (list pages and pages showing them
//     included), and the items' own objects; a page model event (its zones
//     changed): the pages of the page model and their channels' sitemaps,
//     in that locale.
//   - a locale event (a locale added or removed): every object of the
//     locale in the store and, while the locale is configured, its
//     sitemaps and list pages (see localeRequests).
//
// Saves, approvals and declines of items change no published content and
// are skipped, as are redirections (not maintained).
func (p *Publisher) plan(ctx context.Context, site render.Site, evs []eventlog.Event) (*plan, error) {
	guid := site.Instance.Guid
	pl := &plan{affected: map[string]bool{}, hitTags: map[string][]string{}}
	checks := map[[2]string]*listCheck{} // (locale, container) whose membership may have changed
	check := func(locale, ref string) *listCheck {
		k := [2]string{locale, strings.ToLower(ref)}
		if checks[k] == nil {
			checks[k] = &listCheck{}
		}
		return checks[k]
	}
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
				c := check(*e.Locale, *e.ReferenceName)
				c.items = append(c.items, *e.ContentID)
				c.others = c.others || e.State != eventlog.Published
			}
		case eventlog.SubjectList:
			if e.Locale == nil || e.ReferenceName == nil {
				continue
			}
			pl.tag(guid, *e.Locale, render.ContainerTag(*e.ReferenceName))
			check(*e.Locale, *e.ReferenceName).others = true
			reordered[[2]string{*e.Locale, strings.ToLower(*e.ReferenceName)}] = true
		case eventlog.SubjectModel, eventlog.SubjectPageModel:
			if e.Locale == nil || e.ReferenceName == nil {
				continue
			}
			if err := p.modelRequests(ctx, site, e, pl); err != nil {
				return nil, err
			}
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
				var err error
				if ch, err = p.content.PageChannel(ctx, site.Instance, id); err != nil {
					return nil, err
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
		if err := p.localeRequests(ctx, site, code, pl, check); err != nil {
			return nil, err
		}
	}
	// A reorder changes the itemOrder every object shows of the
	// container's items.
	for c := range reordered {
		ids, _, err := p.content.VisibleItems(ctx, site.Instance, c[0], c[1])
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

	// Plain list pages whose window of the container changed, and the
	// container's pages for its new size. edited holds the c: tags of
	// the containers whose items were only edited, and those items.
	edited := map[string][]int64{}
	for c, chk := range checks {
		now, later, m, err := p.listChanges(ctx, site, c[0], c[1], chk)
		if err != nil {
			return nil, err
		}
		pl.reqs = append(pl.reqs, now...)
		pl.later = append(pl.later, later...)
		if m != nil {
			pl.members = append(pl.members, *m)
		}
		if chk.kept {
			edited[qualified(guid, c[0], render.ContainerTag(c[1]))] = chk.items
		}
	}

	// Objects that embed something affected.
	affected := make([]string, 0, len(pl.affected))
	for t := range pl.affected {
		affected = append(affected, t)
	}
	rows, err := p.db.QueryxContext(ctx, affectedObjectsSQL, guid, pq.Array(affected))
	if err != nil {
		return nil, fmt.Errorf("find affected objects: %w", err)
	}
	defer rows.Close()
	// The i: tags of the items edited, and the pages by path hit only by
	// the item of their node (cands), which nodeKept may leave alone.
	editedItems := map[string]int64{}
	for t, items := range edited {
		prefix := t[:strings.LastIndexByte(t, '.')+1] // <guid>.<locale>.
		for _, id := range items {
			editedItems[prefix+render.ItemTag(id)] = id
		}
	}
	hit := map[string]bool{}
	type nodeCand struct {
		req  fetch.Request
		node nodePath
	}
	var cands []nodeCand
	pagePaths := 0
	for rows.Next() {
		var row struct {
			Locale  string         `db:"locale"`
			Request string         `db:"request"`
			ListOf  string         `db:"list_of"`
			Tags    pq.StringArray `db:"tags"`
		}
		if err := rows.StructScan(&row); err != nil {
			return nil, fmt.Errorf("find affected objects: %w", err)
		}
		own := ""
		if row.ListOf != "" {
			own = qualified(guid, row.Locale, render.ContainerTag(row.ListOf))
		}
		var hits []string
		for _, t := range row.Tags {
			if pl.affected[t] && t != own {
				hits = append(hits, t)
			}
		}
		if len(hits) == 0 {
			continue
		}
		req, err := parseRequestString(row.Request)
		if err != nil {
			p.log.Warn("publisher: unreadable request in objects table", "request", row.Request, "err", err)
			continue
		}
		if x, ok := nodeOnly(guid, req, hits, editedItems); ok {
			pl.hitTags[req.Key()] = hits
			hit[req.Key()] = true
			cands = append(cands, nodeCand{req: req, node: nodePath{key: req.Key(), locale: req.Locale, channel: req.Channel, item: x}})
			continue
		}
		if req.Kind == fetch.PageByPath {
			if pagePaths++; pagePaths > p.sweepAbove {
				if pl.sweep == nil {
					pl.sweep = &sweep{guid: guid, tags: affected}
				}
				continue
			}
		}
		pl.hitTags[req.Key()] = hits
		if m, ok := maybeOf(req, hits, edited); ok {
			pl.maybe = append(pl.maybe, m)
			continue
		}
		hit[req.Key()] = true
		pl.reqs = append(pl.reqs, req)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find affected objects: %w", err)
	}
	rows.Close()
	if pl.sweep != nil {
		for _, c := range cands {
			pl.sweep.except = append(pl.sweep.except, c.node.key)
		}
	}
	for _, c := range cands {
		kept, err := p.nodeKept(ctx, site, c.node, hit)
		if err != nil {
			return nil, err
		}
		if kept {
			pl.kept = append(pl.kept, c.node)
		} else {
			pl.reqs = append(pl.reqs, c.req)
		}
	}
	return pl, nil
}

const (
	localeObjectsSQL = `SELECT request, tags FROM objects WHERE guid = $1 AND locale = $2 AND etag IS NOT NULL`
	localeListsSQL   = `SELECT reference_name FROM list_members WHERE guid = $1 AND locale = $2`
)

// localeRequests adds to pl what a locale added or removed (code, lower
// case) asks for: every object of the locale in the store, rendered again
// (all of them gone when the locale is), and, while the locale is
// configured, the sitemaps of every channel and the list pages of every
// container, whose memberships are then checked (checks). The
// memberships of a removed locale are dropped.
func (p *Publisher) localeRequests(ctx context.Context, site render.Site, code string, pl *plan, check func(locale, ref string) *listCheck) error {
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
			if !strings.Contains(t, "."+nodeTagMark) { // a marked tag is no CDN's
				pl.affected[t] = true // so that a CDN drops what it cached of them
			}
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
	channels, err := p.content.ChannelNames(ctx, site.Instance)
	if err != nil {
		return err
	}
	containers, err := p.content.ContainerNames(ctx, site.Instance)
	if err != nil {
		return err
	}
	for _, ch := range channels {
		pl.reqs = append(pl.reqs, sitemapRequest(guid, configured, ch, false), sitemapRequest(guid, configured, ch, true))
	}
	for _, ref := range containers {
		check(configured, ref).others = true
	}
	return nil
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// nodeOnly tells whether req, which the qualified tags hits affected, is
// the maintained page by path of an edited item hit only by that item's
// tag, and returns the item. Its bytes then change only if the item's node
// does (nodeKept), unless the page's components show the item too.
func nodeOnly(guid string, req fetch.Request, hits []string, editedItems map[string]int64) (int64, bool) {
	if req.Kind != fetch.PageByPath || len(hits) != 1 {
		return 0, false
	}
	id, ok := editedItems[hits[0]]
	if !ok {
		return 0, false
	}
	if canon, err := pagePathRequest(guid, req.Locale, req.Channel, req.Path); err != nil || canon.Key() != req.Key() {
		return 0, false
	}
	return id, true
}

// nodeKept reports whether the page by path c of an edited item shows the
// same bytes as before: it is the node of c.item (the stored object says
// so), the page's own objects were not hit (no component of the page shows
// the item, or they would carry its tag too), and the item's path value,
// which is all its node shows of it, is the title the stored node shows.
// An edit keeps the item's place in the container and its visibility, so
// then its node, and every other node, is as it was.
func (p *Publisher) nodeKept(ctx context.Context, site render.Site, c nodePath, hit map[string]bool) (bool, error) {
	o, err := p.store.Get(ctx, c.key)
	if problem.Is(err, problem.NotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", c.key, err)
	}
	var body struct {
		Page struct {
			PageID int64 `json:"pageID"`
			Item   int64 `json:"dynamicItemContentID"`
		} `json:"page"`
		Node struct {
			Title     string `json:"title"`
			Path      string `json:"path"`
			ContentID int64  `json:"contentID"`
		} `json:"sitemapNode"`
	}
	if err := json.Unmarshal(o.Body, &body); err != nil || body.Page.Item != c.item || body.Node.ContentID != c.item {
		return false, nil
	}
	guid := site.Instance.Guid
	if hit[pageRequest(guid, c.locale, body.Page.PageID, false).Key()] || hit[pageRequest(guid, c.locale, body.Page.PageID, true).Key()] {
		return false, nil
	}
	var locale string
	for _, l := range site.Locales {
		if strings.EqualFold(l.Code, c.locale) {
			locale = l.Code
		}
	}
	if locale == "" {
		return false, nil
	}
	path, title, ok, err := p.content.NodeValues(ctx, site.Instance, locale, body.Page.PageID, c.item)
	if err != nil || !ok {
		return false, err
	}
	// The node is named after the item's title field, else its path value
	// (render.sitemapWalk), and its last path segment is the path value's
	// page name; a segment made unique with a suffix is not kept.
	if strings.TrimSpace(title) == "" {
		title = path
	}
	slug := strconv.FormatInt(c.item, 10)
	if strings.TrimSpace(path) != "" {
		slug = content.PageName(path)
	}
	return title == body.Node.Title && strings.HasSuffix(body.Node.Path, "/"+slug), nil
}

// modelRequests adds to pl what a model event changes in its locale.
func (p *Publisher) modelRequests(ctx context.Context, site render.Site, e eventlog.Event, pl *plan) error {
	guid, loc := site.Instance.Guid, *e.Locale
	if e.Subject == eventlog.SubjectPageModel {
		pages, err := p.content.PageModelPages(ctx, site.Instance, *e.ReferenceName)
		if err != nil {
			return err
		}
		for _, pg := range pages {
			pl.tag(guid, loc, render.PageTag(pg.PageID))
			pl.tag(guid, loc, render.ChannelTag(pg.Channel))
			pl.reqs = append(pl.reqs, pageRequest(guid, loc, pg.PageID, false), pageRequest(guid, loc, pg.PageID, true),
				sitemapRequest(guid, loc, pg.Channel, false), sitemapRequest(guid, loc, pg.Channel, true))
		}
		return nil
	}
	ids, err := p.content.ModelItems(ctx, site.Instance, *e.ReferenceName)
	if err != nil {
		return err
	}
	for _, id := range ids {
		pl.tag(guid, loc, render.ItemTag(id))
		pl.reqs = append(pl.reqs, itemRequest(guid, loc, id))
	}
	return nil
}

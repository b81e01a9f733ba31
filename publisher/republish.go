package publisher

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lib/pq"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/render"
	"github.com/edgecms/edgecms/render/source"
	"github.com/edgecms/edgecms/store"
)

// republishChunk is how many objects Republish renders and writes under
// one hold of the instance's lock, so that event batches for the instance
// are not held up for the whole republish. (A variable for tests.)
var republishChunk = 2048

const (
	instanceObjectsSQL = `SELECT request FROM objects WHERE guid = $1 AND etag IS NOT NULL ORDER BY key`
	liveRequestsSQL    = `SELECT request FROM objects WHERE key = ANY($1) AND etag IS NOT NULL ORDER BY key`
	// newXIDSQL takes a transaction id, above those of every transaction
	// that has one (a snapshot's xmax is not that: it is one past the
	// latest to end, and a transaction still running may be above it),
	// and endedSQL tells whether every transaction up to $1 has ended.
	// Both are xid8, which never wraps around.
	newXIDSQL = `SELECT pg_current_xact_id()::text`
	endedSQL  = `SELECT pg_snapshot_xmin(pg_current_snapshot()) > $1::xid8`
)

// Republish renders every object of instance guid again and writes every
// one to the store (which skips unchanged bytes): the maintained objects of
// the published content, the variants written back, and the page paths of
// its sitemaps. It deletes the objects that are gone and any object under
// the instance's fetch prefix that the publisher does not know. progress,
// when not nil, is called with the objects done and the total as it goes.
//
// It renders one locale at a time from a source.Snapshot of the locale's
// published content (a few queries instead of a few per object), and
// compares what it renders with one listing of the store taken before it
// writes instead of asking the store about each object.
func (p *Publisher) Republish(ctx context.Context, guid string, progress func(done, total int)) error {
	site, err := render.LoadSite(ctx, p.content, guid)
	if err != nil {
		return fmt.Errorf("republish %s: %w", guid, err)
	}
	guid = site.Instance.Guid
	// pgSnap tells later whether an event of the instance committed since
	// the memberships were read. They and the objects table are read
	// under the instance lock: a write-back holds it from before its
	// render until its row is written, so none that rendered a list
	// variant before an event the memberships show can record it after
	// this read, where this republish would not render it again and the
	// memberships it saves would tell the event's batch the variant is
	// current.
	l, err := p.lockInstance(ctx, guid)
	if err != nil {
		return fmt.Errorf("republish %s: %w", guid, err)
	}
	var pgSnap string
	var stored []string
	reqs, members, err := func() ([]fetch.Request, []membership, error) {
		defer l.release()
		if err := p.db.GetContext(ctx, &pgSnap, `SELECT pg_current_snapshot()::text`); err != nil {
			return nil, nil, err
		}
		reqs, members, err := p.maintained(ctx, site)
		if err != nil {
			return nil, nil, err
		}
		return reqs, members, p.db.SelectContext(ctx, &stored, instanceObjectsSQL, guid)
	}()
	if err != nil {
		return fmt.Errorf("republish %s: %w", guid, err)
	}
	for _, s := range stored {
		req, err := parseRequestString(s)
		if err != nil {
			p.log.Warn("publisher: unreadable request in objects table", "request", s, "err", err)
			continue
		}
		reqs = append(reqs, req)
	}
	// Page paths come from the sitemaps: render those first (they are
	// cheap) so that the total is known before the long part starts.
	var flats []fetch.Request
	for _, r := range reqs {
		if r.Kind == fetch.SitemapFlat {
			flats = append(flats, r)
		}
	}
	for _, f := range flats {
		r, err := p.renderSpilled(ctx, site, f, nil)
		if err != nil {
			return fmt.Errorf("republish %s: %w", guid, err)
		}
		if !r.gone {
			reqs = append(reqs, p.pagePaths(site, r)...)
		}
		r.drop()
	}
	seen := map[string]bool{}
	todo := reqs[:0]
	for _, r := range reqs {
		if k := r.Key(); !seen[k] {
			seen[k] = true
			todo = append(todo, r)
		}
	}
	listing := map[string]*store.Info{}
	err = p.store.List(ctx, guid+"/"+fetch.Fetch+"/", func(info store.Info) error {
		listing[info.Key] = &info
		return nil
	})
	if err != nil {
		return fmt.Errorf("republish %s: list the store: %w", guid, err)
	}
	// Writers Put an object before their transaction records its row, so
	// a key listed without a row may be one whose writer has not
	// committed yet: deleteUnknown waits for the transactions running now.
	var listed string
	if err := p.db.GetContext(ctx, &listed, newXIDSQL); err != nil {
		return fmt.Errorf("republish %s: %w", guid, err)
	}

	total := len(todo)
	if progress != nil {
		progress(0, total)
	}
	var out outcome
	src := &republishSource{}
	done := 0
	for _, group := range byLocale(site, todo) {
		for start := 0; start < len(group.reqs); start += republishChunk {
			chunk := group.reqs[start:min(start+republishChunk, len(group.reqs))]
			var report func(int)
			if progress != nil {
				before := done
				report = func(n int) { progress(before+n, total) }
			}
			o, err := p.republishChunk(ctx, site, group.locale, chunk, src, listing, report)
			if err != nil {
				return fmt.Errorf("republish %s: %w", guid, err)
			}
			// Only the counts are kept: the changes of every object of
			// the instance would grow with it.
			o.changed, o.same = nil, nil
			out.add(o)
			done += len(chunk)
		}
	}
	if err := p.saveMembersIfCurrent(ctx, site.Instance, pgSnap, members); err != nil {
		return fmt.Errorf("republish %s: %w", guid, err)
	}
	n, err := p.deleteUnknown(ctx, site, seen, listing, listed)
	if err != nil {
		return fmt.Errorf("republish %s: %w", guid, err)
	}
	p.log.Info("publisher: republished", "guid", guid, "objects", total, "written", out.written,
		"deleted", out.deleted+n, "unchanged", out.unchanged, "superseded", out.superseded)
	if err := p.PublishKeys(ctx, guid); err != nil {
		return err
	}
	return p.drainFeed(ctx)
}

// localeRequests are requests of one configured locale ("" for requests
// whose locale is not configured, which answer 404).
type localeRequests struct {
	locale string
	reqs   []fetch.Request
}

// byLocale groups reqs by locale, in the site's order of locales, keeping
// their order within each.
func byLocale(site render.Site, reqs []fetch.Request) []localeRequests {
	groups := make([]localeRequests, len(site.Locales)+1)
	index := map[string]int{}
	for i, l := range site.Locales {
		groups[i].locale = l.Code
		index[l.Code] = i
	}
	for _, r := range reqs {
		i := len(site.Locales)
		if l, err := content.ResolveLocale(site.Locales, r.Locale); err == nil {
			i = index[l.Code]
		}
		groups[i].reqs = append(groups[i].reqs, r)
	}
	return groups
}

// republishSource is what the chunks of a republish render from: the
// snapshot of the locale at hand and the render number taken before it
// was read.
type republishSource struct {
	locale   string
	snap     *source.Snapshot // nil: Postgres
	version  int64
	tooLarge map[string]bool
}

// update makes s fit to render a chunk of locale ("": a locale that is not
// configured) and returns the render number to write it with. It runs
// under the instance's lock: a snapshot is kept from chunk to chunk while
// no event of the instance was committed since it was read; otherwise the
// events' batches could already have re-rendered the objects they affect
// without seeing those of this chunk, which the snapshot renders as they
// were, so a new snapshot is read, with a new number.
func (s *republishSource) update(ctx context.Context, p *Publisher, site render.Site, locale string) error {
	if s.snap != nil && s.locale == locale {
		current, err := s.snap.Current(ctx, p.db)
		if err != nil || current {
			return err
		}
	}
	version, err := p.nextVersion(ctx)
	if err != nil {
		return err
	}
	s.locale, s.snap, s.version = locale, nil, version
	if locale == "" || s.tooLarge[locale] {
		return nil
	}
	snap, err := source.LoadSnapshot(ctx, p.content, site.Instance, locale, p.cfg.SnapshotBytes)
	switch {
	case errors.Is(err, source.ErrSnapshotTooLarge):
		p.log.Info("publisher: republish renders from Postgres: the published content is larger than a snapshot",
			"guid", site.Instance.Guid, "locale", locale)
		if s.tooLarge == nil {
			s.tooLarge = map[string]bool{}
		}
		s.tooLarge[locale] = true
		return nil
	case err != nil:
		return err
	}
	s.snap = snap
	return nil
}

// republishChunk renders and writes one chunk of requests of one locale
// under the instance's lock.
func (p *Publisher) republishChunk(ctx context.Context, site render.Site, locale string, reqs []fetch.Request,
	src *republishSource, listing map[string]*store.Info, progress func(int)) (outcome, error) {
	l, err := p.lockInstance(ctx, site.Instance.Guid)
	if err != nil {
		return outcome{}, err
	}
	defer l.release()
	if err := src.update(ctx, p, site, locale); err != nil {
		return outcome{}, err
	}
	// expand: a flat sitemap is written only after the pages by path of
	// the nodes it changed against the stored one, from the same snapshot,
	// as a batch writes it. A batch renders only the paths whose node
	// differs from the stored sitemap's, so a sitemap written ahead of its
	// pages (a node added or changed since the republish listed its page
	// paths, or whose page it rendered in an earlier chunk, before an event)
	// would leave those pages missing or stale for good.
	//
	// List windows come from the recorded memberships, not from the
	// snapshot, which may show events whose batches have not run yet: such
	// a batch diffs the membership it reads then against the recorded one,
	// and would miss a page whose window the snapshot moved and a later
	// event moved back (an item unpublished, then published again).
	members, err := p.recordedMembers(ctx, site.Instance.Guid, reqs)
	if err != nil {
		return outcome{}, err
	}
	opts := writeOpts{version: src.version, force: true, listing: listing, expand: true, members: members}
	if src.snap != nil {
		opts.src = newTreeSource(src.snap, members)
	}
	// Sitemaps (written last, unreported) and the pages by path they add
	// (counted from 0 again) make the publish's count differ from the
	// chunk's: report the largest so far, at most the chunk.
	var report func(int)
	if progress != nil {
		var mu sync.Mutex // writers report concurrently
		most := 0
		report = func(n int) {
			mu.Lock()
			defer mu.Unlock()
			if n = min(n, len(reqs)); n > most {
				most = n
				progress(n)
			}
		}
		defer report(len(reqs))
	}
	out, err := p.publish(ctx, site, reqs, opts, report)
	if err != nil {
		return out, err
	}
	// A batch's edit fast path renders a channel's sitemaps only if a
	// page by path of the edited items changed (nodeKept, maybe): it
	// takes the stored pages by path to be as new as the stored sitemap.
	// So the sitemaps of the pages by path this chunk changed are
	// rendered again too, from the same snapshot.
	var maps []fetch.Request
	has := map[string]bool{}
	for _, r := range reqs {
		has[r.Key()] = true
	}
	for _, c := range out.changed {
		if c.req.Kind != fetch.PageByPath {
			continue
		}
		for _, nested := range []bool{false, true} {
			m := sitemapRequest(site.Instance.Guid, c.req.Locale, c.req.Channel, nested)
			if k := m.Key(); !has[k] {
				has[k] = true
				maps = append(maps, m)
			}
		}
	}
	if len(maps) > 0 {
		more, err := p.publish(ctx, site, maps, opts, nil)
		out.add(more)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// saveMembersIfCurrent records members, read in pg snapshot pgSnap, for
// the containers that have no recorded membership (a new database, or
// list_members lost), unless an event of inst committed since. The list
// pages of those were rendered from the republish's snapshots, which then
// show what members do. A recorded membership is left as it is: the list
// pages were rendered from it (republishChunk), and a background chunk may
// have written them from it since; list_members is what a batch diffs the
// new membership against to choose the list pages to render, so recording
// another one would make the batches of events not yet handled skip the
// pages whose windows they move. The check and the writes hold the
// instance lock, so no batch records memberships in between.
func (p *Publisher) saveMembersIfCurrent(ctx context.Context, inst content.Instance, pgSnap string, members []membership) error {
	l, err := p.lockInstance(ctx, inst.Guid)
	if err != nil {
		return err
	}
	defer l.release()
	var newer bool
	if err := p.db.GetContext(ctx, &newer, eventsSinceSQL, inst.ID, pgSnap); err != nil {
		return fmt.Errorf("events since the memberships: %w", err)
	}
	if newer {
		return nil
	}
	for _, m := range members {
		head := m.head
		if head == nil {
			head = []int64{}
		}
		if _, err := p.db.ExecContext(ctx, insertMembersSQL, inst.Guid, strings.ToLower(m.locale), m.referenceName, pq.Array(head), m.total); err != nil {
			return fmt.Errorf("save list members: %w", err)
		}
	}
	return nil
}

// insertMembersSQL records a membership where none is.
const insertMembersSQL = `INSERT INTO list_members (guid, locale, reference_name, head_ids, total) VALUES ($1, $2, $3, $4, $5)
	ON CONFLICT (guid, locale, reference_name) DO NOTHING`

// eventsSinceSQL finds an event of instance $1 committed after the pg
// snapshot $2 was taken.
const eventsSinceSQL = `SELECT EXISTS (SELECT 1 FROM events
	WHERE tx >= pg_snapshot_xmin($2::pg_snapshot) AND instance_id = $1
		AND NOT pg_visible_in_snapshot(tx, $2::pg_snapshot))`

// maintained lists the requests the publisher maintains for an instance
// (see requests.go), without the page paths, which come from rendering
// the flat sitemaps, and the container memberships their list pages are
// made from.
func (p *Publisher) maintained(ctx context.Context, site render.Site) ([]fetch.Request, []membership, error) {
	inst, guid := site.Instance, site.Instance.Guid
	containers, err := p.content.ContainerNames(ctx, inst)
	if err != nil {
		return nil, nil, err
	}
	channels, err := p.content.ChannelNames(ctx, inst)
	if err != nil {
		return nil, nil, err
	}
	var reqs []fetch.Request
	var members []membership
	for _, l := range site.Locales {
		items, pages, err := p.content.PublishedIDs(ctx, inst, l.Code)
		if err != nil {
			return nil, nil, err
		}
		for _, id := range items {
			reqs = append(reqs, itemRequest(guid, l.Code, id))
		}
		for _, id := range pages {
			reqs = append(reqs, pageRequest(guid, l.Code, id, false), pageRequest(guid, l.Code, id, true))
		}
		for _, ch := range channels {
			reqs = append(reqs, sitemapRequest(guid, l.Code, ch, false), sitemapRequest(guid, l.Code, ch, true))
		}
		for _, ref := range containers {
			head, total, found, err := p.content.VisibleHead(ctx, inst, l.Code, ref, p.headSize())
			if err != nil {
				return nil, nil, err
			}
			if !found {
				continue // deleted meanwhile
			}
			members = append(members, membership{locale: l.Code, referenceName: ref, head: head, total: total})
			reqs = append(reqs, listPages(guid, l.Code, ref, total, p.cfg.ListPages)...)
		}
	}
	return reqs, members, nil
}

// deleteUnknown deletes the objects under the instance's fetch prefix, as
// listed before the republish wrote, that neither this republish wrote nor
// the objects table knows (left by a lost table, or by hand), and returns
// how many. It decides once every transaction up to listed (a
// transaction id, newXIDSQL run after the listing) has ended, so that an
// object whose writer was still to commit its row is not taken for one;
// should one run past strayWait, it deletes nothing and says so: what is
// left is reported by edgecms verify, and deleted by the next republish.
//
// Nothing stops a writer from Putting one of those keys, and recording
// it live, between the check and the Delete (a list page that a delete
// emptied and a new item fills again): its row would then say the store
// holds what was just deleted. So after the deletes it waits for the
// transactions running then, and renders again, with force, every deleted
// key that a row now says is live.
func (p *Publisher) deleteUnknown(ctx context.Context, site render.Site, known map[string]bool, listing map[string]*store.Info, listed string) (int, error) {
	guid := site.Instance.Guid
	var stray []string
	for key := range listing {
		if !known[key] && strings.HasPrefix(key, guid+"/") {
			stray = append(stray, key)
		}
	}
	if len(stray) == 0 {
		return 0, nil
	}
	ended, err := p.awaitTransactions(ctx, listed, strayWait)
	if err != nil || !ended {
		if err == nil {
			p.log.Warn("publisher: republish left objects that no row lists: a transaction older than its listing is still running",
				"guid", guid, "objects", len(stray), "waited", strayWait)
		}
		return 0, err
	}
	var live []string
	if err := p.db.SelectContext(ctx, &live, liveKeysSQL, pq.Array(stray)); err != nil {
		return 0, err
	}
	isLive := make(map[string]bool, len(live))
	for _, k := range live {
		isLive[k] = true
	}
	stray = slices.DeleteFunc(stray, func(k string) bool { return isLive[k] })
	slices.Sort(stray)
	if p.beforeStrayDelete != nil {
		p.beforeStrayDelete()
	}
	var deleted []string
	for _, key := range stray {
		if err = p.store.Delete(ctx, key); err != nil {
			break
		}
		deleted = append(deleted, key)
	}
	if len(deleted) > 0 {
		if _, cerr := p.db.ExecContext(ctx, insertChangesSQL, pq.Array(deleted)); cerr != nil && err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = p.reviveDeleted(ctx, site, deleted)
	}
	return len(deleted), err
}

// reviveDeleted waits for the transactions running now, and renders again
// and Puts every key of deleted that a row says is live.
func (p *Publisher) reviveDeleted(ctx context.Context, site render.Site, deleted []string) error {
	if len(deleted) == 0 {
		return nil
	}
	var after string
	if err := p.db.GetContext(ctx, &after, newXIDSQL); err != nil {
		return err
	}
	ended, err := p.awaitTransactions(ctx, after, strayWait)
	if err != nil {
		return err
	}
	if !ended {
		p.log.Warn("publisher: republish deleted objects while a transaction that may have written them was still running",
			"guid", site.Instance.Guid, "objects", len(deleted), "waited", strayWait)
	}
	var revived []string
	if err := p.db.SelectContext(ctx, &revived, liveRequestsSQL, pq.Array(deleted)); err != nil {
		return err
	}
	if len(revived) == 0 {
		return nil
	}
	reqs := make([]fetch.Request, 0, len(revived))
	for _, s := range revived {
		req, err := parseRequestString(s)
		if err != nil {
			return fmt.Errorf("revive %q: %w", s, err)
		}
		reqs = append(reqs, req)
	}
	version, err := p.lockedVersion(ctx, site.Instance.Guid)
	if err != nil {
		return err
	}
	_, err = p.publish(ctx, site, reqs, writeOpts{version: version, force: true}, nil)
	return err
}

// strayWait bounds how long a republish waits for older transactions
// before it deletes objects no row lists.
const strayWait = time.Minute

// awaitTransactions waits until every transaction up to xid has ended, or
// for at most d, and reports whether they did. Transaction ids are shared
// by the whole cluster, so a long transaction of another database delays
// it too.
func (p *Publisher) awaitTransactions(ctx context.Context, xid string, d time.Duration) (bool, error) {
	deadline := time.Now().Add(d)
	for {
		var ended bool
		if err := p.db.GetContext(ctx, &ended, endedSQL, xid); err != nil {
			return false, err
		}
		if ended || time.Now().After(deadline) {
			return ended, nil
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return false, err
		}
	}
}

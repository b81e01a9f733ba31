package source

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
)

// A Snapshot is the published content (the fetch flavour) of one instance
// in one locale, read in one transaction, that answers the renderer's reads
// from memory: the same methods as a Reader, with the same results. A full
// republish renders thousands of objects from a handful of queries this
// way instead of a few queries per object.
//
// Every read is loaded, so a Snapshot costs memory in proportion to the
// instance's published content in the locale; LoadSnapshot gives up above a
// bound. A Snapshot is safe for concurrent use and never changes: Current
// says whether content events were committed since it was read.
type Snapshot struct {
	inst   content.Instance
	locale string
	// pgSnapshot is the transaction snapshot the content was read in
	// (pg_current_snapshot() as text).
	pgSnapshot string

	items      map[int64]*snapItem
	containers map[string]*snapContainer  // by lower(reference_name), as Postgres lowers it
	channels   map[string]content.Channel // by lower(name), as Postgres lowers it
	pages      map[int64]*snapPage
	byChannel  map[int64][]*snapPage            // in sort order
	dynamic    map[DynamicBinding][]DynamicItem // Binding left 0
}

type snapItem struct {
	v ItemVersion
	// links are the contentIDs the item graph follows from the item: what
	// its item links and selections name, read by the same SQL expression.
	links []int64
	// containerID is 0 for components.
	containerID int64
}

type snapContainer struct {
	id            int64
	referenceName string
	model         string
	modelFields   []byte
	items         []int64 // visible, in container order
}

type snapPage struct {
	v         PageVersion
	channelID int64
}

// snapshotItemBytes is what a Snapshot holds for an item beside its field
// values (its version, its fields split into a map, its links, its entries
// in the maps): about 740 bytes measured at 30,000 items of two short
// fields (go test ./publisher -run X -bench Memory/snapshot), so that the
// bound holds for many small items too.
const snapshotItemBytes = 768

// ErrSnapshotTooLarge is LoadSnapshot's answer when the published content
// is larger than its bound.
var ErrSnapshotTooLarge = errors.New("published content is larger than the snapshot bound")

const (
	snapshotItemsSQL = `SELECT i.content_id, i.model_id, coalesce(c.reference_name, ` + content.ComponentReferenceNameSQL + `), i.item_order,
			ic.published_version_id, ic.published_modified, ic.published_fields, coalesce(i.container_id, 0),
			translate((jsonb_path_query_array(ic.published_fields, '$.*.contentID')
				|| jsonb_path_query_array(ic.published_fields, '$.*.contentIDs[*]'))::text, '[]', '{}')::bigint[]
		FROM items i JOIN item_copies ic ON ic.content_id = i.content_id AND ic.locale = $2
			JOIN models m ON m.id = i.model_id LEFT JOIN containers c ON c.id = i.container_id
		WHERE i.instance_id = $1 AND ic.published_version_id IS NOT NULL
		ORDER BY i.container_id, i.item_order, i.content_id`
	snapshotModelsSQL     = `SELECT id, name, fields FROM models WHERE instance_id = $1`
	snapshotContainersSQL = `SELECT c.id, c.reference_name, lower(c.reference_name), m.name, m.fields
		FROM containers c JOIN models m ON m.id = c.model_id WHERE c.instance_id = $1`
	snapshotChannelsSQL = `SELECT id, name, created_at, lower(name) FROM channels WHERE instance_id = $1`
	snapshotPagesSQL    = `SELECT p.page_id, p.parent_id, p.sort_order, p.page_type, pm.name, pm.zones,
			coalesce(p.dynamic_container_id, 0), coalesce(dc.reference_name, ''), coalesce(p.dynamic_path_field, ''),
			coalesce(p.dynamic_title_field, (SELECT f->>'name' FROM jsonb_array_elements(dm.fields) f
			WHERE lower(f->>'name') = 'title' AND f->>'type' IN ('text', 'html') LIMIT 1), ''), pc.name,
			pc.published_version_id, pc.published_modified, pc.published_doc, pc.published_zones, p.channel_id
		FROM pages p JOIN page_copies pc ON pc.page_id = p.page_id AND pc.locale = $2
			JOIN page_models pm ON pm.id = p.page_model_id LEFT JOIN containers dc ON dc.id = p.dynamic_container_id
			LEFT JOIN models dm ON dm.id = dc.model_id
		WHERE p.instance_id = $1 AND pc.published_version_id IS NOT NULL
		ORDER BY p.sort_order, p.page_id`
	// snapshotEventsSQL finds an event of the instance committed after the
	// snapshot $2 was taken.
	snapshotEventsSQL = `SELECT EXISTS (SELECT 1 FROM events
		WHERE tx >= pg_snapshot_xmin($2::pg_snapshot) AND instance_id = $1
			AND NOT pg_visible_in_snapshot(tx, $2::pg_snapshot))`
)

// LoadSnapshot reads the published content of inst in locale (a configured
// code, as ResolveLocale returns it) in one REPEATABLE READ transaction.
// When the item copies' field values, with snapshotItemBytes for each
// item, add up to more than maxBytes it stops and returns
// ErrSnapshotTooLarge.
func LoadSnapshot(ctx context.Context, cs *content.Store, inst content.Instance, locale string, maxBytes int64) (*Snapshot, error) {
	tx, err := cs.DB().BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("load snapshot: %w", err)
	}
	defer tx.Rollback()
	snap := &Snapshot{
		inst: inst, locale: locale,
		items: map[int64]*snapItem{}, containers: map[string]*snapContainer{}, channels: map[string]content.Channel{},
		pages: map[int64]*snapPage{}, byChannel: map[int64][]*snapPage{}, dynamic: map[DynamicBinding][]DynamicItem{},
	}
	if err := snap.load(ctx, tx, maxBytes); err != nil {
		if errors.Is(err, ErrSnapshotTooLarge) {
			return nil, err
		}
		return nil, fmt.Errorf("load snapshot of %s/%s: %w", inst.Guid, locale, err)
	}
	return snap, nil
}

func (s *Snapshot) load(ctx context.Context, tx *sqlx.Tx, maxBytes int64) error {
	// The first statement fixes the transaction's snapshot.
	if err := tx.GetContext(ctx, &s.pgSnapshot, `SELECT pg_current_snapshot()::text`); err != nil {
		return err
	}
	type model struct {
		name   string
		fields []byte
	}
	models := map[int64]model{}
	rows, err := tx.QueryContext(ctx, snapshotModelsSQL, s.inst.ID)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id int64
		var m model
		if err := rows.Scan(&id, &m.name, &m.fields); err != nil {
			rows.Close()
			return err
		}
		models[id] = m
	}
	if err := closeRows(rows); err != nil {
		return err
	}

	byID := map[int64]*snapContainer{}
	rows, err = tx.QueryContext(ctx, snapshotContainersSQL, s.inst.ID)
	if err != nil {
		return err
	}
	for rows.Next() {
		c := &snapContainer{}
		var lowered string
		if err := rows.Scan(&c.id, &c.referenceName, &lowered, &c.model, &c.modelFields); err != nil {
			rows.Close()
			return err
		}
		s.containers[lowered] = c
		byID[c.id] = c
	}
	if err := closeRows(rows); err != nil {
		return err
	}

	rows, err = tx.QueryContext(ctx, snapshotItemsSQL, s.inst.ID, s.locale)
	if err != nil {
		return err
	}
	var size int64
	for rows.Next() {
		it := &snapItem{}
		v := &it.v
		var fields []byte
		var links pq.Int64Array
		if err := rows.Scan(&v.ContentID, &v.ModelID, &v.ReferenceName, &v.ItemOrder, &v.VersionID, &v.Modified,
			&fields, &it.containerID, &links); err != nil {
			rows.Close()
			return err
		}
		if size += int64(len(fields)) + snapshotItemBytes; size > maxBytes {
			rows.Close()
			return ErrSnapshotTooLarge
		}
		m := models[v.ModelID]
		v.Model, v.ModelFields, v.State = m.name, m.fields, content.Published
		if v.Fields, err = SplitObject(fields); err != nil {
			rows.Close()
			return fmt.Errorf("item %d: %w", v.ContentID, err)
		}
		it.links = links
		s.items[v.ContentID] = it
		if c := byID[it.containerID]; c != nil {
			c.items = append(c.items, v.ContentID) // rows come in container order
		}
	}
	if err := closeRows(rows); err != nil {
		return err
	}

	rows, err = tx.QueryContext(ctx, snapshotChannelsSQL, s.inst.ID)
	if err != nil {
		return err
	}
	for rows.Next() {
		var c content.Channel
		var lowered string
		if err := rows.Scan(&c.ID, &c.Name, &c.CreatedAt, &lowered); err != nil {
			rows.Close()
			return err
		}
		s.channels[lowered] = c
	}
	if err := closeRows(rows); err != nil {
		return err
	}

	rows, err = tx.QueryContext(ctx, snapshotPagesSQL, s.inst.ID, s.locale)
	if err != nil {
		return err
	}
	var bindings []DynamicBinding
	for rows.Next() {
		sp := &snapPage{}
		p := &sp.v
		var parent sql.NullInt64
		var zones pq.StringArray
		if err := rows.Scan(&p.PageID, &parent, &p.SortOrder, &p.PageType, &p.Model, &zones,
			&p.DynamicContainerID, &p.DynamicReferenceName, &p.DynamicPathField, &p.DynamicTitleField, &p.Name,
			&p.VersionID, &p.Modified, &p.Doc, &p.Zones, &sp.channelID); err != nil {
			rows.Close()
			return err
		}
		if parent.Valid {
			p.ParentID = &parent.Int64
		}
		p.ModelZones, p.State = zones, content.Published
		if p.Zones == nil {
			p.Zones = content.Zones{}
		}
		s.pages[p.PageID] = sp
		s.byChannel[sp.channelID] = append(s.byChannel[sp.channelID], sp)
		if b := (DynamicBinding{ContainerID: p.DynamicContainerID, PathField: p.DynamicPathField, TitleField: p.DynamicTitleField}); b.ContainerID != 0 {
			if _, ok := s.dynamic[b]; !ok {
				s.dynamic[b] = nil
				bindings = append(bindings, b)
			}
		}
	}
	if err := closeRows(rows); err != nil {
		return err
	}

	// The items behind dynamic pages, with their path values as Postgres
	// reads them (->>), by the Reader's own query.
	for _, b := range bindings {
		order, id := dynamicStart(nil)
		rows, err = tx.QueryContext(ctx, fetchDynamicItemsSQL, s.inst.ID, s.locale, b.ContainerID, b.PathField, b.TitleField, order, id, nil)
		if err != nil {
			return err
		}
		for rows.Next() {
			var d DynamicItem
			if err := rows.Scan(&d.ContentID, &d.Order, &d.PathValue, &d.TitleValue); err != nil {
				rows.Close()
				return err
			}
			s.dynamic[b] = append(s.dynamic[b], d)
		}
		if err := closeRows(rows); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func closeRows(rows *sql.Rows) error {
	err := rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}

// Locale is the configured code of the snapshot's locale.
func (s *Snapshot) Locale() string { return s.locale }

// Current reports whether no content event of the snapshot's instance was
// committed since the snapshot was read: then its content is the
// instance's published content now, as far as events tell (every change
// of published content writes one).
func (s *Snapshot) Current(ctx context.Context, db *sqlx.DB) (bool, error) {
	var newer bool
	if err := db.GetContext(ctx, &newer, snapshotEventsSQL, s.inst.ID, s.pgSnapshot); err != nil {
		return false, fmt.Errorf("check snapshot of %s/%s: %w", s.inst.Guid, s.locale, err)
	}
	return !newer, nil
}

// check refuses reads a snapshot cannot answer: another instance, locale or
// flavour.
func (s *Snapshot) check(inst content.Instance, locale string, fl Flavour) error {
	switch {
	case inst.ID != s.inst.ID:
		return fmt.Errorf("snapshot of instance %s asked for instance %s", s.inst.Guid, inst.Guid)
	case locale != s.locale:
		return fmt.Errorf("snapshot of locale %q asked for locale %q", s.locale, locale)
	case fl != FlavourFetch:
		return fmt.Errorf("snapshot of the fetch flavour asked for %q", fl)
	}
	return nil
}

// ItemGraph answers as Reader.ItemGraph does.
func (s *Snapshot) ItemGraph(ctx context.Context, inst content.Instance, locale string, fl Flavour, roots []int64, levels int) ([]ItemNode, error) {
	if err := s.check(inst, locale, fl); err != nil || len(roots) == 0 {
		return nil, err
	}
	depth, _ := WalkItemGraph(roots, levels, nil, func(id int64) ([]int64, bool) {
		if it := s.items[id]; it != nil {
			return it.links, true
		}
		return nil, false
	})
	out := make([]ItemNode, 0, len(depth))
	for id, d := range depth {
		it := s.items[id]
		if it == nil {
			continue
		}
		n := ItemNode{Depth: d, Head: d > levels, Version: it.v}
		if n.Head {
			n.Version.ModelFields, n.Version.Fields = nil, nil
		}
		out = append(out, n)
	}
	SortItemNodes(out)
	return out, nil
}

// lowerNames lower-cases names and keeps each once.
func lowerNames(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if l := strings.ToLower(n); !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// containersOf returns the known containers named, in the order of their
// ids.
func (s *Snapshot) containersOf(referenceNames []string) []*snapContainer {
	var cs []*snapContainer
	for _, n := range lowerNames(referenceNames) {
		if c := s.containers[n]; c != nil {
			cs = append(cs, c)
		}
	}
	slices.SortFunc(cs, func(a, b *snapContainer) int { return cmp.Compare(a.id, b.id) })
	return cs
}

// ContainerVersions answers as Reader.ContainerVersions does.
func (s *Snapshot) ContainerVersions(ctx context.Context, inst content.Instance, locale string, fl Flavour, referenceNames []string) ([]ItemVersion, error) {
	if err := s.check(inst, locale, fl); err != nil || len(referenceNames) == 0 {
		return nil, err
	}
	var out []ItemVersion
	for _, c := range s.containersOf(referenceNames) {
		for _, id := range c.items {
			out = append(out, s.items[id].v)
		}
	}
	return out, nil
}

// ContainerIDs answers as Reader.ContainerIDs does.
func (s *Snapshot) ContainerIDs(ctx context.Context, inst content.Instance, locale string, fl Flavour, referenceNames []string) (map[string][]int64, error) {
	if err := s.check(inst, locale, fl); err != nil || len(referenceNames) == 0 {
		return nil, err
	}
	out := map[string][]int64{}
	for _, n := range lowerNames(referenceNames) {
		if c := s.containers[n]; c != nil && len(c.items) > 0 {
			out[n] = slices.Clone(c.items)
		}
	}
	return out, nil
}

// ItemHeads answers as Reader.ItemHeads does.
func (s *Snapshot) ItemHeads(ctx context.Context, inst content.Instance, locale string, fl Flavour, contentIDs []int64) ([]ItemHead, error) {
	if err := s.check(inst, locale, fl); err != nil || len(contentIDs) == 0 {
		return nil, err
	}
	ids := slices.Clone(contentIDs)
	slices.Sort(ids)
	var out []ItemHead
	for _, id := range slices.Compact(ids) {
		if it := s.items[id]; it != nil {
			out = append(out, ItemHead{ContentID: id, Model: it.v.Model})
		}
	}
	return out, nil
}

// ContainerContents answers as Reader.ContainerContents does.
func (s *Snapshot) ContainerContents(ctx context.Context, inst content.Instance, locale string, fl Flavour, referenceName string, skip, take int) (ContainerContents, error) {
	if err := s.check(inst, locale, fl); err != nil {
		return ContainerContents{}, err
	}
	if skip < 0 || take < 0 {
		return ContainerContents{}, fmt.Errorf("load container %q: negative skip or take", referenceName)
	}
	c := s.containers[strings.ToLower(referenceName)]
	if c == nil {
		return ContainerContents{}, problem.NotFoundf("container %q not found", referenceName)
	}
	out := ContainerContents{ReferenceName: c.referenceName, Model: c.model, ModelFields: c.modelFields, Total: len(c.items)}
	if skip < len(c.items) && take > 0 {
		out.ContentIDs = slices.Clone(c.items[skip:min(skip+take, len(c.items))])
	}
	return out, nil
}

// PageVersion answers as Reader.PageVersion does.
func (s *Snapshot) PageVersion(ctx context.Context, inst content.Instance, locale string, fl Flavour, pageID int64) (PageVersion, error) {
	if err := s.check(inst, locale, fl); err != nil {
		return PageVersion{}, err
	}
	p := s.pages[pageID]
	if p == nil {
		return PageVersion{}, problem.NotFoundf("page %d is not published in locale %q", pageID, locale)
	}
	return p.v, nil
}

// ChannelPages answers as Reader.ChannelPages does.
func (s *Snapshot) ChannelPages(ctx context.Context, inst content.Instance, locale string, fl Flavour, channel string) (content.Channel, []PageVersion, error) {
	if err := s.check(inst, locale, fl); err != nil {
		return content.Channel{}, nil, err
	}
	ch, ok := s.channels[strings.ToLower(channel)]
	if !ok {
		return content.Channel{}, nil, problem.NotFoundf("channel %q not found", channel)
	}
	var out []PageVersion
	for _, p := range s.byChannel[ch.ID] {
		out = append(out, p.v)
	}
	return ch, out, nil
}

// DynamicItems answers as Reader.DynamicItems does, for the bindings of
// the snapshot's pages (which are the only ones a render asks for).
func (s *Snapshot) DynamicItems(ctx context.Context, inst content.Instance, locale string, fl Flavour, b DynamicBinding, after *DynamicItem, limit int) ([]DynamicItem, error) {
	if err := s.check(inst, locale, fl); err != nil {
		return nil, err
	}
	items, ok := s.dynamic[b]
	if !ok {
		return nil, fmt.Errorf("load dynamic page items: binding %d/%q is not a page's of the snapshot", b.ContainerID, b.PathField)
	}
	return PageOfItems(items, after, limit), nil
}

// PageOfItems returns the page of items (in container order) that
// DynamicItems answers for after and limit.
func PageOfItems(items []DynamicItem, after *DynamicItem, limit int) []DynamicItem {
	start := 0
	if after != nil {
		start = sort.Search(len(items), func(i int) bool {
			d := items[i]
			return d.Order > after.Order || d.Order == after.Order && d.ContentID > after.ContentID
		})
	}
	end := len(items)
	if limit >= 0 {
		end = min(end, start+limit)
	}
	return slices.Clone(items[start:end])
}

package content

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/lib/pq"
)

// Reads the publisher makes of the content tables, to plan what a change
// affects and to list what a republish renders. They read rows by key or
// one container or instance at a time; none of them locks anything.

const (
	// visibleItemsSQL reads the container's published copies in the
	// locale from the index in container order (schema/009).
	visibleItemsSQL = `SELECT c.id, coalesce((SELECT array_agg(ic.content_id ORDER BY ic.item_order, ic.content_id)
			FROM item_copies ic WHERE ic.container_id = c.id AND ic.locale = $2 AND ic.published_version_id IS NOT NULL), '{}')
		FROM containers c WHERE c.instance_id = $1 AND lower(c.reference_name) = lower($3)`
	// visibleHeadSQL reads how many of the container's copies in the
	// locale are published (container_counts, kept by triggers) and the
	// first $4 of them from the index in container order: $4 index
	// entries, whatever the container's size. The LIMIT is a sub-select
	// so that custom and generic plans estimate it alike.
	visibleHeadSQL = `SELECT c.id,
			coalesce((SELECT cc.fetch_count FROM container_counts cc WHERE cc.container_id = c.id AND cc.locale = $2), 0),
			ARRAY(SELECT ic.content_id FROM item_copies ic
				WHERE ic.container_id = c.id AND ic.locale = $2 AND ic.published_version_id IS NOT NULL
				ORDER BY ic.item_order, ic.content_id LIMIT (SELECT $4::int))
		FROM containers c WHERE c.instance_id = $1 AND lower(c.reference_name) = lower($3)`
	pageChannelSQL = `SELECT lower(ch.name) FROM pages p JOIN channels ch ON ch.id = p.channel_id
		WHERE p.instance_id = $1 AND p.page_id = $2`
	containerNamesSQL = `SELECT lower(reference_name) FROM containers WHERE instance_id = $1 ORDER BY 1`
	channelNamesSQL   = `SELECT lower(name) FROM channels WHERE instance_id = $1 ORDER BY 1`
	// dynamicChannelsSQL reads the channels with a dynamic page over one
	// of the containers $2 (lower case).
	dynamicChannelsSQL = `SELECT DISTINCT lower(ch.name) FROM pages p JOIN containers c ON c.id = p.dynamic_container_id
		JOIN channels ch ON ch.id = p.channel_id
		WHERE p.instance_id = $1 AND lower(c.reference_name) = ANY($2) ORDER BY 1`
	publishedItemsSQL = `SELECT content_id FROM item_copies
		WHERE instance_id = $1 AND locale = $2 AND published_version_id IS NOT NULL ORDER BY content_id`
	publishedPagesSQL = `SELECT page_id FROM page_copies
		WHERE instance_id = $1 AND locale = $2 AND published_version_id IS NOT NULL ORDER BY page_id`
)

// VisibleItems returns the items of container referenceName that have a
// published copy in locale, in container order (what the Fetch API lists),
// and false when there is no such container.
func (s *Store) VisibleItems(ctx context.Context, inst Instance, locale, referenceName string) ([]int64, bool, error) {
	var id int64
	var ids pq.Int64Array
	err := s.db.QueryRowxContext(ctx, visibleItemsSQL, inst.ID, locale, referenceName).Scan(&id, &ids)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("visible items of %s: %w", referenceName, err)
	}
	return ids, true, nil
}

// VisibleHead returns the first limit items of container referenceName
// that have a published copy in locale, in container order, and how many
// such items there are (the totalCount the Fetch API shows), and false
// when there is no such container. It costs what limit asks, not the
// container's size.
func (s *Store) VisibleHead(ctx context.Context, inst Instance, locale, referenceName string, limit int) (ids []int64, total int, found bool, err error) {
	var id int64
	var head pq.Int64Array
	err = s.db.QueryRowxContext(ctx, visibleHeadSQL, inst.ID, locale, referenceName, max(limit, 0)).Scan(&id, &total, &head)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, fmt.Errorf("visible items of %s: %w", referenceName, err)
	}
	return head, total, true, nil
}

// PageChannel returns the lower-case name of the channel of page pageID,
// or "" when there is no such page.
func (s *Store) PageChannel(ctx context.Context, inst Instance, pageID int64) (string, error) {
	var ch string
	err := s.db.GetContext(ctx, &ch, pageChannelSQL, inst.ID, pageID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("channel of page %d: %w", pageID, err)
	}
	return ch, nil
}

// ContainerNames returns the lower-case reference names of the instance's
// containers, sorted.
func (s *Store) ContainerNames(ctx context.Context, inst Instance) ([]string, error) {
	var names []string
	if err := s.db.SelectContext(ctx, &names, containerNamesSQL, inst.ID); err != nil {
		return nil, fmt.Errorf("containers: %w", err)
	}
	return names, nil
}

// ChannelNames returns the lower-case names of the instance's channels,
// sorted.
func (s *Store) ChannelNames(ctx context.Context, inst Instance) ([]string, error) {
	var names []string
	if err := s.db.SelectContext(ctx, &names, channelNamesSQL, inst.ID); err != nil {
		return nil, fmt.Errorf("channels: %w", err)
	}
	return names, nil
}

// DynamicChannels returns the lower-case names of the channels that have
// a dynamic page over one of the containers referenceNames, in order.
func (s *Store) DynamicChannels(ctx context.Context, inst Instance, referenceNames []string) ([]string, error) {
	if len(referenceNames) == 0 {
		return nil, nil
	}
	var names []string
	if err := s.db.SelectContext(ctx, &names, dynamicChannelsSQL, inst.ID, pq.Array(referenceNames)); err != nil {
		return nil, fmt.Errorf("channels of dynamic pages: %w", err)
	}
	return names, nil
}

// PublishedIDs returns the items and the pages with a published copy in
// locale, by id.
func (s *Store) PublishedIDs(ctx context.Context, inst Instance, locale string) (items, pages []int64, err error) {
	if err := s.db.SelectContext(ctx, &items, publishedItemsSQL, inst.ID, locale); err != nil {
		return nil, nil, fmt.Errorf("published items: %w", err)
	}
	if err := s.db.SelectContext(ctx, &pages, publishedPagesSQL, inst.ID, locale); err != nil {
		return nil, nil, fmt.Errorf("published pages: %w", err)
	}
	return items, pages, nil
}

// pageNodeValuesSQL reads what a dynamic page's sitemap node of an item
// is made of: the item's published path field and title field, the title
// field resolved as the render source resolves it (render/source
// pageVersionHead and dynamicItemsSQL).
const pageNodeValuesSQL = `SELECT coalesce(ic.published_fields ->> p.dynamic_path_field, ''),
		coalesce(ic.published_fields ->> nullif(coalesce(p.dynamic_title_field, (SELECT f->>'name' FROM jsonb_array_elements(dm.fields) f
			WHERE lower(f->>'name') = 'title' AND f->>'type' IN ('text', 'html') LIMIT 1)), ''), '')
	FROM pages p JOIN item_copies ic ON ic.content_id = $4 AND ic.locale = $3 AND ic.published_version_id IS NOT NULL
	LEFT JOIN containers dc ON dc.id = p.dynamic_container_id LEFT JOIN models dm ON dm.id = dc.model_id
	WHERE p.instance_id = $1 AND p.page_id = $2 AND p.dynamic_path_field IS NOT NULL`

// NodeValues returns the values of the path field and of the title field
// of dynamic page pageID in the published copy of item contentID in
// locale, and false when the page is not dynamic or the item has no
// published copy there.
func (s *Store) NodeValues(ctx context.Context, inst Instance, locale string, pageID, contentID int64) (path, title string, ok bool, err error) {
	var row struct {
		Path  string `db:"path"`
		Title string `db:"title"`
	}
	err = s.db.QueryRowxContext(ctx, pageNodeValuesSQL, inst.ID, pageID, locale, contentID).Scan(&row.Path, &row.Title)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, fmt.Errorf("sitemap node values of item %d: %w", contentID, err)
	}
	return row.Path, row.Title, true, nil
}

const (
	// modelItemsSQL lists the items of a model (components too: pages
	// that show them carry their item tags).
	modelItemsSQL = `SELECT i.content_id FROM models m JOIN items i ON i.model_id = m.id
		WHERE m.instance_id = $1 AND lower(m.name) = lower($2) ORDER BY i.content_id`
	// pageModelPagesSQL lists the pages of a page model and their channels.
	pageModelPagesSQL = `SELECT p.page_id, lower(ch.name) AS channel FROM page_models pm
		JOIN pages p ON p.page_model_id = pm.id JOIN channels ch ON ch.id = p.channel_id
		WHERE pm.instance_id = $1 AND lower(pm.name) = lower($2) ORDER BY p.page_id`
)

// ModelItems returns the contentIDs of the items of model, whose objects a
// change of the model's fields changes.
func (s *Store) ModelItems(ctx context.Context, inst Instance, model string) ([]int64, error) {
	var ids []int64
	if err := s.db.SelectContext(ctx, &ids, modelItemsSQL, inst.ID, model); err != nil {
		return nil, fmt.Errorf("items of model %q: %w", model, err)
	}
	return ids, nil
}

// ModelPage is a page of a page model and its channel (lower case).
type ModelPage struct {
	PageID  int64  `db:"page_id"`
	Channel string `db:"channel"`
}

// PageModelPages returns the pages of pageModel, whose objects a change of
// the page model's zones changes.
func (s *Store) PageModelPages(ctx context.Context, inst Instance, pageModel string) ([]ModelPage, error) {
	var pages []ModelPage
	if err := s.db.SelectContext(ctx, &pages, pageModelPagesSQL, inst.ID, pageModel); err != nil {
		return nil, fmt.Errorf("pages of page model %q: %w", pageModel, err)
	}
	return pages, nil
}

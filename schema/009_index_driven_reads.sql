-- Reads and writes whose cost does not grow with the instance.
--
-- 1. Every item copy carries its item's container, order and model (which
--    the Fetch API shows with each copy), so that the visible copies of a
--    container in one locale and flavour are one range of an index in
--    container order: a list window of take items after skip reads
--    skip + take index entries, whatever the container's size, and a
--    render reads a copy without its item row. Triggers keep the columns
--    equal to the item's: a new copy takes them from its item (unless the
--    writer set them), and a reorder moves them with the item.
ALTER TABLE item_copies
    ADD COLUMN container_id bigint,
    ADD COLUMN item_order integer,
    ADD COLUMN model_id bigint;
UPDATE item_copies ic SET container_id = i.container_id, item_order = i.item_order, model_id = i.model_id
FROM items i WHERE i.content_id = ic.content_id;
ALTER TABLE item_copies ALTER COLUMN item_order SET NOT NULL, ALTER COLUMN model_id SET NOT NULL;

CREATE FUNCTION edgecms_item_copy_place() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    SELECT i.container_id, i.item_order, i.model_id INTO NEW.container_id, NEW.item_order, NEW.model_id
    FROM items i WHERE i.content_id = NEW.content_id;
    RETURN NEW;
END
$$;
CREATE TRIGGER item_copies_place BEFORE INSERT ON item_copies
    FOR EACH ROW WHEN (NEW.model_id IS NULL) EXECUTE FUNCTION edgecms_item_copy_place();

CREATE FUNCTION edgecms_item_place() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE item_copies ic SET container_id = n.container_id, item_order = n.item_order
    FROM new_items n JOIN old_items o ON o.content_id = n.content_id
    WHERE ic.content_id = n.content_id
      AND (o.container_id IS DISTINCT FROM n.container_id OR o.item_order <> n.item_order);
    RETURN NULL;
END
$$;
CREATE TRIGGER items_place AFTER UPDATE ON items
    REFERENCING OLD TABLE AS old_items NEW TABLE AS new_items FOR EACH STATEMENT EXECUTE FUNCTION edgecms_item_place();

-- The windows of each flavour: published copies for fetch, copies not
-- deleted for preview (the conditions the Fetch API reads use).
CREATE INDEX item_copies_fetch_order ON item_copies (container_id, locale, item_order, content_id)
    WHERE published_version_id IS NOT NULL;
CREATE INDEX item_copies_preview_order ON item_copies (container_id, locale, item_order, content_id)
    WHERE state <> 3;

-- 2. How many copies of a container's items each flavour shows in each
--    locale (a list's totalCount), kept by the writes that change it, so
--    that a list window never counts its container. Statement triggers
--    with transition tables add one delta per container and locale a
--    statement changes, so a bulk insert costs one row update, not one
--    per copy; a statement that changes no visibility touches no row.
CREATE TABLE container_counts (
    container_id  bigint NOT NULL REFERENCES containers ON DELETE CASCADE,
    locale        text NOT NULL,
    fetch_count   integer NOT NULL DEFAULT 0,
    preview_count integer NOT NULL DEFAULT 0,
    PRIMARY KEY (container_id, locale)
);
INSERT INTO container_counts (container_id, locale, fetch_count, preview_count)
SELECT container_id, locale, count(*) FILTER (WHERE published_version_id IS NOT NULL), count(*) FILTER (WHERE state <> 3)
FROM item_copies WHERE container_id IS NOT NULL
GROUP BY container_id, locale;

-- edgecms_count_copies adds the deltas of one statement: copies entering
-- (from new_copies) or leaving (from old_copies) each flavour. Deletes only
-- update rows that exist: when an instance is deleted, its containers'
-- rows may be gone before its copies.
CREATE FUNCTION edgecms_count_copies() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO container_counts AS cc (container_id, locale, fetch_count, preview_count)
        SELECT container_id, locale, count(*) FILTER (WHERE published_version_id IS NOT NULL), count(*) FILTER (WHERE state <> 3)
        FROM new_copies WHERE container_id IS NOT NULL
        GROUP BY container_id, locale
        ORDER BY container_id, locale
        ON CONFLICT (container_id, locale) DO UPDATE
        SET fetch_count = cc.fetch_count + excluded.fetch_count, preview_count = cc.preview_count + excluded.preview_count;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE container_counts AS cc SET fetch_count = cc.fetch_count - d.f, preview_count = cc.preview_count - d.p
        FROM (SELECT container_id, locale, count(*) FILTER (WHERE published_version_id IS NOT NULL) AS f,
                count(*) FILTER (WHERE state <> 3) AS p
            FROM old_copies WHERE container_id IS NOT NULL
            GROUP BY container_id, locale) AS d
        WHERE cc.container_id = d.container_id AND cc.locale = d.locale;
    ELSE
        INSERT INTO container_counts AS cc (container_id, locale, fetch_count, preview_count)
        SELECT container_id, locale, sum(f), sum(p)
        FROM (SELECT container_id, locale, (published_version_id IS NOT NULL)::int AS f, (state <> 3)::int AS p
                FROM new_copies WHERE container_id IS NOT NULL
            UNION ALL
            SELECT container_id, locale, -(published_version_id IS NOT NULL)::int, -(state <> 3)::int
                FROM old_copies WHERE container_id IS NOT NULL) AS d
        GROUP BY container_id, locale
        HAVING sum(f) <> 0 OR sum(p) <> 0
        ORDER BY container_id, locale
        ON CONFLICT (container_id, locale) DO UPDATE
        SET fetch_count = cc.fetch_count + excluded.fetch_count, preview_count = cc.preview_count + excluded.preview_count;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER item_copies_count_insert AFTER INSERT ON item_copies
    REFERENCING NEW TABLE AS new_copies FOR EACH STATEMENT EXECUTE FUNCTION edgecms_count_copies();
CREATE TRIGGER item_copies_count_update AFTER UPDATE ON item_copies
    REFERENCING OLD TABLE AS old_copies NEW TABLE AS new_copies FOR EACH STATEMENT EXECUTE FUNCTION edgecms_count_copies();
CREATE TRIGGER item_copies_count_delete AFTER DELETE ON item_copies
    REFERENCING OLD TABLE AS old_copies FOR EACH STATEMENT EXECUTE FUNCTION edgecms_count_copies();

-- 3. The components a page copy holds in its zones, working and published:
--    when an item appears or disappears, the sync stamper finds the pages
--    that show it through these (as item_copies_links for items), not by
--    reading every page of the locale.
CREATE INDEX page_copies_components ON page_copies USING gin
    (jsonb_path_query_array(zones, '$.*[*]') jsonb_path_ops);
CREATE INDEX page_copies_published_components ON page_copies USING gin
    (jsonb_path_query_array(published_zones, '$.*[*]') jsonb_path_ops);

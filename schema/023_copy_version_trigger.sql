-- One trigger function keeps the versions of item copies and of page copies
-- (the rule is in 015_versions_and_audit.sql): a save (a new version_id)
-- inserts a version, a workflow action (the same version_id, another state)
-- updates its state, and the instance's version_limit prunes the oldest
-- versions, never the current or the published one. Only the row a version
-- holds differs between the two tables, so the arguments of the trigger name
-- the versions table and the copy's id column, and everything else is
-- written once.
--
-- A database migrated before this file has one function per table
-- (edgecms_item_version, edgecms_page_version): the triggers are made again
-- on the shared function and those two are dropped, so that every database
-- ends with the same schema.

CREATE OR REPLACE FUNCTION edgecms_copy_version() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    versions  text := TG_ARGV[0];
    id_col    text := TG_ARGV[1];
    copy_id   bigint;
    who       text;
    kind      text;
    cap       integer;
BEGIN
    -- A record's fields are looked up when a statement runs, so each
    -- branch names only the columns of its own table.
    IF versions = 'item_versions' THEN
        copy_id := NEW.content_id;
    ELSE
        copy_id := NEW.page_id;
    END IF;
    IF TG_OP = 'UPDATE' AND NEW.version_id = OLD.version_id THEN
        IF NEW.state <> OLD.state THEN
            EXECUTE format('UPDATE %I SET state = $1 WHERE %I = $2 AND locale = $3 AND version_id = $4',
                           versions, id_col)
            USING NEW.state, copy_id, NEW.locale, NEW.version_id;
        END IF;
        RETURN NULL;
    END IF;
    who := edgecms_setting('edgecms.actor', '');
    kind := edgecms_setting('edgecms.action', CASE WHEN TG_OP = 'INSERT' THEN 'create' ELSE 'save' END);
    -- A discard goes back to the published version, which is kept: the
    -- conflict only brings its state up to date.
    IF versions = 'item_versions' THEN
        INSERT INTO item_versions (content_id, locale, version_id, instance_id, state, fields, modified, actor, action)
        VALUES (copy_id, NEW.locale, NEW.version_id, NEW.instance_id, NEW.state, NEW.fields, NEW.modified,
                who, kind)
        ON CONFLICT (content_id, locale, version_id) DO UPDATE SET state = EXCLUDED.state;
    ELSE
        INSERT INTO page_versions (page_id, locale, version_id, instance_id, state, doc, zones, components, modified, actor, action)
        VALUES (copy_id, NEW.locale, NEW.version_id, NEW.instance_id, NEW.state, NEW.doc, NEW.zones,
                edgecms_zone_components(NEW.zones, NEW.locale), NEW.modified,
                who, kind)
        ON CONFLICT (page_id, locale, version_id) DO UPDATE SET state = EXCLUDED.state;
    END IF;
    SELECT version_limit INTO cap FROM instances WHERE instances.id = NEW.instance_id;
    IF cap IS NOT NULL THEN
        EXECUTE format(
            'DELETE FROM %1$I v WHERE v.%2$I = $1 AND v.locale = $2'
            ' AND v.version_id <> $3 AND v.version_id IS DISTINCT FROM $4'
            ' AND v.version_id < (SELECT min(k.version_id) FROM ('
            '     SELECT version_id FROM %1$I WHERE %2$I = $1 AND locale = $2'
            '     ORDER BY version_id DESC LIMIT $5) AS k)',
            versions, id_col)
        USING copy_id, NEW.locale, NEW.version_id, NEW.published_version_id, cap;
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS item_copies_version ON item_copies;
CREATE TRIGGER item_copies_version AFTER INSERT OR UPDATE ON item_copies
    FOR EACH ROW EXECUTE FUNCTION edgecms_copy_version('item_versions', 'content_id');

DROP TRIGGER IF EXISTS page_copies_version ON page_copies;
CREATE TRIGGER page_copies_version AFTER INSERT OR UPDATE ON page_copies
    FOR EACH ROW EXECUTE FUNCTION edgecms_copy_version('page_versions', 'page_id');

DROP FUNCTION IF EXISTS edgecms_item_version();
DROP FUNCTION IF EXISTS edgecms_page_version();

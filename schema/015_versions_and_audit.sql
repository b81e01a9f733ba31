-- Versions of item and page copies, who made each change, and the audit
-- log.
--
-- 1. Every save of a copy keeps a version: triggers on item_copies and
--    page_copies copy the row into item_versions / page_versions whenever
--    its version_id changes (a save, a restore, a shared field saved from
--    another locale), so no write path can forget it. A workflow action
--    (publish, approve...) keeps the version and only updates its state,
--    so a version's state is the last one it reached. The writer names
--    itself and the kind of change in transaction settings
--    (edgecms.actor, edgecms.action) that the store sets; the triggers
--    read them. The triggers and their one function, shared by both
--    tables, are in 023_copy_version_trigger.sql.

CREATE TABLE item_versions (
    content_id  bigint NOT NULL REFERENCES items ON DELETE CASCADE,
    locale      text NOT NULL,
    version_id  bigint NOT NULL,
    instance_id bigint NOT NULL,
    state       smallint NOT NULL,
    fields      jsonb NOT NULL,
    modified    timestamptz NOT NULL,
    actor       text NOT NULL DEFAULT '',
    action      text NOT NULL,
    PRIMARY KEY (content_id, locale, version_id),
    FOREIGN KEY (instance_id, locale) REFERENCES locales (instance_id, code) ON DELETE CASCADE
);

-- A page version holds the page copy's editable fields, its zones, and the
-- field values of the components in them as they were at the save, so a
-- restore brings the components back too.
CREATE TABLE page_versions (
    page_id     bigint NOT NULL REFERENCES pages ON DELETE CASCADE,
    locale      text NOT NULL,
    version_id  bigint NOT NULL,
    instance_id bigint NOT NULL,
    state       smallint NOT NULL,
    doc         jsonb NOT NULL,
    zones       jsonb NOT NULL,
    components  jsonb NOT NULL,
    modified    timestamptz NOT NULL,
    actor       text NOT NULL DEFAULT '',
    action      text NOT NULL,
    PRIMARY KEY (page_id, locale, version_id),
    FOREIGN KEY (instance_id, locale) REFERENCES locales (instance_id, code) ON DELETE CASCADE
);

-- The most versions kept per copy (NULL: all). The current and the
-- published version are always kept.
ALTER TABLE instances ADD COLUMN version_limit integer CHECK (version_limit IS NULL OR version_limit >= 2);

CREATE FUNCTION edgecms_setting(name text, fallback text) RETURNS text
    LANGUAGE sql STABLE
    AS $$ SELECT coalesce(nullif(current_setting(name, true), ''), fallback) $$;

-- The field values of the components in zones, in the copy's locale.
CREATE FUNCTION edgecms_zone_components(zones jsonb, loc text) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
    SELECT coalesce(jsonb_object_agg(ic.content_id::text, ic.fields), '{}'::jsonb)
    FROM item_copies ic
    WHERE ic.locale = loc AND ic.content_id IN (
        SELECT (jsonb_array_elements_text(z.value))::bigint FROM jsonb_each(zones) z
        WHERE jsonb_typeof(z.value) = 'array')
    $$;

-- What exists now is the first version of each copy (and its published
-- one, when that differs).
INSERT INTO item_versions (content_id, locale, version_id, instance_id, state, fields, modified, action)
SELECT content_id, locale, published_version_id, instance_id, 2, published_fields, published_modified, 'save'
FROM item_copies WHERE published_version_id IS NOT NULL AND published_version_id <> version_id;
INSERT INTO item_versions (content_id, locale, version_id, instance_id, state, fields, modified, action)
SELECT content_id, locale, version_id, instance_id, state, fields, modified, 'save' FROM item_copies;
INSERT INTO page_versions (page_id, locale, version_id, instance_id, state, doc, zones, components, modified, action)
SELECT page_id, locale, published_version_id, instance_id, 2, published_doc, published_zones,
       edgecms_zone_components(published_zones, locale), published_modified, 'save'
FROM page_copies WHERE published_version_id IS NOT NULL AND published_version_id <> version_id;
INSERT INTO page_versions (page_id, locale, version_id, instance_id, state, doc, zones, components, modified, action)
SELECT page_id, locale, version_id, instance_id, state, doc, zones, edgecms_zone_components(zones, locale), modified, 'save'
FROM page_copies;

-- 2. Models and page models carry a revision, their ETag: a PUT with
--    If-Match of an older revision answers 412.
ALTER TABLE models ADD COLUMN revision bigint NOT NULL DEFAULT 1;
ALTER TABLE page_models ADD COLUMN revision bigint NOT NULL DEFAULT 1;

-- 3. A dynamic page names the field of its items that titles their sitemap
--    nodes (NULL: the model's field named title, else the path value).
ALTER TABLE pages ADD COLUMN dynamic_title_field text;

-- 4. The audit log: one row per change made through the management API,
--    written in the change's transaction when the change goes through the
--    content store (else just after it). It is not the event log: the
--    event log is trimmed once read, the audit log is kept (at least 90
--    days; EDGECMS_AUDIT_RETENTION).
CREATE TABLE audit (
    id          bigserial PRIMARY KEY,
    instance_id bigint NOT NULL REFERENCES instances ON DELETE CASCADE,
    at          timestamptz NOT NULL DEFAULT now(),
    actor       text NOT NULL,
    action      text NOT NULL,
    path        text NOT NULL,
    detail      jsonb
);
CREATE INDEX audit_instance_at ON audit (instance_id, at DESC, id DESC);
CREATE INDEX audit_actor ON audit (instance_id, actor, at DESC);
CREATE INDEX audit_at ON audit (at);

-- The publisher's bookkeeping beside the content: every object it (or the
-- origin, on a cache miss) wrote to the object store and what the object
-- embeds, when each event's objects were confirmed in the store, the change
-- feed that edges follow, and the notifications that wake publishers.

-- Every render that may write objects takes a number from this sequence
-- before it reads content; a write carrying a smaller number than the one
-- recorded for the object is dropped, so a slower render never overwrites a
-- newer one.
CREATE SEQUENCE publisher_renders;

-- One row per object key the publisher maintains: its canonical request (to
-- render it again), its tags qualified as <guid>.<locale>.<tag> (to find it
-- when something it embeds changes) and the ETag in the store. A row whose
-- etag is NULL is a tombstone: the object was deleted by render number
-- rendered_version, and an older render may not bring it back.
CREATE TABLE objects (
    key              text PRIMARY KEY,
    guid             text NOT NULL,
    locale           text NOT NULL,
    request          text NOT NULL,
    -- list_of is the container (lower case) of a plain list page (no
    -- filter, no sort), whose membership the publisher tracks in
    -- list_members instead of re-rendering it on every change of the
    -- container.
    list_of          text,
    etag             text,
    tags             text[] NOT NULL DEFAULT '{}',
    rendered_version bigint NOT NULL DEFAULT 0,
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX objects_tags ON objects USING gin (tags);
CREATE INDEX objects_instance ON objects (guid, locale);
CREATE INDEX objects_lists ON objects (guid, locale, list_of) WHERE list_of IS NOT NULL;
CREATE INDEX objects_tombstones ON objects (updated_at) WHERE etag IS NULL;

-- The visible items of a container, in order, as the plain list pages in
-- the store were last rendered from.
CREATE TABLE list_members (
    guid           text NOT NULL,
    locale         text NOT NULL,
    reference_name text NOT NULL,
    content_ids    bigint[] NOT NULL,
    PRIMARY KEY (guid, locale, reference_name)
);

-- An event is confirmed once every object it affects is in the store (and
-- the CDN purge, if any, was sent). The webhook dispatcher sends Published
-- and Deleted only for confirmed events.
CREATE TABLE event_confirmations (
    event_id     bigint PRIMARY KEY,
    confirmed_at timestamptz NOT NULL DEFAULT now()
);

-- Every key written or deleted, for the feed object _feed/changes.json.
-- Rows get their feed position (pos) from the one feed writer at a time,
-- in commit order, so an edge that has seen position n has seen every
-- change before it.
CREATE SEQUENCE object_change_positions;
CREATE TABLE object_changes (
    seq bigserial PRIMARY KEY,
    tx  xid8 NOT NULL DEFAULT pg_current_xact_id(),
    key text NOT NULL,
    at  timestamptz NOT NULL DEFAULT now(),
    pos bigint UNIQUE
);
CREATE INDEX object_changes_pending ON object_changes (seq) WHERE pos IS NULL;

-- Publishers LISTEN on these channels, so that a publish or a key change
-- reaches the store without waiting for a poll.
CREATE FUNCTION edgecms_notify_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('edgecms_events', '');
    RETURN NULL;
END $$;
CREATE TRIGGER events_notify AFTER INSERT ON events
    FOR EACH STATEMENT EXECUTE FUNCTION edgecms_notify_events();

CREATE FUNCTION edgecms_notify_api_keys() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    g text;
BEGIN
    SELECT guid INTO g FROM instances
        WHERE id = CASE WHEN TG_OP = 'DELETE' THEN OLD.instance_id ELSE NEW.instance_id END;
    PERFORM pg_notify('edgecms_api_keys', coalesce(g, ''));
    RETURN NULL;
END $$;
CREATE TRIGGER api_keys_notify AFTER INSERT OR UPDATE OR DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION edgecms_notify_api_keys();

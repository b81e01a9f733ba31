-- Media (uploaded assets and galleries), URL redirections, and the change
-- positions of the Fetch API's sync endpoints.

-- An asset is an uploaded file. Its bytes live in the object store under a
-- key made from their SHA-256 ({guid}/assets/{sha256}.{ext}), so the same
-- bytes always have the same address and can be cached for good; the row
-- holds what the Fetch API shows of it. Two assets may share bytes.
CREATE TABLE assets (
    id           bigserial PRIMARY KEY,
    instance_id  bigint NOT NULL REFERENCES instances ON DELETE CASCADE,
    file_name    text NOT NULL,
    label        text NOT NULL DEFAULT '',
    content_type text NOT NULL,
    size         bigint NOT NULL CHECK (size > 0),
    width        integer NOT NULL CHECK (width >= 0),
    height       integer NOT NULL CHECK (height >= 0),
    sha256       text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    object_key   text NOT NULL,
    url          text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    modified_at  timestamptz NOT NULL
);
CREATE INDEX assets_instance ON assets (instance_id, id);
CREATE INDEX assets_object_key ON assets (object_key);

-- A gallery is an ordered list of assets.
CREATE TABLE galleries (
    id          bigserial PRIMARY KEY,
    instance_id bigint NOT NULL REFERENCES instances ON DELETE CASCADE,
    name        text NOT NULL,
    description text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX galleries_name ON galleries (instance_id, lower(name));

CREATE TABLE gallery_assets (
    gallery_id bigint NOT NULL REFERENCES galleries ON DELETE CASCADE,
    asset_id   bigint NOT NULL REFERENCES assets,
    position   integer NOT NULL,
    PRIMARY KEY (gallery_id, asset_id)
);
CREATE INDEX gallery_assets_asset ON gallery_assets (asset_id);

-- URL redirections of an instance (no locale, as the Fetch API has them).
CREATE TABLE redirections (
    id              bigserial PRIMARY KEY,
    instance_id     bigint NOT NULL REFERENCES instances ON DELETE CASCADE,
    origin_url      text NOT NULL,
    destination_url text NOT NULL,
    status_code     smallint NOT NULL CHECK (status_code IN (301, 302)),
    created_at      timestamptz NOT NULL DEFAULT now(),
    modified_at     timestamptz NOT NULL
);
CREATE UNIQUE INDEX redirections_origin ON redirections (instance_id, lower(origin_url));

-- When the redirections of an instance last changed, to the millisecond
-- (JavaScript clients send it back as a Date). Every change moves it
-- forward by at least a millisecond under the row's lock, so it orders
-- changes as they commit.
CREATE TABLE redirection_versions (
    instance_id bigint PRIMARY KEY REFERENCES instances ON DELETE CASCADE,
    changed_at  timestamptz NOT NULL
);

-- Sync positions. One row per item or page copy, flavour and locale that
-- the sync endpoints have ever shown: position is the sync token of its
-- latest change, taken from sync_positions by the one stamper that runs at
-- a time (under an advisory lock), after the change committed. A change
-- moves the row to a new, larger position. fingerprint says what
-- the Fetch API shows of the copy, so that events that change nothing
-- shown (a save, for the fetch flavour) move nothing; visible is false for
-- a tombstone (deleted, or unpublished in fetch).
CREATE SEQUENCE sync_positions;
CREATE TABLE sync_changes (
    instance_id bigint NOT NULL,
    flavour     text NOT NULL CHECK (flavour IN ('fetch', 'preview')),
    locale      text NOT NULL,
    subject     text NOT NULL CHECK (subject IN ('item', 'page')),
    object_id   bigint NOT NULL,
    position    bigint NOT NULL,
    visible     boolean NOT NULL,
    fingerprint text NOT NULL,
    stamped_at  timestamptz NOT NULL,
    PRIMARY KEY (instance_id, flavour, locale, subject, object_id),
    FOREIGN KEY (instance_id) REFERENCES instances ON DELETE CASCADE
);
CREATE UNIQUE INDEX sync_changes_position ON sync_changes (instance_id, flavour, locale, subject, position);
CREATE INDEX sync_changes_tombstones ON sync_changes (stamped_at) WHERE NOT visible;

-- The stamper reads the event log through its cursor ("sync" in
-- event_cursors), which only passes rows of transactions that have ended
-- (so TrimEvents keeps what it has not read). Rows after the cursor that
-- it has stamped already, because their transaction committed while an
-- older one was still running, are listed here until the cursor passes
-- them.
CREATE TABLE sync_stamped (
    tx       xid8 NOT NULL,
    event_id bigint NOT NULL,
    PRIMARY KEY (tx, event_id)
);

-- The items an item copy links to (item links and list selections), in
-- its working and its published values: when an item appears or
-- disappears, the stamper finds the copies that show it through these.
CREATE INDEX item_copies_links ON item_copies USING gin
    ((jsonb_path_query_array(fields, '$.*.contentID') || jsonb_path_query_array(fields, '$.*.contentIDs[*]')) jsonb_path_ops);
CREATE INDEX item_copies_published_links ON item_copies USING gin
    ((jsonb_path_query_array(published_fields, '$.*.contentID') || jsonb_path_query_array(published_fields, '$.*.contentIDs[*]')) jsonb_path_ops);

-- Tombstones older than the retention are pruned; floor is the largest
-- position pruned from one stream (instance, flavour, locale, subject). A
-- token of that stream below it may have missed a deletion, so it is
-- answered as a full resync from 0.
CREATE TABLE sync_floors (
    instance_id bigint NOT NULL REFERENCES instances ON DELETE CASCADE,
    flavour     text NOT NULL,
    locale      text NOT NULL,
    subject     text NOT NULL,
    floor       bigint NOT NULL,
    PRIMARY KEY (instance_id, flavour, locale, subject)
);

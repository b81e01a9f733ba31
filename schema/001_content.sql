-- The content store: instances, locales, credentials, models, containers,
-- items, pages and the append-only event log.

CREATE TABLE instances (
    id          bigserial PRIMARY KEY,
    guid        text NOT NULL UNIQUE CHECK (guid ~ '^[a-z0-9][a-z0-9-]{0,63}$'),
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE locales (
    instance_id bigint NOT NULL REFERENCES instances ON DELETE CASCADE,
    code        text NOT NULL CHECK (code ~ '^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$'),
    name        text NOT NULL,
    is_default  boolean NOT NULL DEFAULT false,
    position    integer NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (instance_id, code)
);
-- Requests may send the lower-case form of a code, so two codes of one
-- instance may not differ only in case.
CREATE UNIQUE INDEX locales_code_ci ON locales (instance_id, lower(code));
CREATE UNIQUE INDEX locales_one_default ON locales (instance_id) WHERE is_default;

CREATE TABLE api_keys (
    id          bigserial PRIMARY KEY,
    instance_id bigint NOT NULL REFERENCES instances ON DELETE CASCADE,
    name        text NOT NULL,
    type        text NOT NULL CHECK (type IN ('fetch', 'preview')),
    key_hash    bytea NOT NULL UNIQUE,
    expires_at  timestamptz,
    enabled     boolean NOT NULL DEFAULT true,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_keys_instance ON api_keys (instance_id);

CREATE TABLE tokens (
    id          bigserial PRIMARY KEY,
    instance_id bigint NOT NULL REFERENCES instances ON DELETE CASCADE,
    name        text NOT NULL,
    role        text NOT NULL CHECK (role IN ('edit', 'publish', 'manage', 'full')),
    token_hash  bytea NOT NULL UNIQUE,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tokens_instance ON tokens (instance_id);

CREATE TABLE models (
    id          bigserial PRIMARY KEY,
    instance_id bigint NOT NULL REFERENCES instances ON DELETE CASCADE,
    name        text NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('content', 'component')),
    fields      jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX models_name ON models (instance_id, lower(name));

CREATE TABLE containers (
    id             bigserial PRIMARY KEY,
    instance_id    bigint NOT NULL REFERENCES instances ON DELETE CASCADE,
    reference_name text NOT NULL,
    model_id       bigint NOT NULL REFERENCES models,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX containers_name ON containers (instance_id, lower(reference_name));
CREATE INDEX containers_model ON containers (model_id);

-- Every save of an item or page takes the next version from one sequence, so
-- a versionID only ever increases.
CREATE SEQUENCE versions;

-- An item is the locale-independent part of a content item: its contentID,
-- model, container and order. Components placed on pages have no container.
CREATE TABLE items (
    content_id   bigserial PRIMARY KEY,
    instance_id  bigint NOT NULL REFERENCES instances ON DELETE CASCADE,
    model_id     bigint NOT NULL REFERENCES models,
    container_id bigint REFERENCES containers,
    item_order   integer NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX items_container ON items (container_id, item_order, content_id);
CREATE INDEX items_instance ON items (instance_id);
CREATE INDEX items_model ON items (model_id);

-- An item copy is one locale's copy of an item: the working copy (fields,
-- version_id, modified, state) and, once published, the published copy.
CREATE TABLE item_copies (
    content_id           bigint NOT NULL REFERENCES items ON DELETE CASCADE,
    instance_id          bigint NOT NULL,
    locale               text NOT NULL,
    state                smallint NOT NULL CHECK (state BETWEEN 1 AND 7),
    version_id           bigint NOT NULL,
    fields               jsonb NOT NULL,
    modified             timestamptz NOT NULL,
    published_version_id bigint,
    published_fields     jsonb,
    published_modified   timestamptz,
    publish_at           timestamptz,
    unpublish_at         timestamptz,
    PRIMARY KEY (content_id, locale),
    FOREIGN KEY (instance_id, locale) REFERENCES locales (instance_id, code),
    CHECK ((published_version_id IS NULL) = (published_fields IS NULL))
);
CREATE INDEX item_copies_locale ON item_copies (instance_id, locale);
CREATE INDEX item_copies_publish_at ON item_copies (publish_at) WHERE publish_at IS NOT NULL;
CREATE INDEX item_copies_unpublish_at ON item_copies (unpublish_at) WHERE unpublish_at IS NOT NULL;

CREATE TABLE channels (
    id          bigserial PRIMARY KEY,
    instance_id bigint NOT NULL REFERENCES instances ON DELETE CASCADE,
    name        text NOT NULL CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$'),
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX channels_name ON channels (instance_id, lower(name));

CREATE TABLE page_models (
    id          bigserial PRIMARY KEY,
    instance_id bigint NOT NULL REFERENCES instances ON DELETE CASCADE,
    name        text NOT NULL,
    zones       text[] NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX page_models_name ON page_models (instance_id, lower(name));

-- A page is the locale-independent part of a page: its place in the tree of a
-- channel, its model and its type.
CREATE TABLE pages (
    page_id              bigserial PRIMARY KEY,
    instance_id          bigint NOT NULL REFERENCES instances ON DELETE CASCADE,
    channel_id           bigint NOT NULL REFERENCES channels,
    parent_id            bigint REFERENCES pages,
    sort_order           integer NOT NULL,
    page_model_id        bigint NOT NULL REFERENCES page_models,
    page_type            text NOT NULL CHECK (page_type IN ('static', 'dynamic', 'link', 'folder')),
    dynamic_container_id bigint REFERENCES containers,
    dynamic_path_field   text,
    created_at           timestamptz NOT NULL DEFAULT now(),
    CHECK ((page_type = 'dynamic') = (dynamic_container_id IS NOT NULL))
);
CREATE INDEX pages_tree ON pages (channel_id, parent_id, sort_order);
CREATE INDEX pages_instance ON pages (instance_id);

-- A page copy is one locale's copy of a page. name is made from the title
-- when the copy is created and never changes; doc holds the editable fields
-- (title, menuText, visible, seo, scripts, redirectUrl, securePage,
-- excludeFromOutputCache) and zones the component contentIDs per zone.
CREATE TABLE page_copies (
    page_id            bigint NOT NULL REFERENCES pages ON DELETE CASCADE,
    instance_id        bigint NOT NULL,
    locale             text NOT NULL,
    channel_id         bigint NOT NULL,
    parent_id          bigint,
    name               text NOT NULL,
    state              smallint NOT NULL CHECK (state BETWEEN 1 AND 7),
    version_id         bigint NOT NULL,
    doc                jsonb NOT NULL,
    zones              jsonb NOT NULL,
    modified           timestamptz NOT NULL,
    published_version_id bigint,
    published_doc      jsonb,
    published_zones    jsonb,
    published_modified timestamptz,
    publish_at         timestamptz,
    unpublish_at       timestamptz,
    PRIMARY KEY (page_id, locale),
    FOREIGN KEY (instance_id, locale) REFERENCES locales (instance_id, code)
);
-- Names are unique among the live (not deleted) siblings of one locale.
CREATE UNIQUE INDEX page_copies_sibling_name
    ON page_copies (channel_id, coalesce(parent_id, 0), locale, lower(name)) WHERE state <> 3;
CREATE INDEX page_copies_locale ON page_copies (instance_id, locale);
CREATE INDEX page_copies_publish_at ON page_copies (publish_at) WHERE publish_at IS NOT NULL;
CREATE INDEX page_copies_unpublish_at ON page_copies (unpublish_at) WHERE unpublish_at IS NOT NULL;

-- The event log: one row per Saved, Published, Deleted, AwaitingApproval,
-- Approved and Declined, written in the transaction of the change. Readers
-- order rows by (tx, id) and read only rows of transactions older than every
-- transaction still running, so a consumer's position never passes a row
-- that commits later.
CREATE TABLE events (
    id             bigserial PRIMARY KEY,
    tx             xid8 NOT NULL DEFAULT pg_current_xact_id(),
    instance_id    bigint NOT NULL,
    instance_guid  text NOT NULL,
    state          text NOT NULL CHECK (state IN ('Saved', 'Published', 'Deleted', 'AwaitingApproval', 'Approved', 'Declined')),
    subject        text NOT NULL CHECK (subject IN ('item', 'page', 'redirect', 'list')),
    locale         text,
    reference_name text,
    content_id     bigint,
    page_id        bigint,
    version_id     bigint,
    change_date    timestamptz NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_position ON events (tx, id);

-- Each consumer of the event log (publisher, webhook dispatcher, ...) keeps
-- its own position.
CREATE TABLE event_cursors (
    consumer   text PRIMARY KEY,
    tx         xid8 NOT NULL DEFAULT '0',
    id         bigint NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL DEFAULT now()
);

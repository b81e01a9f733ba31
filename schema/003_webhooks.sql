-- Outbound webhooks: the webhooks of each instance, the durable delivery
-- queue (which is also the delivery history), and the events that wait for
-- the publisher's confirmation before they are queued.

CREATE TABLE webhooks (
    id                text PRIMARY KEY,  -- the webhook's rowKey, "wh_..."
    instance_id       bigint NOT NULL REFERENCES instances ON DELETE CASCADE,
    name              text NOT NULL DEFAULT '',
    url               text NOT NULL,
    enabled           boolean NOT NULL DEFAULT true,
    publish_events    boolean NOT NULL DEFAULT false,
    save_events       boolean NOT NULL DEFAULT false,
    workflow_events   boolean NOT NULL DEFAULT false,
    secure            boolean NOT NULL DEFAULT false,
    retries_enabled   boolean NOT NULL DEFAULT false,
    retry_count       integer NOT NULL DEFAULT 3 CHECK (retry_count BETWEEN 1 AND 8),
    retry_speed       text NOT NULL DEFAULT 'standard' CHECK (retry_speed IN ('fast', 'standard', 'slow')),
    -- Signing secrets, sealed with AES-256-GCM under EDGECMS_SECRET_KEY.
    secret            bytea,
    previous_secret   bytea,
    secret_rolled_at  timestamptz,
    -- Signatures sent on the last attempt of any delivery, and when.
    signature_key_count integer NOT NULL DEFAULT 0,
    last_attempt_at   timestamptz,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL
);
CREATE INDEX webhooks_instance ON webhooks (instance_id, created_at, id);

-- One row per delivery: a payload queued for one webhook. The row is the
-- queue entry while the delivery is queued or waiting for a retry, and its
-- history record for the rest of its life (90 days).
CREATE TABLE webhook_deliveries (
    id                  text PRIMARY KEY,  -- rowKey and webhook-id, "msg_..."
    webhook_id          text NOT NULL REFERENCES webhooks ON DELETE CASCADE,
    event_key           text NOT NULL,
    event_id            bigint,            -- the event log row; NULL for a test delivery
    merge_key           text,              -- subject, ids, locale and state; NULL never merges
    publish_event       boolean NOT NULL DEFAULT false,
    save_event          boolean NOT NULL DEFAULT false,
    workflow_event      boolean NOT NULL DEFAULT false,
    payload             bytea NOT NULL,
    status              text NOT NULL CHECK (status IN ('queued', 'retrying', 'succeeded', 'failed')),
    queued_at           timestamptz NOT NULL,
    due_at              timestamptz NOT NULL,  -- the next attempt may start then
    lease_owner         text,                  -- the dispatcher attempting it, until lease_until
    lease_until         timestamptz,
    chain_attempts      integer NOT NULL DEFAULT 0,  -- attempts since it was last queued
    attempt_count       integer NOT NULL DEFAULT 0,  -- attempts in all
    last_attempt_at     timestamptz,
    sent_at             timestamptz,
    next_attempt_at     timestamptz,
    http_status         integer NOT NULL DEFAULT 0,
    response_text       text NOT NULL DEFAULT '',
    last_error          text NOT NULL DEFAULT '',
    signed              boolean NOT NULL DEFAULT false,
    signature_key_count integer NOT NULL DEFAULT 0
);
-- The queue: what is due, in order.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (due_at) WHERE status IN ('queued', 'retrying');
-- The merge: a still-queued delivery of the same webhook and subject.
CREATE INDEX webhook_deliveries_merge ON webhook_deliveries (webhook_id, merge_key, queued_at)
    WHERE status IN ('queued', 'retrying') AND merge_key IS NOT NULL;
-- The history, newest first, and its retention.
CREATE INDEX webhook_deliveries_history ON webhook_deliveries (webhook_id, queued_at DESC, id DESC);
CREATE INDEX webhook_deliveries_queued_at ON webhook_deliveries (queued_at);

-- Published and Deleted events wait here until the publisher has confirmed
-- that the object store holds the new state (event_confirmations); only then
-- are their deliveries queued. The event is copied because the event log may
-- be trimmed meanwhile.
CREATE TABLE webhook_awaiting (
    event_id    bigint PRIMARY KEY,
    event       jsonb NOT NULL,
    created_at  timestamptz NOT NULL
);

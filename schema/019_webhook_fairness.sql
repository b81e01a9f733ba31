-- Fair delivery: a claim takes at most a few deliveries in flight per
-- webhook and per instance, round robin across instances, and skips the
-- webhooks whose breaker is open (webhooks/claim.go, webhooks/breaker.go).

-- The waiting deliveries of each webhook, in due order: the claim walks the
-- webhooks that have any (a skip scan) and takes the first due ones of each.
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (webhook_id, due_at, id)
    WHERE status IN ('queued', 'retrying');

-- The deliveries being attempted (leased), counted per webhook and
-- instance by every claim. A lease is cleared when its attempt is recorded,
-- so this index stays as small as the work in flight.
CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (lease_until, webhook_id)
    WHERE lease_until IS NOT NULL;

-- The breaker of each webhook whose attempts time out: kept in Postgres so
-- that every dispatcher agrees. No row: closed, nothing timed out since the
-- last answer. open_until in the future: open, its deliveries wait until
-- then; in the past: half-open, one attempt at a time probes the endpoint.
-- An answer (any HTTP status) deletes the row: the breaker closes.
CREATE TABLE webhook_breakers (
    webhook_id  text PRIMARY KEY REFERENCES webhooks ON DELETE CASCADE,
    timeouts    integer NOT NULL DEFAULT 0,  -- attempts in a row that got no answer in time
    trips       integer NOT NULL DEFAULT 0,  -- times opened since the last answer (the pause doubles)
    open_until  timestamptz,                 -- NULL: closed (counting)
    updated_at  timestamptz NOT NULL
);
CREATE INDEX webhook_breakers_open ON webhook_breakers (open_until) WHERE open_until IS NOT NULL;

-- The event log's horizon: the position up to which every event row that
-- will ever commit is already visible. Readers of the log (content's
-- ReadEvents and EventsSince) read only rows below it, so their positions
-- never pass a row that commits later.
--
-- Transactions that may write events take a shared advisory lock (key
-- 7301968) before their first write. The horizon is the oldest transaction
-- still in progress in the caller's snapshot, ignoring the ones that cannot
-- write events: transactions of other databases, and transactions of this
-- database that do not hold that lock. So a long transaction elsewhere on
-- the server (a report, a benchmark, another service) no longer holds the
-- log back; only content writers in flight do, for as long as they run.
CREATE FUNCTION edgecms_event_horizon() RETURNS xid8
LANGUAGE sql STABLE AS $$
    WITH snap AS (SELECT pg_current_snapshot() AS s),
    -- live backends with an assigned transaction id that cannot write events
    bystanders AS (
        SELECT a.backend_xid::text::bigint AS xid
        FROM pg_stat_activity a
        WHERE a.backend_xid IS NOT NULL
          AND (a.datname IS DISTINCT FROM current_database()
               OR NOT EXISTS (
                   SELECT 1 FROM pg_locks l
                   WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted
                     AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                     AND l.classid = 0 AND l.objid = 7301968 AND l.objsubid = 1))
    )
    SELECT coalesce(
        (SELECT min(x) FROM snap, pg_snapshot_xip(snap.s) AS x
         WHERE (x::text::numeric % 4294967296)::bigint NOT IN (SELECT xid FROM bystanders)),
        (SELECT pg_snapshot_xmax(s) FROM snap))
$$;

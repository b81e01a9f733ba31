-- The horizon of 005 read pg_stat_activity and pg_locks after taking its
-- snapshot, in no fixed order: a writer that committed between the two
-- reads looked like a transaction that never writes events, and its rows,
-- not yet visible in the snapshot, fell behind a reader's position.
--
-- Now a transaction is ignored only if, first, its backend does not hold
-- the writer lock and, then (a later statement), it is still in progress.
-- Writers hold the lock from before their first write until they end, so a
-- transaction still running after it was seen without the lock is not a
-- writer; one that ended in between is kept in the horizon.
CREATE OR REPLACE FUNCTION edgecms_event_horizon() RETURNS xid8
LANGUAGE plpgsql STABLE AS $$
DECLARE
    snap pg_snapshot := pg_current_snapshot();
    dbid oid := (SELECT oid FROM pg_database WHERE datname = current_database());
    candidates bigint[];
    horizon xid8;
BEGIN
    -- 1. live backends with a transaction id that do not hold the lock
    SELECT array_agg(a.backend_xid::text::bigint) INTO candidates
    FROM pg_stat_activity a
    WHERE a.backend_xid IS NOT NULL
      AND (a.datname IS DISTINCT FROM current_database()
           OR NOT EXISTS (
               SELECT 1 FROM pg_locks l
               WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted
                 AND l.database = dbid AND l.classid = 0 AND l.objid = 7301968 AND l.objsubid = 1));
    -- 2. the oldest in-progress transaction of the snapshot that is not one
    --    of them still running now
    SELECT min(x) INTO horizon
    FROM pg_snapshot_xip(snap) AS x
    WHERE NOT ((x::text::numeric % 4294967296)::bigint = ANY (coalesce(candidates, '{}'))
               AND pg_xact_status(x) = 'in progress');
    RETURN coalesce(horizon, pg_snapshot_xmax(snap));
END
$$;

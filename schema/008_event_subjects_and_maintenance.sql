-- Events about locales and channels, trimming the event log by age, and the
-- periodic maintenance the schedulers share.
--
-- It widens whatever check constrains events.subject (keeping every value
-- it allows) rather than assuming the name Postgres gave 001's unnamed
-- check or its list.

-- 1. Locale and channel events (content: a locale added or removed, a
--    channel added), which the publisher turns into the locale's objects
--    and the channel's sitemaps.
DO $$
DECLARE
    subject_col smallint := (SELECT attnum FROM pg_attribute
                             WHERE attrelid = 'events'::regclass AND attname = 'subject');
    con record;
    allowed text[] := ARRAY['item', 'page', 'redirect', 'list', 'locale', 'channel'];
BEGIN
    FOR con IN
        SELECT c.conname, pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
        WHERE c.conrelid = 'events'::regclass AND c.contype = 'c' AND c.conkey = ARRAY[subject_col]
    LOOP
        allowed := allowed || ARRAY(SELECT m[1] FROM regexp_matches(con.def, '''([^'']*)''', 'g') AS m);
        EXECUTE format('ALTER TABLE events DROP CONSTRAINT %I', con.conname);
    END LOOP;
    EXECUTE format('ALTER TABLE events ADD CONSTRAINT events_subject_check CHECK (subject = ANY (%L::text[]))',
        (SELECT array_agg(DISTINCT a ORDER BY a) FROM unnest(allowed) AS a));
END
$$;

-- 2. TrimEvents deletes by age: find the old rows without scanning the log.
CREATE INDEX events_created_at ON events (created_at);

-- 3. One row per periodic maintenance task (trimming the event log, stamping
--    and pruning sync positions): when a scheduler last started it. Any
--    number of schedulers may run; each claims a task by moving ran_at
--    forward, so the task runs about once per interval whatever their
--    number.
CREATE TABLE maintenance_runs (
    task   text PRIMARY KEY,
    ran_at timestamptz NOT NULL
);

-- Models that evolve: a change of a model or a page model is an event, so
-- that the publisher renders again what shows the model and webhook
-- receivers read it again.
--
-- Like list and channel events they are Deleted events without ids, one
-- per locale, the model's name in reference_name: subject 'model' for a
-- content or component model, 'pagemodel' for a page model. It widens the
-- subject check as 008 did, keeping every value it allows.
DO $$
DECLARE
    subject_col smallint := (SELECT attnum FROM pg_attribute
                             WHERE attrelid = 'events'::regclass AND attname = 'subject');
    con record;
    allowed text[] := ARRAY['model', 'pagemodel'];
BEGIN
    FOR con IN
        SELECT c.conname, pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
        WHERE c.conrelid = 'events'::regclass AND c.contype = 'c' AND c.conkey = ARRAY[subject_col]
    LOOP
        -- 008 wrote the list as an array literal ('{a,b}'), 001 as
        -- quoted values: take the values of either.
        allowed := allowed || ARRAY(
            SELECT trim(both '"' from v)
            FROM regexp_matches(con.def, '''([^'']*)''', 'g') AS m,
                 regexp_split_to_table(trim(both '{}' from m[1]), ',') AS v);
        EXECUTE format('ALTER TABLE events DROP CONSTRAINT %I', con.conname);
    END LOOP;
    EXECUTE format('ALTER TABLE events ADD CONSTRAINT events_subject_check CHECK (subject = ANY (%L::text[]))',
        (SELECT array_agg(DISTINCT a ORDER BY a) FROM unnest(allowed) AS a));
END
$$;

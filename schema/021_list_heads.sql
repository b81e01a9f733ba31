-- 1. A container's list membership is what its maintained list pages show:
--    the first ids in container order (Config.ListPages × 10 of them, or
--    all when fewer) and how many items are visible (totalCount), not
--    every visible id. A new item in a container of 100,000 then reads
--    and writes about a hundred ids, not 100,000. Existing rows keep
--    their first 100 ids (the default head) and their count; a head
--    shorter than the configured one only makes the publisher render a
--    list page it cannot compare (publisher/lists.go), once.
ALTER TABLE list_members ADD COLUMN total integer;
UPDATE list_members SET total = cardinality(content_ids), content_ids = content_ids[1:100];
ALTER TABLE list_members ALTER COLUMN total SET NOT NULL;
ALTER TABLE list_members RENAME COLUMN content_ids TO head_ids;

-- 2. A publisher's hand-off (publisher/handoff.go) wakes the webhook
--    dispatchers, which LISTEN on edgecms_confirmations, when it commits
--    confirmations, rather than leaving them to find the confirmed events
--    at their next poll.
CREATE FUNCTION edgecms_notify_confirmations() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('edgecms_confirmations', '');
    RETURN NULL;
END $$;
CREATE TRIGGER event_confirmations_notify AFTER INSERT ON event_confirmations
    FOR EACH STATEMENT EXECUTE FUNCTION edgecms_notify_confirmations();

-- 3. Every batch finds the objects a change affects by tag (objects_tags,
--    GIN). With the default fast update, inserted tags wait in a pending
--    list of up to 4 MB that every scan reads in full: after a republish
--    of 100,000 items that is 60-80 ms a lookup on an idle machine, twice
--    a batch. The smallest list (64 kB) is merged into the index about
--    every hundred objects written, so a lookup reads at most that.
ALTER INDEX objects_tags SET (gin_pending_list_limit = 64);

-- The publisher's slow lane: objects a batch of events changed but did not
-- render itself, because no event names them and nothing there depends on
-- them soon (list pages past the first whose only change is totalCount).
-- A batch queues them in the transaction that moves its cursor and confirms
-- its events, so a crash never loses them; the publisher's background lane
-- renders them a small chunk at a time and deletes the rows it did, unless
-- they were queued again meanwhile (queued changed).
CREATE SEQUENCE publish_backlog_queued;
CREATE TABLE publish_backlog (
    key     text PRIMARY KEY,
    guid    text NOT NULL,
    request text NOT NULL,
    queued  bigint NOT NULL DEFAULT nextval('publish_backlog_queued')
);
CREATE INDEX publish_backlog_order ON publish_backlog (queued);

-- The render number of the latest batch of events that planned for each
-- instance (taken right after its plan read the objects table, under the
-- instance lock). A background chunk of the publisher renders without
-- that lock; before it lets go of the keys it created, it checks here
-- whether a batch planned after it took its own render number: such a
-- batch may have looked for those keys by tag before their rows existed,
-- so the chunk queues them again (publisher/backlog.go).
CREATE TABLE publisher_plans (
    guid    text PRIMARY KEY,
    version bigint NOT NULL
);

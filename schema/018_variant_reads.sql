-- Variants: objects that the origin wrote back after readers asked for them
-- (filters, sorts, depths, page sizes the publisher does not maintain for
-- every instance). last_read is set on those rows only, to when a read of
-- the object last reached the origin; it is NULL for the objects the
-- publisher maintains. The publisher caps the live variants of an instance
-- and evicts the least recently read first, which the partial index below
-- finds without reading the other objects.
ALTER TABLE objects ADD COLUMN last_read timestamptz;
CREATE INDEX objects_variants ON objects (guid, last_read) WHERE last_read IS NOT NULL AND etag IS NOT NULL;

-- Preview links and request rates shared by every origin.
--
-- 1. A channel may name the site that previews its pages: a URL template
--    such as https://site.example/api/preview?slug={path}&key={previewLink}
--    (package origin fills it in and signs the link).
ALTER TABLE channels ADD COLUMN preview_url text
    CHECK (preview_url IS NULL OR length(preview_url) BETWEEN 1 AND 2000);

-- 2. Token buckets of the Fetch API's per-key limits (package throttle,
--    Rate): one row per key, so that N origins on one database allow the
--    rate once, not N times. tokens is what the bucket held at updated_at;
--    granted is how many tokens the last take handed out (the take's
--    answer, set in the same statement). Unlogged: a take then commits
--    without waiting for a WAL flush (a request under the limit waits for
--    its take), and a crash that empties the table only fills every bucket.
CREATE UNLOGGED TABLE rate_buckets (
    key        text PRIMARY KEY,
    tokens     double precision NOT NULL,
    granted    integer NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE INDEX rate_buckets_updated_at ON rate_buckets (updated_at);

-- Assets are kept as object keys relative to the store
-- ({guid}/assets/{sha256}.{ext}, already in assets.object_key), and their
-- URLs are made from the public URL (EDGECMS_PUBLIC_URL) when they are
-- read or rendered. Until now the absolute URL of the upload request's host
-- was stored, in assets.url and copied into the image values of item
-- fields, so that a restore, a new domain or a CDN in front kept the old
-- host for good.
--
-- Image values made from an asset ({assetID, url, ...}) get the asset's key
-- instead of the url. An image value given by URL whose URL is one of this
-- instance's asset URLs (an absolute URL whatever its host, with the path
-- /api/assets/{guid}/{sha256}.{ext} that uploads were given) becomes the
-- image of that asset (the oldest with those bytes). Other URLs stay.

CREATE FUNCTION pg_temp.keyed_images(inst bigint, vals jsonb) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT coalesce(jsonb_object_agg(e.key, CASE
        WHEN jsonb_typeof(e.value) <> 'object' OR NOT e.value ? 'url' THEN e.value
        WHEN e.value ? 'assetID' THEN coalesce(
            (SELECT (e.value - 'url') || jsonb_build_object('key', a.object_key)
             FROM assets a
             WHERE a.instance_id = inst AND a.id = (e.value->>'assetID')::bigint),
            e.value)
        WHEN e.value->>'url' ~ '^https?://[^/?#]+/api/assets/[a-z0-9-]+/[0-9a-f]{64}\.[a-z]+$' THEN coalesce(
            (SELECT (e.value - 'url') || jsonb_build_object('assetID', a.id, 'key', a.object_key,
                 'filesize', a.size, 'width', a.width, 'height', a.height)
             FROM assets a
             WHERE a.instance_id = inst
               AND a.object_key = regexp_replace(e.value->>'url', '^https?://[^/?#]+/api/assets/([a-z0-9-]+)/', '\1/assets/')
             ORDER BY a.id LIMIT 1),
            e.value)
        ELSE e.value END), '{}'::jsonb)
    FROM jsonb_each(vals) e
$$;

UPDATE item_copies
SET fields = pg_temp.keyed_images(instance_id, fields),
    published_fields = CASE WHEN published_fields IS NULL THEN NULL
                            ELSE pg_temp.keyed_images(instance_id, published_fields) END
WHERE fields::text LIKE '%"assetID"%' OR fields::text LIKE '%/api/assets/%'
   OR published_fields::text LIKE '%"assetID"%' OR published_fields::text LIKE '%/api/assets/%';

ALTER TABLE assets DROP COLUMN url;

DROP FUNCTION pg_temp.keyed_images(bigint, jsonb);

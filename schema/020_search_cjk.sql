-- Search finds CJK text by any substring. The simple parser keeps a run of
-- ideographs (or kana, or hangul) as one word, so that "会社概要" was found
-- by "会社" (a prefix) but never by "概要". Without a word segmenter in
-- Postgres, the usual answer is bigrams: before the vector is made, each
-- such run becomes its overlapping pairs of characters and its last
-- character alone ("会社 社概 概要 要"), so that every character starts a
-- word. The search text goes through the same change in Go (content.tsQuery):
-- a run of two or more characters becomes all of its pairs ('社概' & '概要'),
-- one character a prefix.
-- Latin text is unchanged and keeps its unaccent folding; the GIN index
-- stays the one of schema/016.
--
-- The character ranges are those of content.isCJK: Hiragana and Katakana,
-- the CJK Unified Ideographs (with extension A and the supplementary
-- planes), compatibility ideographs, Hangul syllables and jamo, halfwidth
-- Katakana.

CREATE FUNCTION edgecms_cjk_grams(t text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT
    AS $$
DECLARE
    out text;
BEGIN
    IF t !~ '[\u1100-\u11ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f]' THEN
        RETURN t;
    END IF;
    -- One pass over the characters (a loop that appends to a string
    -- would copy it at each character: quadratic on a long article): a
    -- CJK character becomes itself and the next one when that is CJK
    -- too, between spaces; any other character stays.
    SELECT string_agg(CASE WHEN cjk THEN ' ' || c || CASE WHEN next_cjk THEN next ELSE '' END || ' ' ELSE c END, '' ORDER BY n)
    INTO out
    FROM (SELECT c, n, cjk, lead(c) OVER w AS next, coalesce(lead(cjk) OVER w, false) AS next_cjk
          FROM (SELECT c, n, c ~ '[\u1100-\u11ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f]' AS cjk
                FROM regexp_split_to_table(t, '') WITH ORDINALITY AS s(c, n)) chars
          WINDOW w AS (ORDER BY n)) pairs;
    RETURN out;
END
$$;

CREATE OR REPLACE FUNCTION edgecms_search_vector(model bigint, vals jsonb) RETURNS tsvector
    LANGUAGE plpgsql STABLE
    AS $$
DECLARE
    f jsonb;
    v text;
    out tsvector := ''::tsvector;
BEGIN
    FOR f IN SELECT e FROM models m, jsonb_array_elements(m.fields) e
             WHERE m.id = model AND e->>'type' IN ('text', 'html')
    LOOP
        IF jsonb_typeof(vals->(f->>'name')) IS DISTINCT FROM 'string' THEN
            CONTINUE;
        END IF;
        v := vals->>(f->>'name');
        IF f->>'type' = 'html' THEN
            v := regexp_replace(v, '<[^>]*>', ' ', 'g');
        END IF;
        out := out || setweight(to_tsvector('simple', edgecms_unaccent(edgecms_cjk_grams(v))),
            CASE WHEN lower(f->>'name') = 'title' THEN 'A' ELSE 'D' END::"char");
    END LOOP;
    RETURN out;
END
$$;

-- Only the copies with such text have another vector now.
UPDATE item_copies SET search = edgecms_search_vector(model_id, fields)
WHERE fields::text ~ '[\u1100-\u11ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f]';

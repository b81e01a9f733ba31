-- Search finds CJK text by any substring. The simple parser keeps a run of
-- ideographs (or kana, or hangul) as one word, so that "会社概要" was found
-- by "会社" (a prefix) but never by "概要". Without a word segmenter in
-- Postgres, the usual answer is bigrams: before the vector is made, each
-- such run becomes its overlapping pairs of characters and its last
-- character alone ("会社 社概 概要 要"), so that every character starts a
-- word. The search text goes through the same change in Go (content.tsQuery):
-- a run of two or more characters becomes its pairs as a phrase
-- ('社概' <-> '概要', adjacent in that order), one character a prefix.
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
    run text;
    n int;
    out text := '';
BEGIN
    IF t !~ '[\u1100-\u11ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f]' THEN
        RETURN t;
    END IF;
    FOR run IN SELECT m[1] FROM regexp_matches(t,
            '([\u1100-\u11ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f]+|[^\u1100-\u11ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f]+)',
            'g') AS m
    LOOP
        IF run ~ '^[\u1100-\u11ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f]' THEN
            n := length(run);
            FOR i IN 1 .. n - 1 LOOP
                out := out || ' ' || substr(run, i, 2);
            END LOOP;
            out := out || ' ' || substr(run, n, 1) || ' ';
        ELSE
            out := out || run;
        END IF;
    END LOOP;
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

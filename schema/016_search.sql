-- Search across content: GET /{locale}/items?q= finds the working copies
-- whose text and rich-text fields hold every word of q (each as a prefix),
-- case- and accent-insensitively, ranked. Postgres full text search with
-- unaccent: no search server to run.
--
-- Each item copy carries a tsvector of its text and html fields, made by a
-- trigger when the copy is written (fields are JSON, and which of them are
-- text depends on the model), indexed with GIN. A model change that drops a
-- field rewrites the copies that held it, and so their vectors.

CREATE EXTENSION IF NOT EXISTS unaccent;

-- unaccent() is only STABLE (its dictionary could change); the vectors of
-- stored rows and the queries must agree, so both go through this
-- immutable wrapper with the dictionary named.
CREATE FUNCTION edgecms_unaccent(text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT public.unaccent('public.unaccent'::regdictionary, $1) $$;

-- The vector of one copy: the values of the model's text and html fields
-- (markup stripped), a field named title weighing most.
CREATE FUNCTION edgecms_search_vector(model bigint, vals jsonb) RETURNS tsvector
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
        out := out || setweight(to_tsvector('simple', edgecms_unaccent(v)),
            CASE WHEN lower(f->>'name') = 'title' THEN 'A' ELSE 'D' END::"char");
    END LOOP;
    RETURN out;
END
$$;

ALTER TABLE item_copies ADD COLUMN search tsvector;

-- Named to run after item_copies_place (schema 009), which sets model_id.
CREATE FUNCTION edgecms_item_copy_search() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    NEW.search := edgecms_search_vector(NEW.model_id, NEW.fields);
    RETURN NEW;
END
$$;
CREATE TRIGGER item_copies_search BEFORE INSERT OR UPDATE OF fields, model_id ON item_copies
    FOR EACH ROW EXECUTE FUNCTION edgecms_item_copy_search();

UPDATE item_copies SET search = edgecms_search_vector(model_id, fields);

CREATE INDEX item_copies_search ON item_copies USING gin (search);

-- Every book has its search columns now (003 and the service filled them); every write must
-- keep them.
ALTER TABLE books
  ALTER COLUMN title_folded SET NOT NULL,
  ALTER COLUMN author_folded SET NOT NULL,
  ALTER COLUMN title_words SET NOT NULL,
  ALTER COLUMN author_words SET NOT NULL;

-- Keyset pages in each sort order; a sort by more fields uses the index of the first.
CREATE INDEX books_by_title ON books (title_folded, id);
CREATE INDEX books_by_author ON books (author_folded, id);
CREATE INDEX books_by_year ON books (year, id);

-- `q`: every word must begin a word of the book. The words are folded and split already, so they
-- become lexemes as they are, with no parser or dictionary: exactly the words SQLite indexes.
ALTER TABLE books ADD COLUMN words tsvector GENERATED ALWAYS AS (
  array_to_tsvector(array_remove(string_to_array(title_words || ' ' || author_words, ' '), ''))
) STORED;
CREATE INDEX books_by_words ON books USING gin (words);

-- `title`, `author`: text contained anywhere, found through pg_trgm. The extension is created
-- once per database, outside the service's schema, so that dropping one schema never takes it
-- from another. Where it is not installed and cannot be (a managed server without it, a role that
-- may not create it), the migration goes on without these indexes: the filters still work,
-- reading every book, until pg_trgm is installed and the indexes are created by hand (see
-- docs/postgresql.md).
DO $$
DECLARE
  trgm name;
BEGIN
  SELECT extnamespace::regnamespace::name INTO trgm FROM pg_extension WHERE extname = 'pg_trgm';
  IF trgm IS NULL THEN
    BEGIN
      CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
    EXCEPTION WHEN OTHERS THEN
      RAISE NOTICE 'pg_trgm is not available (%): title and author filters will read every book', SQLERRM;
    END;
    SELECT extnamespace::regnamespace::name INTO trgm FROM pg_extension WHERE extname = 'pg_trgm';
  END IF;
  IF trgm IS NOT NULL THEN
    EXECUTE format('CREATE INDEX books_title_trigrams ON books USING gin (title_folded %I.gin_trgm_ops)', trgm);
    EXECUTE format('CREATE INDEX books_author_trigrams ON books USING gin (author_folded %I.gin_trgm_ops)', trgm);
  END IF;
END
$$;

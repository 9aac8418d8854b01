-- `q` asks for words that begin so: `the:*` makes the GIN index gather every word that begins
-- with "the" (there, theory, theodore and the rest) into one list before it can meet the other
-- words of the query. For half the books of a catalogue that list is most of them, and two-word
-- queries with a short, common word took 25 to 50 ms at a million books. Each word of three
-- characters or more now also stands for its first three, marked with a "~" that no word holds,
-- so that a query word of three characters is one exact lexeme (src/store/postgres-find.ts),
-- whose list the index skips through. Shorter beginnings would make the books table a quarter
-- larger again, and every find that reads books slower.
CREATE FUNCTION book_lexemes(words text) RETURNS tsvector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (
  SELECT array_to_tsvector(coalesce(array_agg(lexeme), '{}'))
  FROM unnest(string_to_array(words, ' ')) AS word,
    LATERAL (VALUES (word), (CASE WHEN length(word) >= 3 THEN left(word, 3) || '~' END)) AS l (lexeme)
  WHERE word <> '' AND lexeme IS NOT NULL
);

DROP INDEX books_by_words;
ALTER TABLE books DROP COLUMN words;
ALTER TABLE books ADD COLUMN words tsvector GENERATED ALWAYS AS (book_lexemes(title_words || ' ' || author_words)) STORED;
CREATE INDEX books_by_words ON books USING gin (words);

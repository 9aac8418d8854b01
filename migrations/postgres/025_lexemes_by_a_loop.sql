-- book_lexemes() (migration 011) as a loop over the words. The generated column `words` calls it
-- for every book written, and its SQL body's subquery ran there as a plan of its own per book,
-- which PostgreSQL cannot fold into the statement that writes: 1.9 to 2.6 s of the server's CPU
-- per 100,000 books. The loop gives the same lexemes in 0.7 to 1.0 s, so the books already
-- stored keep theirs as they are (docs/performance-log.md, "Lexemes by a loop").
CREATE OR REPLACE FUNCTION book_lexemes(words text) RETURNS tsvector
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
  lexemes text[] := '{}';
  word text;
BEGIN
  FOREACH word IN ARRAY string_to_array(words, ' ') LOOP
    CONTINUE WHEN word = '';
    lexemes := lexemes || word;
    IF length(word) >= 3 THEN
      lexemes := lexemes || (left(word, 3) || '~');
    END IF;
  END LOOP;
  RETURN array_to_tsvector(lexemes);
END
$$;

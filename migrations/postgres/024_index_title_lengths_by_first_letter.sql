-- A walk through the top tier of relevance (migration 022) read the titles of every first letter
-- in order of length, to keep those that begin with the query's words. The tier of a word whose
-- titles are long came late in that order: the first title that begins with "a" was the 186,000th
-- by length among a million, beyond the walk's bound, and `q=a` scored every match instead. Here
-- the titles come by first letter, then by length, so that a walk reads only those that begin with
-- the query's first letter. The rest is as in migration 022.
DROP INDEX books_by_title_length;
CREATE INDEX books_by_first_letter_and_title_length
  ON books (substr(title_words, 1, 1), least(length(title_words), 511), id, title_words)
  WHERE octet_length(title_words) <= 2000;

-- What finding books needs beside each book, written by the service with every write (see
-- src/books/folding.ts): the title and author with case and accents folded away, for "contains"
-- and for sorting, and their words, for search. Folding happens in the service so that both
-- engines hold the same strings; the service fills these columns for the books already stored
-- right after this migration, in the same transaction (src/store/postgres/search-keys.ts).
-- "C" compares bytes, as SQLite does: both engines sort the folded text the same way.
ALTER TABLE books
  ADD COLUMN title_folded text COLLATE "C",
  ADD COLUMN author_folded text COLLATE "C",
  ADD COLUMN title_words text,
  ADD COLUMN author_words text;

-- Deleted books leave the search indexes in bulk, as new books enter them (migration 012). An FTS5
-- 'delete' of each book, written out at its own commit, was most of the work of a DELETE; a book
-- taken out with 499 others by one statement costs about a tenth of that (docs/performance.md).
--
-- A deleted book that the indexes hold waits here, with the keys they hold it by, until the
-- service takes it out of them (src/store/sqlite/search-index.ts). Meanwhile the indexes still
-- name its id, which no indexed book has: finds read the indexed books through them (`indexed =
-- 1`), and a count through the word index alone subtracts the books waiting here. A restored book
-- comes back into the tail, and joins the indexes only once its old entries are out of them.
CREATE TABLE books_leaving_indexes (
  id INTEGER PRIMARY KEY,
  title_folded TEXT NOT NULL,
  author_folded TEXT NOT NULL,
  title_words TEXT NOT NULL,
  author_words TEXT NOT NULL
) STRICT;

DROP TRIGGER books_search_delete;
CREATE TRIGGER books_search_delete AFTER DELETE ON books WHEN old.indexed = 1 BEGIN
  INSERT INTO books_leaving_indexes (id, title_folded, author_folded, title_words, author_words)
    VALUES (old.id, old.title_folded, old.author_folded, old.title_words, old.author_words);
END;

-- New books enter the search indexes in bulk instead of one by one. FTS5 writes its pending terms
-- out at the end of every statement, so a book that its own INSERT indexed cost about 40 µs of CPU,
-- where one of a thousand indexed by one statement costs about 5.
--
-- Books with an id above `indexed_up_to` are the tail: not yet in books_words or books_text. Finds
-- look through the tail directly (src/store/sqlite/find.ts), so a book is found as soon as it is
-- stored either way. The service moves `indexed_up_to` forward once the tail is long enough
-- (src/store/sqlite/search-index.ts), and the trigger below indexes the books it passes, in the
-- same statement. Ids only grow (AUTOINCREMENT), so a new book always joins the tail.
CREATE TABLE search_index_state (
  id            INTEGER PRIMARY KEY CHECK (id = 1),
  indexed_up_to INTEGER NOT NULL
) STRICT;
-- Every book stored so far was indexed by the trigger that goes now.
INSERT INTO search_index_state (id, indexed_up_to) SELECT 1, coalesce(max(id), 0) FROM books;
DROP TRIGGER books_search_insert;

CREATE TRIGGER books_search_index_tail AFTER UPDATE OF indexed_up_to ON search_index_state
WHEN new.indexed_up_to > old.indexed_up_to BEGIN
  INSERT INTO books_words (rowid, title_words, author_words)
    SELECT id, title_words, author_words FROM books
    WHERE id > old.indexed_up_to AND id <= new.indexed_up_to ORDER BY id;
  INSERT INTO books_text (rowid, title_folded, author_folded)
    SELECT id, title_folded, author_folded FROM books
    WHERE id > old.indexed_up_to AND id <= new.indexed_up_to ORDER BY id;
END;

-- A book in the tail is in neither index: changing or deleting it leaves them alone.
DROP TRIGGER books_search_delete;
DROP TRIGGER books_words_update;
DROP TRIGGER books_text_update;
CREATE TRIGGER books_search_delete AFTER DELETE ON books
WHEN old.id <= (SELECT indexed_up_to FROM search_index_state) BEGIN
  INSERT INTO books_words (books_words, rowid, title_words, author_words)
    VALUES ('delete', old.id, old.title_words, old.author_words);
  INSERT INTO books_text (books_text, rowid, title_folded, author_folded)
    VALUES ('delete', old.id, old.title_folded, old.author_folded);
END;
CREATE TRIGGER books_words_update AFTER UPDATE OF title_words, author_words ON books
WHEN (old.title_words IS NOT new.title_words OR old.author_words IS NOT new.author_words)
  AND old.id <= (SELECT indexed_up_to FROM search_index_state) BEGIN
  INSERT INTO books_words (books_words, rowid, title_words, author_words)
    VALUES ('delete', old.id, old.title_words, old.author_words);
  INSERT INTO books_words (rowid, title_words, author_words) VALUES (new.id, new.title_words, new.author_words);
END;
CREATE TRIGGER books_text_update AFTER UPDATE OF title_folded, author_folded ON books
WHEN (old.title_folded IS NOT new.title_folded OR old.author_folded IS NOT new.author_folded)
  AND old.id <= (SELECT indexed_up_to FROM search_index_state) BEGIN
  INSERT INTO books_text (books_text, rowid, title_folded, author_folded)
    VALUES ('delete', old.id, old.title_folded, old.author_folded);
  INSERT INTO books_text (rowid, title_folded, author_folded) VALUES (new.id, new.title_folded, new.author_folded);
END;

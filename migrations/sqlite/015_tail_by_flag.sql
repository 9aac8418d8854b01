-- The tail of books that the search indexes do not hold yet is every book whose `indexed` is NULL,
-- whatever its id: migration 012 assumed ids only grow, and took the books above a mark instead. A
-- book stored again with an id below the mark (restored from the trash) must join the tail too.
-- The service moves books from the tail into the indexes itself (src/store/sqlite/search-index.ts),
-- a bounded number at a time, so the statements that did it through a mark and its triggers go.
CREATE INDEX books_tail ON books (id) WHERE indexed IS NULL;

DROP TRIGGER books_search_index_tail;
DROP TRIGGER books_sort_index_tail;
DROP TABLE search_index_state;

-- A book in the tail is in neither search index: changing or deleting it leaves them alone.
DROP TRIGGER books_search_delete;
DROP TRIGGER books_words_update;
DROP TRIGGER books_text_update;
CREATE TRIGGER books_search_delete AFTER DELETE ON books WHEN old.indexed = 1 BEGIN
  INSERT INTO books_words (books_words, rowid, title_words, author_words)
    VALUES ('delete', old.id, old.title_words, old.author_words);
  INSERT INTO books_text (books_text, rowid, title_folded, author_folded)
    VALUES ('delete', old.id, old.title_folded, old.author_folded);
END;
CREATE TRIGGER books_words_update AFTER UPDATE OF title_words, author_words ON books
WHEN (old.title_words IS NOT new.title_words OR old.author_words IS NOT new.author_words) AND old.indexed = 1 BEGIN
  INSERT INTO books_words (books_words, rowid, title_words, author_words)
    VALUES ('delete', old.id, old.title_words, old.author_words);
  INSERT INTO books_words (rowid, title_words, author_words) VALUES (new.id, new.title_words, new.author_words);
END;
CREATE TRIGGER books_text_update AFTER UPDATE OF title_folded, author_folded ON books
WHEN (old.title_folded IS NOT new.title_folded OR old.author_folded IS NOT new.author_folded) AND old.indexed = 1 BEGIN
  INSERT INTO books_text (books_text, rowid, title_folded, author_folded)
    VALUES ('delete', old.id, old.title_folded, old.author_folded);
  INSERT INTO books_text (rowid, title_folded, author_folded) VALUES (new.id, new.title_folded, new.author_folded);
END;

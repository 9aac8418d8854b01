-- What finding books needs beside each book, written by the service with every write (see
-- src/books/folding.ts): the title and author with case and accents folded away, for "contains"
-- and for sorting, and their words, for search. Folding happens in the service so that both
-- engines hold the same strings; book_fold() and book_words() are that code, registered on the
-- connection, so that the books already stored become searchable here.
ALTER TABLE books ADD COLUMN title_folded TEXT NOT NULL DEFAULT '';
ALTER TABLE books ADD COLUMN author_folded TEXT NOT NULL DEFAULT '';
ALTER TABLE books ADD COLUMN title_words TEXT NOT NULL DEFAULT '';
ALTER TABLE books ADD COLUMN author_words TEXT NOT NULL DEFAULT '';
UPDATE books SET
  title_folded = book_fold(title),
  author_folded = book_fold(author),
  title_words = book_words(title),
  author_words = book_words(author);

-- Keyset pages in each sort order; a sort by more fields uses the index of the first.
CREATE INDEX books_by_title ON books (title_folded, id);
CREATE INDEX books_by_author ON books (author_folded, id);
CREATE INDEX books_by_year ON books (year, id);

-- `q`: every word must begin a word of the book. The words are folded and split already, so the
-- ascii tokenizer only splits them at spaces, and the index holds exactly the words that
-- PostgreSQL holds. Prefix indexes make words of one to three letters fast; no positions are
-- needed, as ranking reads the words themselves.
CREATE VIRTUAL TABLE books_words USING fts5(
  title_words, author_words,
  content = 'books', content_rowid = 'id', tokenize = 'ascii', prefix = '1 2 3', detail = 'none'
);
-- `title`, `author`: text contained anywhere, found through trigrams with GLOB (case-sensitive,
-- as the text is folded already); shorter text is checked against every book.
CREATE VIRTUAL TABLE books_text USING fts5(
  title_folded, author_folded,
  content = 'books', content_rowid = 'id', tokenize = 'trigram case_sensitive 1', detail = 'none'
);
INSERT INTO books_words (books_words) VALUES ('rebuild');
INSERT INTO books_text (books_text) VALUES ('rebuild');

-- The indexes change with the books, in the same transaction.
CREATE TRIGGER books_search_insert AFTER INSERT ON books BEGIN
  INSERT INTO books_words (rowid, title_words, author_words) VALUES (new.id, new.title_words, new.author_words);
  INSERT INTO books_text (rowid, title_folded, author_folded) VALUES (new.id, new.title_folded, new.author_folded);
END;
CREATE TRIGGER books_search_delete AFTER DELETE ON books BEGIN
  INSERT INTO books_words (books_words, rowid, title_words, author_words)
    VALUES ('delete', old.id, old.title_words, old.author_words);
  INSERT INTO books_text (books_text, rowid, title_folded, author_folded)
    VALUES ('delete', old.id, old.title_folded, old.author_folded);
END;
CREATE TRIGGER books_words_update AFTER UPDATE OF title_words, author_words ON books
WHEN old.title_words IS NOT new.title_words OR old.author_words IS NOT new.author_words BEGIN
  INSERT INTO books_words (books_words, rowid, title_words, author_words)
    VALUES ('delete', old.id, old.title_words, old.author_words);
  INSERT INTO books_words (rowid, title_words, author_words) VALUES (new.id, new.title_words, new.author_words);
END;
CREATE TRIGGER books_text_update AFTER UPDATE OF title_folded, author_folded ON books
WHEN old.title_folded IS NOT new.title_folded OR old.author_folded IS NOT new.author_folded BEGIN
  INSERT INTO books_text (books_text, rowid, title_folded, author_folded)
    VALUES ('delete', old.id, old.title_folded, old.author_folded);
  INSERT INTO books_text (rowid, title_folded, author_folded) VALUES (new.id, new.title_folded, new.author_folded);
END;

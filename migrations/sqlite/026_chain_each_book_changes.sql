-- A book's history is a chain: each change names the seq of the same book's change before it
-- (`prev`), and the book's row names its newest (`last_change`; a trashed book's is its
-- `deleted_seq`). The index of changes by book, which this replaces, took an update's or a
-- deletion's change into the page of its book, anywhere in the index: one more page written out
-- at each commit, a third of an update's cost (docs/performance.md). The chain is written where
-- the write goes anyway: the book's row, and the end of the log.
ALTER TABLE book_changes ADD COLUMN prev INTEGER;
ALTER TABLE books ADD COLUMN last_change INTEGER;

UPDATE book_changes SET prev = (
  SELECT max(earlier.seq) FROM book_changes AS earlier
  WHERE earlier.book_id = book_changes.book_id AND earlier.seq < book_changes.seq
);
UPDATE books SET last_change = (SELECT max(seq) FROM book_changes WHERE book_id = books.id);

DROP INDEX book_changes_by_book;

-- Every change to a book, in the order the changes committed: `seq` never goes back, and is never
-- given twice (AUTOINCREMENT), even after a purge deletes the newest rows. `at` is milliseconds
-- since the epoch. The values are the book's after the change, with the revision it then had:
-- for `deleted`, as it was; for `purged`, none. A book stored before this table has no change
-- until it changes.
CREATE TABLE book_changes (
  seq      INTEGER PRIMARY KEY AUTOINCREMENT,
  book_id  INTEGER NOT NULL,
  kind     TEXT    NOT NULL CHECK (kind IN ('created', 'updated', 'deleted', 'restored', 'purged')),
  actor    TEXT    NOT NULL,
  at       INTEGER NOT NULL,
  title    TEXT,
  author   TEXT,
  year     INTEGER,
  revision INTEGER
) STRICT;
-- A book's history, newest first.
CREATE INDEX book_changes_by_book ON book_changes (book_id, seq);

-- Deleted books wait here, whole, until they are restored or purged: every list, search, count and
-- export reads `books` alone, so none of them has to leave trashed books out. A restored book goes
-- back to `books` with its id, into the search tail (`indexed` NULL).
CREATE TABLE trashed_books (
  id            INTEGER PRIMARY KEY,
  title         TEXT    NOT NULL,
  author        TEXT    NOT NULL,
  year          INTEGER NOT NULL,
  revision      INTEGER NOT NULL,
  title_folded  TEXT    NOT NULL,
  author_folded TEXT    NOT NULL,
  title_words   TEXT    NOT NULL,
  author_words  TEXT    NOT NULL,
  deleted_at    INTEGER NOT NULL, -- milliseconds since the epoch
  deleted_by    TEXT    NOT NULL,
  deleted_seq   INTEGER NOT NULL UNIQUE -- the seq of its `deleted` change: the trash, latest deletion first
) STRICT;
-- The oldest deletions, which retention purges.
CREATE INDEX trashed_books_by_age ON trashed_books (deleted_at);

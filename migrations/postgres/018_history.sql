-- Every change to a book, numbered in the order the changes committed: a reader that pages by
-- `seq` never misses a change that committed late with a smaller number. A statement that appends
-- changes takes their numbers from `change_seq` as its last step, and the row lock it takes there
-- is held until it commits, so numbers are handed out in commit order (see
-- src/store/postgres/book-writes.ts). `at` is milliseconds since the epoch. The values are the
-- book's after the change, with the revision it then had: for `deleted`, as it was; for `purged`,
-- none. A book stored before this table has no change until it changes.
CREATE TABLE book_changes (
  seq      bigint  PRIMARY KEY,
  book_id  bigint  NOT NULL,
  kind     text    NOT NULL CHECK (kind IN ('created', 'updated', 'deleted', 'restored', 'purged')),
  actor    text    NOT NULL,
  at       bigint  NOT NULL,
  title    text,
  author   text,
  year     integer,
  revision bigint
);
-- A book's history, newest first.
CREATE INDEX book_changes_by_book ON book_changes (book_id, seq);

-- The last number handed out, in a row of its own.
CREATE TABLE change_seq (
  id   integer PRIMARY KEY CHECK (id = 1),
  last bigint  NOT NULL
);
INSERT INTO change_seq (id, last) VALUES (1, 0);

-- Deleted books wait here, whole, until they are restored or purged: every list, search, count and
-- export reads `books` alone, so none of them has to leave trashed books out. A restored book goes
-- back to `books` with its id.
CREATE TABLE trashed_books (
  id            bigint  PRIMARY KEY,
  title         text    NOT NULL,
  author        text    NOT NULL,
  year          integer NOT NULL,
  revision      bigint  NOT NULL,
  title_folded  text    NOT NULL,
  author_folded text    NOT NULL,
  title_words   text    NOT NULL,
  author_words  text    NOT NULL,
  deleted_at    bigint  NOT NULL, -- milliseconds since the epoch
  deleted_by    text    NOT NULL,
  deleted_seq   bigint  NOT NULL UNIQUE -- the seq of its `deleted` change: the trash, latest deletion first
);
-- The oldest deletions, which retention purges.
CREATE INDEX trashed_books_by_age ON trashed_books (deleted_at);

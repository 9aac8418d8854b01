-- AUTOINCREMENT keeps ids from being reused after the newest book is deleted.
CREATE TABLE books (
  id       INTEGER PRIMARY KEY AUTOINCREMENT,
  title    TEXT    NOT NULL CHECK (length(title) BETWEEN 1 AND 500),
  author   TEXT    NOT NULL CHECK (length(author) BETWEEN 1 AND 500),
  year     INTEGER NOT NULL CHECK (year BETWEEN -9999 AND 9999),
  revision INTEGER NOT NULL DEFAULT 1
) STRICT;

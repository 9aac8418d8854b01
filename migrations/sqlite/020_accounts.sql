-- The catalogue's own users. `username_key` is the name folded to lower case: names are unique
-- regardless of case. `stamp` changes with the password or the role, and tokens name it. Times
-- are milliseconds since the epoch.
CREATE TABLE users (
  username_key  TEXT    PRIMARY KEY,
  username      TEXT    NOT NULL,
  role          TEXT    NOT NULL CHECK (role IN ('reader', 'editor', 'admin')),
  password_hash TEXT    NOT NULL,
  created       INTEGER NOT NULL,
  stamp         INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- Keys for programs, kept only as the SHA-256 of the key. The owner is a user or the configured
-- admin, which has no row of its own; its keys go with it.
CREATE TABLE api_keys (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  name      TEXT    NOT NULL,
  role      TEXT    NOT NULL CHECK (role IN ('reader', 'editor', 'admin')),
  owner     TEXT    NOT NULL,
  owner_key TEXT    NOT NULL,
  hash      TEXT    NOT NULL UNIQUE,
  created   INTEGER NOT NULL,
  expires   INTEGER,
  last_used INTEGER
) STRICT;
CREATE INDEX api_keys_by_owner ON api_keys (owner_key);

-- Grows with every change to a user or a key, in the transaction that makes it: each instance
-- reads it a few times a second, and reloads the accounts when it has moved.
CREATE TABLE accounts_version (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  version INTEGER NOT NULL
) STRICT;
INSERT INTO accounts_version (id, version) VALUES (1, 0);

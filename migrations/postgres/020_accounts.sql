-- The catalogue's own users. `username_key` is the name folded to lower case: names are unique
-- regardless of case. `stamp` changes with the password or the role, and tokens name it. Times
-- are milliseconds since the epoch.
CREATE TABLE users (
  username_key  text    PRIMARY KEY,
  username      text    NOT NULL,
  role          text    NOT NULL CHECK (role IN ('reader', 'editor', 'admin')),
  password_hash text    NOT NULL,
  created       bigint  NOT NULL,
  stamp         bigint  NOT NULL
);

-- Keys for programs, kept only as the SHA-256 of the key. The owner is a user or the configured
-- admin, which has no row of its own; its keys go with it.
CREATE TABLE api_keys (
  id        bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name      text    NOT NULL,
  role      text    NOT NULL CHECK (role IN ('reader', 'editor', 'admin')),
  owner     text    NOT NULL,
  owner_key text    NOT NULL,
  hash      text    NOT NULL UNIQUE,
  created   bigint  NOT NULL,
  expires   bigint,
  last_used bigint
);
CREATE INDEX api_keys_by_owner ON api_keys (owner_key);

-- Grows with every change to a user or a key, in the transaction that makes it: each instance
-- reads it a few times a second, and reloads the accounts when it has moved.
CREATE TABLE accounts_version (
  id      integer PRIMARY KEY CHECK (id = 1),
  version bigint  NOT NULL
);
INSERT INTO accounts_version (id, version) VALUES (1, 0);

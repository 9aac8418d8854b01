-- Answers to retried writes (`Idempotency-Key`), here rather than in each process so that a retry
-- that reaches another process or instance finds the first answer. A row without a status is a
-- request still running, held until `locked_until`; a finished row is kept for 24 hours.
CREATE TABLE idempotency_keys (
  scope        TEXT    NOT NULL, -- the route the key was sent to
  key          TEXT    NOT NULL,
  fingerprint  TEXT,             -- a hash of the request body, once known
  status       INTEGER,          -- the answer's status, once the request has finished
  headers      TEXT,             -- the answer's headers that a replay repeats, as JSON
  body         TEXT,             -- the answer's body
  created_at   INTEGER NOT NULL, -- milliseconds since the epoch
  locked_until INTEGER NOT NULL, -- milliseconds since the epoch
  PRIMARY KEY (scope, key)
) STRICT;
-- "Every key older than 24 hours", for the purge.
CREATE INDEX idempotency_keys_by_time ON idempotency_keys (created_at);

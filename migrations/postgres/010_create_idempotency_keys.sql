-- Answers to retried writes (`Idempotency-Key`), here rather than in each instance so that a
-- retry that reaches another instance finds the first answer. A row without a status is a
-- request still running, held until `locked_until`; a finished row is kept for 24 hours.
CREATE TABLE idempotency_keys (
  scope        text    NOT NULL, -- the route the key was sent to
  key          text    NOT NULL,
  fingerprint  text,             -- a hash of the request body, once known
  status       integer,          -- the answer's status, once the request has finished
  headers      text,             -- the answer's headers that a replay repeats, as JSON
  body         text,             -- the answer's body
  created_at   bigint  NOT NULL, -- milliseconds since the epoch
  locked_until bigint  NOT NULL, -- milliseconds since the epoch
  PRIMARY KEY (scope, key)
);
-- "Every key older than 24 hours", for the purge.
CREATE INDEX idempotency_keys_by_time ON idempotency_keys (created_at);

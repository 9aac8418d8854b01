-- Failed logins, here rather than in each process so that every instance on this database
-- counts the same ones. Rows older than the login window are deleted as new failures arrive.
CREATE TABLE login_failures (
  client_key text   NOT NULL,
  failed_at  bigint NOT NULL -- milliseconds since the epoch
);
-- "The failures of this key since T", newest first.
CREATE INDEX login_failures_by_key ON login_failures (client_key, failed_at);
-- "Every failure older than the window", whatever its key.
CREATE INDEX login_failures_by_time ON login_failures (failed_at);

-- Word to every instance that changes were committed: numbering changes moves `change_seq`, and
-- each move notifies the channel `book_changes` with the schema's name, delivered when (and only
-- if) the transaction commits. Instances listening read the log once per word, so a change made
-- on one reaches the streams of all of them at once (see src/feed/change-source.ts).
CREATE FUNCTION notify_book_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('book_changes', TG_TABLE_SCHEMA);
  RETURN NULL;
END
$$;

CREATE TRIGGER change_seq_notify AFTER UPDATE ON change_seq FOR EACH ROW EXECUTE FUNCTION notify_book_changes();

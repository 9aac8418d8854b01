-- A block's summary names only the text its books hold when it is made: a step replaces it, where
-- it added to it, and the blocks of deleted books wait for a summary again. The text of a book
-- since changed or deleted kept its block among those a find of short text reads, and once such a
-- text named more than 256 blocks, its count read every book (docs/performance.md).
--
-- The summaries find the deletions in the trash, by the seq of their change, after the newest they
-- have seen (`block_deletions_seen`), so that a deletion writes nothing more for them: changes
-- commit in the order of their seq (migration 018), so no deletion below the newest seen is still
-- to come. A book restored meanwhile is back in its block, which it put on the list as it came
-- back. The blocks of books changed or deleted since the change log began are summarised again once.
CREATE INDEX block_grams_by_block ON block_grams (block);

CREATE TABLE block_deletions_seen (
  id  integer PRIMARY KEY CHECK (id = 1),
  seq bigint  NOT NULL
);
INSERT INTO block_deletions_seen VALUES (1, coalesce((SELECT max(deleted_seq) FROM trashed_books), 0));

INSERT INTO blocks_to_summarise
  SELECT DISTINCT book_id >> 10 FROM book_changes WHERE kind IN ('updated', 'deleted')
  ON CONFLICT DO NOTHING;

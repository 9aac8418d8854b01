-- Text of one or two characters is too short for the trigram index: a find for it read every
-- title or author, and a rare pair such as "qx", found in no book or in few, took the whole
-- catalogue to answer. Here the books are taken in blocks of 1,024 ids (id >> 10), and for each
-- block, which characters and pairs of characters its folded titles and authors hold
-- (`block_grams`, field 0 the title, 1 the author). Such a find reads only the blocks that hold its
-- text, and every block still to be summarised (`blocks_to_summarise`).
--
-- The service summarises blocks a few at a time, on its own (src/store/sqlite/block-summaries.ts).
-- A book stored, or whose title or author changes, puts its block back on the list: the block is
-- read whole again until it has been summarised again. A summary may hold the text of books since
-- changed or deleted, which only makes a find read a block for nothing.
CREATE TABLE block_grams (
  field INTEGER NOT NULL,
  gram TEXT NOT NULL,
  block INTEGER NOT NULL,
  PRIMARY KEY (field, gram, block)
) WITHOUT ROWID;

CREATE TABLE blocks_to_summarise (block INTEGER PRIMARY KEY);
INSERT INTO blocks_to_summarise SELECT DISTINCT id >> 10 FROM books;

CREATE TRIGGER books_block_stored AFTER INSERT ON books BEGIN
  INSERT OR IGNORE INTO blocks_to_summarise VALUES (new.id >> 10);
END;
CREATE TRIGGER books_block_changed AFTER UPDATE OF title_folded, author_folded ON books
WHEN old.title_folded IS NOT new.title_folded OR old.author_folded IS NOT new.author_folded BEGIN
  INSERT OR IGNORE INTO blocks_to_summarise VALUES (new.id >> 10);
END;

-- Text of one or two characters is too short for the trigram indexes: a find for it read every
-- title or author, and a rare pair such as "qx", found in no book or in few, took the whole
-- catalogue to answer. Here the books are taken in blocks of 1,024 ids (id >> 10), and for each
-- block, which characters and pairs of characters its folded titles and authors hold
-- (`block_grams`, field 0 the title, 1 the author). Such a find reads only the blocks that hold its
-- text, and every block still to be summarised (`blocks_to_summarise`).
--
-- The service summarises blocks a few at a time, on its own (src/store/postgres/block-summaries.ts).
-- A statement that stores books, or changes a title or author, puts their blocks back on the list:
-- each block is read whole again until it has been summarised again. A summary may hold the text
-- of books since changed or deleted, which only makes a find read a block for nothing.
CREATE TABLE block_grams (
  field smallint NOT NULL,
  gram text COLLATE "C" NOT NULL,
  block bigint NOT NULL,
  PRIMARY KEY (field, gram, block)
);

CREATE TABLE blocks_to_summarise (block bigint PRIMARY KEY);
INSERT INTO blocks_to_summarise SELECT DISTINCT id >> 10 FROM books;

-- A summary is made under an exclusive lock on its block, which the writers of the block hold
-- shared until they commit: a block can never be summarised without a book that a transaction
-- still open stored or changed in it, and then taken off the list after that transaction put it
-- back on. The locks are the database's: their keys name the schema, as the migrations' lock does.
CREATE FUNCTION book_blocks_to_summarise() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(hashtextextended('book-catalogue blocks ' || current_schema(), block))
    FROM (SELECT DISTINCT id >> 10 AS block FROM changed_books ORDER BY 1) AS blocks;
  INSERT INTO blocks_to_summarise SELECT DISTINCT id >> 10 FROM changed_books ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;

CREATE TRIGGER books_blocks_stored AFTER INSERT ON books
  REFERENCING NEW TABLE AS changed_books
  FOR EACH STATEMENT EXECUTE FUNCTION book_blocks_to_summarise();

CREATE FUNCTION book_blocks_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(hashtextextended('book-catalogue blocks ' || current_schema(), new.id >> 10));
  INSERT INTO blocks_to_summarise VALUES (new.id >> 10) ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;

CREATE TRIGGER books_block_changed AFTER UPDATE OF title_folded, author_folded ON books
  FOR EACH ROW WHEN (old.title_folded IS DISTINCT FROM new.title_folded OR old.author_folded IS DISTINCT FROM new.author_folded)
  EXECUTE FUNCTION book_blocks_changed();

-- `q` orders books by relevance (src/store/sql/find.ts), whose top tier, the books whose title
-- begins with every word of the query, whole, is ordered by the title's length and then by id.
-- For a common word that tier is a third of the books, and the first page of a million took
-- scoring all 808,000 matches. A walk along this index reads the tier in its order and stops after
-- a page; it holds the title's words, so that the walk reads the books of the tier alone. least()
-- is the relevance's own, so that a find can use the index.
--
-- A key of a B-tree takes at most 2,704 bytes: the index leaves out the rare book whose title's
-- words take more than 2,000 (a title holds up to 500 characters, which fold and split into more),
-- and the second index finds those books, so that a walk knows when it would miss one. The words
-- are a key column, not an INCLUDE one: with INCLUDE, PostgreSQL 15 reads each book of a walk
-- through this partial index from the table.
CREATE INDEX books_by_title_length ON books (least(length(title_words), 511), id, title_words)
  WHERE octet_length(title_words) <= 2000;
CREATE INDEX books_long_title_words ON books (id) WHERE octet_length(title_words) > 2000;

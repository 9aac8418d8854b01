-- `q` orders books by relevance (src/store/sql/find.ts), whose top tier, the books whose title
-- begins with every word of the query, whole, is ordered by the title's length and then by id.
-- For a common word that tier is a third of the books, and the first page of a million took
-- scoring all 808,000 matches. A walk along this index reads the tier in its order and stops after
-- a page; it holds the title's words, so that the walk reads the books of the tier alone. It holds
-- the indexed books, as the other sort-key indexes do (migration 013), so that a new book enters it
-- with them, in bulk. min() is the relevance's own, so that a find can use the index.
CREATE INDEX books_by_title_length ON books (min(length(title_words), 511), id, title_words) WHERE indexed = 1;

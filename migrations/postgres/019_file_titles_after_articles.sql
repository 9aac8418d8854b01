-- `sort=title` files a leading English article after the rest of the title, as library catalogues
-- and Calibre do: "The Hobbit" sorts as "hobbit, the", under H. The article counts when it starts
-- the folded title and a space follows it; the spaces after it go, and a title that is nothing
-- else is filed as it is. The key is computed from the folded title, in the index and in the
-- finds that sort by it (src/store/postgres/find.ts), so every write that stores a title keeps
-- it without knowing of it. Its collation is the folded title's, "C", as SQLite compares.
-- Its index takes the place of `books_by_title`, which only the sort read: an import finds the
-- books that a row repeats through it too (src/store/postgres/store.ts), as equal folded titles
-- have equal filing titles. Not STRICT: PostgreSQL writes the body of a function that is not
-- into each expression that calls it, where a call of the function itself took 5 µs a book.
CREATE FUNCTION book_filing_title(folded text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
  WHEN substr(folded, 1, 4) = 'the ' AND ltrim(substr(folded, 5), ' ') <> '' THEN ltrim(substr(folded, 5), ' ') || ', the'
  WHEN substr(folded, 1, 3) = 'an ' AND ltrim(substr(folded, 4), ' ') <> '' THEN ltrim(substr(folded, 4), ' ') || ', an'
  WHEN substr(folded, 1, 2) = 'a ' AND ltrim(substr(folded, 3), ' ') <> '' THEN ltrim(substr(folded, 3), ' ') || ', a'
  ELSE folded
END;

CREATE INDEX books_by_filing_title ON books (book_filing_title(title_folded), id);
DROP INDEX books_by_title;

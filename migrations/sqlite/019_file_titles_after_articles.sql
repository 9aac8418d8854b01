-- `sort=title` files a leading English article after the rest of the title, as library catalogues
-- and Calibre do: "The Hobbit" sorts as "hobbit, the", under H. The article counts when it starts
-- the folded title and a space follows it; the spaces after it go, and a title that is nothing
-- else is filed as it is. SQLite computes the key from the folded title itself, so every write
-- that stores a title (a new book, a change, an import, a book back from the trash) keeps it
-- without knowing of it. VIRTUAL, it takes no room in the rows, only in its index, which holds the
-- indexed books as the other sort-key indexes do (migration 013). `books_by_title` stays: the
-- finds of short text in titles read it, and imports look up their duplicates through it.
ALTER TABLE books ADD COLUMN title_filing TEXT GENERATED ALWAYS AS (
  CASE
    WHEN substr(title_folded, 1, 4) = 'the ' AND ltrim(substr(title_folded, 5), ' ') <> ''
      THEN ltrim(substr(title_folded, 5), ' ') || ', the'
    WHEN substr(title_folded, 1, 3) = 'an ' AND ltrim(substr(title_folded, 4), ' ') <> ''
      THEN ltrim(substr(title_folded, 4), ' ') || ', an'
    WHEN substr(title_folded, 1, 2) = 'a ' AND ltrim(substr(title_folded, 3), ' ') <> ''
      THEN ltrim(substr(title_folded, 3), ' ') || ', a'
    ELSE title_folded
  END
) VIRTUAL;
CREATE INDEX books_by_filing_title ON books (title_filing, id) WHERE indexed = 1;

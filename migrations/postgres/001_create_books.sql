-- An identity never hands out a number twice, so ids are not reused after the newest book is
-- deleted; its ceiling of 2^53 - 1 keeps every id exact as a JSON number.
CREATE TABLE books (
  id       bigint  GENERATED ALWAYS AS IDENTITY (MAXVALUE 9007199254740991) PRIMARY KEY,
  title    text    NOT NULL CHECK (char_length(title) BETWEEN 1 AND 500),
  author   text    NOT NULL CHECK (char_length(author) BETWEEN 1 AND 500),
  year     integer NOT NULL CHECK (year BETWEEN -9999 AND 9999),
  revision bigint  NOT NULL DEFAULT 1
);

import type { FindDialect } from './find-sql.ts'

/** LIKE's wildcards and its escape character as plain characters. */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`)
}

/** A tsquery lexeme, quoted, so that nothing in it is query syntax. */
function lexeme(word: string): string {
  return `'${word.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`
}

/**
 * Finding books in PostgreSQL: words through the GIN index of the `words` tsvector (prefix
 * queries), contained text through the pg_trgm indexes of the folded title and author.
 */
export const postgresFind: FindDialect = {
  placeholder: (n) => `$${n}`,
  wordsMatch: (words) => ({
    condition: (value) => `words @@ ${value}::tsquery`,
    value: words.map((word) => `${lexeme(word)}:*`).join(' & '),
  }),
  contains: (column, needle, add) => `${column} LIKE ${add(`%${likeLiteral(needle)}%`)}`,
  position: (haystack, needle) => `strpos(${haystack}, ${needle})`,
  least: (a, b) => `least(${a}, ${b})`,
}

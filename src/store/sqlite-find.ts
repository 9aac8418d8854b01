import type { FindDialect } from './find-sql.ts'

/** Trigrams need three characters; shorter text is looked for in every book. */
const TRIGRAM = 3

/** GLOB's wildcards as plain characters. */
function globLiteral(text: string): string {
  return text.replace(/[*?[]/g, (char) => `[${char}]`)
}

/**
 * Finding books in SQLite: words through the FTS5 table `books_words` (prefix queries, each word
 * a quoted string, so nothing in it is query syntax), contained text through the trigram table
 * `books_text`.
 */
export const sqliteFind: FindDialect = {
  placeholder: (n) => `?${n}`,
  wordsMatch: (words) => ({
    condition: (value) => `id IN (SELECT rowid FROM books_words WHERE books_words MATCH ${value})`,
    value: words.map((word) => `"${word.replaceAll('"', '""')}"*`).join(' AND '),
  }),
  contains: (column, needle, add) =>
    [...needle].length < TRIGRAM
      ? `instr(${column}, ${add(needle)}) > 0`
      : `id IN (SELECT rowid FROM books_text WHERE ${column} GLOB ${add(`*${globLiteral(needle)}*`)})`,
  position: (haystack, needle) => `instr(${haystack}, ${needle})`,
  least: (a, b) => `min(${a}, ${b})`,
}

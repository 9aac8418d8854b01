import type { DatabaseSync, SQLInputValue, SQLOutputValue, StatementSync } from 'node:sqlite'
import type { FindQuery, FoundBooks } from '../books/find-query.ts'
import { countStatement, findStatement, foundBooks, type FindDialect, type FoundRow, type Statement } from './find-sql.ts'

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
  // A unary plus keeps SQLite from choosing the year index.
  yearBesideOrder: '+year',
}

/** Statements per shape of query, prepared once; the shapes are few, but bounded all the same. */
const PREPARED_SHAPES = 256

/** Runs finds on one connection, preparing each shape of statement once; rows come as arrays (see FoundRow). */
export function sqliteFinder(db: DatabaseSync): (query: FindQuery) => FoundBooks {
  const prepared = new Map<string, StatementSync>()
  const run = ({ text, values }: Statement) => {
    let statement = prepared.get(text)
    if (statement === undefined) {
      if (prepared.size >= PREPARED_SHAPES) prepared.clear()
      statement = db.prepare(text)
      statement.setReturnArrays(true)
      prepared.set(text, statement)
    }
    // The typings know only object rows.
    return statement.all(...(values as SQLInputValue[])) as unknown as SQLOutputValue[][]
  }
  return (query) => {
    const found = foundBooks(run(findStatement(query, sqliteFind)) as FoundRow[])
    if (!query.count) return { found }
    return { found, total: run(countStatement(query.filter, sqliteFind))[0]![0] as number }
  }
}

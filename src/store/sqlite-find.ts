import type { DatabaseSync, SQLInputValue, SQLOutputValue, StatementSync } from 'node:sqlite'
import type { FindQuery, FoundBooks } from '../books/find-query.ts'
import { countStatement, findStatement, foundBooks, type FindDialect, type FoundRow, type Statement } from './find-sql.ts'

/** Trigrams need three characters; shorter text is looked for in every book. */
const TRIGRAM = 3

/** GLOB's wildcards as plain characters. */
function globLiteral(text: string): string {
  return text.replace(/[*?[]/g, (char) => `[${char}]`)
}

/** The books not yet in the search indexes (see migration 012): few, so each is checked directly. */
const TAIL = 'SELECT id FROM books WHERE id > (SELECT indexed_up_to FROM search_index_state)'

/**
 * Finding books in SQLite: words through the FTS5 table `books_words` (prefix queries, each word
 * a quoted string, so nothing in it is query syntax), contained text through the trigram table
 * `books_text`, and both by reading the books of the tail, which those tables do not hold yet.
 */
export const sqliteFind: FindDialect = {
  placeholder: (n) => `?${n}`,
  wordsMatch: (words, add) => {
    const match = add(words.map((word) => `"${word.replaceAll('"', '""')}"*`).join(' AND '))
    // The words columns hold words separated by single spaces: " word" is where a word begins.
    const starts = words.map((word) => `instr(' ' || title_words || ' ' || author_words, ${add(` ${word}`)}) > 0`)
    return `id IN (SELECT rowid FROM books_words WHERE books_words MATCH ${match} UNION ALL ${TAIL} AND ${starts.join(' AND ')})`
  },
  contains: (column, needle, add) => {
    if ([...needle].length < TRIGRAM) return `instr(${column}, ${add(needle)}) > 0`
    const pattern = add(`*${globLiteral(needle)}*`)
    return `id IN (SELECT rowid FROM books_text WHERE ${column} GLOB ${pattern} UNION ALL ${TAIL} AND ${column} GLOB ${pattern})`
  },
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

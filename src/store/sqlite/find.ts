import type { DatabaseSync, SQLInputValue, SQLOutputValue, StatementSync } from 'node:sqlite'
import type { BookFilter, FindQuery, Position } from '../../books/find.ts'
import {
  counting,
  findStatement,
  planning,
  ranksMany,
  WALKED,
  type BookSource,
  type FindDialect,
  type FindPlanning,
  type FoundRow,
  type IdRange,
  type Statement,
} from '../sql/find.ts'
import { isGram } from '../sql/block-grams.ts'

/** An FTS5 string: nothing in it is query syntax. */
const ftsString = (text: string) => `"${text.replaceAll('"', '""')}"`

/** The FTS5 query "every word begins a word". */
const wordsQuery = (words: string[]) => words.map((word) => `${ftsString(word)}*`).join(' AND ')

/** Each distinct run of three characters in `text`. */
function trigrams(text: string): string[] {
  const chars = [...text]
  return [...new Set(chars.slice(2).map((_, i) => chars.slice(i, i + 3).join('')))]
}

/** The condition "`needle` is contained in `column`", checked on each book. */
const contained: BookSource['contains'] = (column, needle, add) => `instr(${column}, ${add(needle)}) > 0`

/** The condition "every word begins a word" on the words columns, which hold words separated by single spaces. */
const holdsWords = (words: string[], add: (value: unknown) => string) =>
  words.map((word) => `instr(' ' || title_words || ' ' || author_words, ${add(` ${word}`)}) > 0`).join(' AND ')

/**
 * Finding books in SQLite reads two parts (see migrations 012 and 013). The indexed books are found
 * through the indexes: words through the FTS5 table `books_words` (prefix queries, each word a
 * quoted string, so nothing in it is query syntax), contained text through the trigram table
 * `books_text`, and sorted pages through the sort-key indexes, which hold only these books. The
 * tail of new books that no index holds yet is short, so each of its books is checked directly.
 */
const indexed: BookSource = {
  where: 'indexed = 1',
  // FTS5 starts and stops at the ids of a part: otherwise every part would read every match's id.
  wordsMatch: (words, add, { afterId, upToId }) => {
    const match = add(wordsQuery(words))
    const after = afterId === undefined ? '' : ` AND rowid > ${add(afterId)}`
    const upTo = upToId === undefined ? '' : ` AND rowid <= ${add(upToId)}`
    return `id IN (SELECT rowid FROM books_words WHERE books_words MATCH ${match}${after}${upTo})`
  },
  contains: (column, needle, add) => {
    const found = contained(column, needle, add)
    if (isGram(needle)) return found
    // The books that hold every trigram of the needle, in either column, hold all that hold the
    // needle; instr then keeps those that hold it in this column. A GLOB on the trigram table
    // would check each candidate itself, reading every book twice.
    const match = add(trigrams(needle).map(ftsString).join(' AND '))
    return `id IN (SELECT rowid FROM books_text WHERE books_text MATCH ${match}) AND ${found}`
  },
  // The word index holds the indexed books and the deleted ones that have yet to leave it (migration
  // 025), a few thousand at most: it counts the first without reading one, less those of the
  // second that hold the words, each checked as a book of the tail is.
  countWords: (words, add) =>
    `((SELECT count(*) FROM books_words WHERE books_words MATCH ${add(wordsQuery(words))})
      - (SELECT count(*) FROM books_leaving_indexes WHERE ${holdsWords(words, add)}))`,
}

const tail: BookSource = {
  where: 'indexed IS NULL',
  wordsMatch: holdsWords,
  contains: contained,
}

export const sqliteFind: FindDialect = {
  placeholder: (n) => `?${n}`,
  sources: [indexed, tail],
  position: (haystack, needle) => `instr(${haystack}, ${needle})`,
  least: (a, b) => `min(${a}, ${b})`,
  checked: tail,
  // For a plan only: the few deleted books that have yet to leave the index do not change it.
  countedMatches: (words, add, atMost) =>
    `(SELECT count(*) FROM (SELECT 1 FROM books_words WHERE books_words MATCH ${add(wordsQuery(words))} LIMIT ${add(atMost)}))`,
  // Text too short for the trigram index is looked for in every indexed book: the index of its own
  // column holds it for each, in a fraction of the pages of the books, and the partial indexes
  // otherwise tempt SQLite to read every book through one of them, in random order.
  matchesFrom: ({ titleContains, authorContains }) => {
    const short = (needle: string | undefined) => needle !== undefined && isGram(needle)
    if (short(authorContains)) return 'books INDEXED BY books_by_author'
    if (short(titleContains)) return 'books INDEXED BY books_by_title'
    return 'books NOT INDEXED'
  },
  // A unary plus keeps SQLite from choosing the year index.
  // SQLite never merges a subquery that has a LIMIT into a query with a WHERE clause.
  fence: 'LIMIT -1',
  // Merged into the query around it, a whole walk is that query's own walk along the index of its
  // order, in each part of the union; fenced, SQLite sorted the walk's books again, every one of a
  // common word's half a million before the first reached the client.
  fenceWholeWalk: false,
  // A generated column (migration 019), read by the walks that order by it.
  walked: `${WALKED}, title_filing`,
  filingTitle: 'title_filing',
  yearBesideOrder: '+year',
  // CROSS JOIN keeps the order written: the blocks first, then each one's books by their ids.
  // NOT INDEXED leaves those ids as the only way in: SQLite would otherwise build an index of
  // every indexed book for the join, reading them all.
  blockBooks: (first, end) => `CROSS JOIN books NOT INDEXED ON books.id >= ${first} AND books.id < ${end}`,
  // SQLite cannot be interrupted from outside a statement: one book in 1,024 asks the reader whether
  // the find still has time (see reader-core.ts), and the statement fails from inside when it has not.
  guard: '(id % 1024 <> 0 OR book_in_time())',
}

/** The seq of the newest change, which SQLite never hands out twice (AUTOINCREMENT), or 0. */
export const NEWEST_SEQ = "coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'book_changes'), 0)"

/** A statement of NEWEST_SEQ. */
export const NEWEST_CHANGE = `SELECT ${NEWEST_SEQ} AS seq`

/** Statements per shape of query, prepared once; the shapes are few, but bounded all the same. */
const PREPARED_SHAPES = 256

/** Finds books on one connection, preparing each shape of statement once; rows come as arrays (see FoundRow). */
export class SqliteFinder {
  readonly #db: DatabaseSync
  readonly #prepared = new Map<string, StatementSync>()

  constructor(db: DatabaseSync) {
    this.#db = db
  }

  #statement(text: string): StatementSync {
    let statement = this.#prepared.get(text)
    if (statement === undefined) {
      if (this.#prepared.size >= PREPARED_SHAPES) this.#prepared.clear()
      statement = this.#db.prepare(text)
      statement.setReturnArrays(true)
      this.#prepared.set(text, statement)
    }
    return statement
  }

  /** The page `query` asks for. */
  page(query: FindQuery): FoundRow[] {
    return this.#page(query, this.#plan(query))
  }

  /**
   * The page `query` asks for; or, when that page would rank many matches (see ranksMany) and may be
   * read in `parts` parts, the ranges of ids to read it in instead, each about as many ids.
   */
  pageOrParts(query: FindQuery, parts: number): { rows: FoundRow[] } | { parts: IdRange[] } {
    const plan = this.#plan(query)
    if (parts < 2 || !this.#drive(ranksMany(query, sqliteFind, plan))) return { rows: this.#page(query, plan) }
    const newest = this.#first({ text: 'SELECT coalesce(max(id), 0) FROM books', values: [] })
    const bounds = Array.from({ length: parts - 1 }, (_, i) => Math.floor((newest * (i + 1)) / parts))
    return { parts: [undefined, ...bounds].map((afterId, i) => ({ afterId, upToId: bounds[i] })) }
  }

  #page(query: FindQuery, plan: FindPlanning): FoundRow[] {
    const { text, values } = findStatement(query, sqliteFind, plan)
    // The typings know only object rows.
    return this.#statement(text).all(...(values as SQLInputValue[])) as unknown as FoundRow[]
  }

  /**
   * The page of `query`, ordered by id alone (see walksIds), as the JSON text of its books, which
   * SQLite writes as JSON.stringify does, with how many it holds and the id of the last: a third
   * of the cost of handing each book over and writing it out here.
   */
  idsJson(query: FindQuery): { json: string; size: number; last: Position | undefined } {
    const { text, values } = findStatement(query, sqliteFind, this.#plan(query))
    const last = !query.order.relevance && query.order.keys[0]!.descending ? 'min' : 'max'
    // The subquery has a LIMIT: SQLite does not merge it into the aggregate, which takes its books in order.
    const statement = this.#statement(`SELECT json_group_array(json_object('id', id, 'title', title, 'author', author, 'year', year)),
      count(*), ${last}(id) FROM (${text})`)
    const [json, size, id] = (statement.all(...(values as SQLInputValue[])) as unknown as [string, number, number | null][])[0]!
    return { json, size, last: id === null ? undefined : [id] }
  }

  /**
   * Every book of `query` after its position, read as the caller asks for them, of which the
   * caller's first step takes `firstPage`. By relevance, when a walk through the top tier finds that
   * page, it is read as a page is and the rest after it: the walk finds a page of a common word's
   * matches in milliseconds, where the whole order ranks every match before its first book.
   */
  *rows(query: FindQuery, firstPage: number): Generator<FoundRow, void, undefined> {
    let rest = query
    if (query.order.relevance) {
      const first = { ...query, limit: firstPage }
      const plan = this.#plan(first)
      if (plan.plan === 'walk') {
        // The walk found a whole page (see planning): the books after it may be none.
        const page = this.#page(first, plan)
        yield* page
        rest = { ...query, after: page.at(-1)!.slice(4) }
      }
    }
    const { text, values } = findStatement(rest, sqliteFind, { whole: true, ...this.#plan(rest, true) })
    const rows = this.#statement(text).iterate(...(values as SQLInputValue[])) as unknown as IterableIterator<FoundRow>
    try {
      yield* rows
    } finally {
      // A statement stopped part way, out of time, cannot run again until its iterator is closed,
      // and the connection keeps it prepared for its next read of the same shape.
      rows.return?.()
    }
  }

  /** How to read the books of `query` (see planning). */
  #plan(query: FindQuery, whole = false): FindPlanning {
    return this.#drive(planning(query, sqliteFind, { whole }))
  }

  /** Runs the statements of a planning or counting in turn, and gives what it ends with. */
  #drive<T>(steps: Generator<Statement, T, number>): T {
    let step = steps.next()
    while (step.done !== true) step = steps.next(this.#first(step.value))
    return step.value
  }

  /** The first value of the first row of a statement. */
  #first({ text, values }: Statement): number {
    return (this.#statement(text).all(...(values as SQLInputValue[])) as unknown as SQLOutputValue[][])[0]![0] as number
  }

  /** The seq of the newest change (NEWEST_CHANGE). */
  newestChange(): number {
    return this.#first({ text: NEWEST_CHANGE, values: [] })
  }

  /** How many books match `filter`. */
  count(filter: BookFilter): number {
    return this.#first(this.#drive(counting(filter, sqliteFind)))
  }
}

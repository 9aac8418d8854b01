import { collect, WALKED, type BookSource, type FindDialect, type Statement } from '../sql/find.ts'
import { INDEXED_BEGINNING } from './lexemes.ts'

/** LIKE's wildcards and its escape character as plain characters. */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`)
}

/** A tsquery lexeme, quoted, so that nothing in it is query syntax. */
function lexeme(word: string): string {
  return `'${word.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`
}

/** The tsquery term for "a word begins with `word`": one of the indexed length is looked up whole. */
function beginning(word: string): string {
  return [...word].length === INDEXED_BEGINNING ? lexeme(`${word}~`) : `${lexeme(word)}:*`
}

/**
 * Finding books in PostgreSQL: words through the GIN index of the `words` tsvector (prefix
 * queries), contained text through the pg_trgm indexes of the folded title and author.
 */
/** The longest words of a title that the index of title lengths holds, in bytes (migrations 022 and 024). */
const INDEXED_TITLE_BYTES = 2000

const wordsMatch: BookSource['wordsMatch'] = (words, add) => `words @@ ${add(words.map(beginning).join(' & '))}::tsquery`

/**
 * The share of the books above which a find ranks their matches faster by reading the whole table
 * than through the index of words: at a million books, a page by relevance of words that 4.7 % of
 * the books hold took 120 ms through the index and 150 read whole, of 6 %, 178 and 159 ms, of 10 %,
 * 214 and 189 ms (docs/performance-log.md).
 */
const DENSE_SHARE = 0.055

/** Of the table's pages, the share read to estimate how many books hold some words: about 200 at a million books. */
const SAMPLED_PERCENT = 0.5

/**
 * Whether `words` are held by more than DENSE_SHARE of the books, as a sample of the table's pages
 * says (always the same pages while the table is unchanged), as `dense`; false for an empty sample.
 */
export function denseStatement(words: string[]): Statement {
  const { values, add } = collect(postgresFind)
  const share = `avg((${wordsMatch(words, add, {})})::int)`
  return {
    text: `SELECT coalesce(${share} > ${DENSE_SHARE}, false) AS dense FROM books TABLESAMPLE SYSTEM (${SAMPLED_PERCENT}) REPEATABLE (0)`,
    values,
  }
}

export const postgresFind: FindDialect = {
  placeholder: (n) => `$${n}`,
  sources: [
    {
      wordsMatch,
      contains: (column, needle, add) => `${column} LIKE ${add(`%${likeLiteral(needle)}%`)}`,
    },
  ],
  // The index of title lengths holds the title's words beside each key, and a key of a B-tree
  // takes at most 2,704 bytes: the few books whose words are longer are left out of it. A walk
  // through the index is tried only while there are none. Asked as the first such book by id,
  // which only their partial index answers: as NOT EXISTS, the planner, which has no statistics
  // on the expression, could read the whole table on every find (docs/performance-log.md).
  titleLengths: {
    where: [`octet_length(title_words) <= ${INDEXED_TITLE_BYTES}`],
    complete: [`(SELECT id FROM books WHERE octet_length(title_words) > ${INDEXED_TITLE_BYTES} ORDER BY id LIMIT 1) IS NULL`],
  },
  countedMatches: (words, add, atMost) =>
    `(SELECT count(*) FROM (SELECT 1 FROM books WHERE ${wordsMatch(words, add, {})} LIMIT ${add(atMost)}) AS counted)`,
  position: (haystack, needle) => `strpos(${haystack}, ${needle})`,
  least: (a, b) => `least(${a}, ${b})`,
  // The planner weighs both plans with its statistics.
  // OFFSET 0 is PostgreSQL's way to keep a subquery from being pulled up into the query around it.
  fence: 'OFFSET 0',
  // PostgreSQL keeps the order of a fenced subquery, and its planner, weighing a whole read,
  // could otherwise sort every match instead of walking the index of their order.
  fenceWholeWalk: true,
  walked: `${WALKED}, words`,
  // The expression of the index books_by_filing_title (migration 019).
  filingTitle: 'book_filing_title(title_folded)',
  yearBesideOrder: 'year',
  // A subquery per block, fenced: PostgreSQL would otherwise walk an index of the order across
  // every book, checking each against the blocks, or read them all for a hash join.
  blockBooks: (first, end) => `CROSS JOIN LATERAL (SELECT * FROM books WHERE id >= ${first} AND id < ${end} OFFSET 0) AS books`,
}

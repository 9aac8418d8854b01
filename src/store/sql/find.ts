import { totalOrder, type BookFilter, type FindQuery, type FoundBook, type Position, type SortField } from '../../books/find.ts'
import { BLOCK_BITS, candidateBlocks, shortTexts } from './block-grams.ts'

/**
 * One part of the books that a find reads with a SELECT of its own, and how that part is searched.
 * The parts of an engine never share a book, and together hold every book.
 */
export interface BookSource {
  /** The condition that picks this part's books, if the part is not every book. */
  where?: string
  /**
   * The condition "every word begins a word of the book", with values added through `add`; an
   * engine whose index of words can start and stop at ids may read only those of `ids`, which the
   * condition on the books' ids checks as well.
   */
  wordsMatch(words: string[], add: (value: unknown) => string, ids: IdRange): string
  /** The condition "`needle` is contained in `column`", with values added through `add`. */
  contains(column: 'title_folded' | 'author_folded', needle: string, add: (value: unknown) => string): string
  /** How many of this part's books hold every word, counted faster than from the books themselves. */
  countWords?(words: string[], add: (value: unknown) => string): string
}

/** What differs between the engines when books are found; the rest of the SQL is shared. */
export interface FindDialect {
  /** The placeholder of the nth value, from 1. */
  placeholder(n: number): string
  /** The parts the books are read from; with several, their pages are merged in order. */
  sources: BookSource[]
  /** The position of `needle` in `haystack`, from 1; 0 when it is absent. */
  position(haystack: string, needle: string): string
  /** The smaller of two integers. */
  least(a: string, b: string): string
  /**
   * `year` as a condition may use it while the books come in the order of another index: the
   * years then only filter the walk along that index, which stops after one page. SQLite would
   * otherwise take every book in the range from the year index and sort them all.
   */
  yearBesideOrder: string
  /**
   * A condition checked first on every book a find reads, where the engine cannot stop a
   * statement from outside: it fails the statement once the find has run out of time.
   */
  guard?: string
  /**
   * What keeps a subquery from being merged into the query around it, so that what it computes
   * for each book (the relevance) is computed once, not again in every condition on it.
   */
  fence: string
  /**
   * Whether the walk of a whole read is fenced as well. Its books come in the order of the index it
   * walks, and the query around it orders them the same way: the engine must see that, or it sorts
   * every match before it gives the first.
   */
  fenceWholeWalk: boolean
  /** What a walk or a matches-first read reads of each book: the four members, and what the filter and order look at. */
  walked: string
  /** The key `sort=title` orders by: the folded title with a leading article filed after the rest (migration 019). */
  filingTitle: string
  /** How many books of the first source hold every word, counted up to `atMost` and no further. */
  countedMatches(words: string[], add: (value: unknown) => string, atMost: number): string
  /**
   * What a walk through the index of title lengths (migrations 022 and 024) adds to its conditions, to read
   * that index when it holds only some books; and the condition that every book the walk cannot
   * see is out of the top tier of relevance.
   */
  titleLengths?: { where: string[]; complete: string[] }
  /** Where a matches-first read of the first source reads from, when the planner would choose worse. */
  matchesFrom?(filter: BookFilter): string
  /**
   * What joins the blocks a short text may be in, `blocks` (see narrowed), to `books` with ids
   * from `first` up to `end`: it must read each block's books by that range of ids, in the order
   * the blocks come, whatever the planner thinks of the other conditions.
   */
  blockBooks(first: string, end: string): string
  /**
   * How a walk checks each book it reads, where a source's own conditions would first gather every
   * match through an index (all of them, for a common word), which is what a walk avoids.
   */
  checked?: Pick<BookSource, 'wordsMatch' | 'contains'>
}

/**
 * How a find reads its books. `index`: as the engine's planner chooses. `walk`: along the index of
 * its order, checking each book, which stops after a page when matches are dense; by relevance,
 * along the index of title lengths through the top tier (see tierOf). `matches`: every match
 * first, through the filter's own indexes or a scan, then sorted, which is quick when matches are
 * few. A query sorted by a key its filter cannot narrow, or by relevance in the top tier, is probed
 * first (probeStatement) to choose: the planner cannot tell how many books hold a word or some text.
 */
export type FindPlan = 'index' | 'walk' | 'matches'

/**
 * A plan, and whether the first source's books are read only from the blocks that may hold the
 * filter's short text (migration 023): worth it when those are a fraction of the blocks. By
 * relevance, how many books of the first source hold the words, up to TIER_COUNTED, when the
 * planning counted them.
 */
export interface FindPlanning {
  plan: FindPlan
  narrow: boolean
  counted?: number
}

/** The ids a part of a find reads (see ranksMany). */
export type IdRange = Pick<BookFilter, 'afterId' | 'upToId'>

/** Whether `filter` holds words and nothing else. */
function wordsAlone(filter: BookFilter): boolean {
  return Object.entries(filter).every(([name, value]) => name === 'words' || value === undefined)
}

/** Blocks few enough that reading their books whole costs less than a probe (about 0.3 ms each). */
const FEW_BLOCKS = 32

/** Blocks beyond which reading them by ranges of ids costs about as much as reading every book. */
const NARROWED_MOST = 256

/** How many blocks may hold the filter's short text, as `blocks`; undefined when it has none. */
function blocksStatement(filter: BookFilter, dialect: FindDialect): Statement | undefined {
  const texts = shortTexts(filter)
  if (texts.length === 0) return undefined
  const { values, add } = collect(dialect)
  return { text: `SELECT count(*) AS blocks FROM (${candidateBlocks(texts, add)}) AS candidates`, values }
}

/** Books a walk reads before it gives up on finding a page: matches rarer than a page in these are few. */
export const WALK_LENGTH = 20_000

/**
 * Index entries a walk through the top tier reads at most before it gives up, and the relevance
 * order scores every match instead. The tier of a common word is dense overall (a third of a
 * million generated titles begin with "the") but not always among the shortest titles of its
 * first letter, which come first: of a million generated titles, the first that begins with "a"
 * is the 7,617th of those that begin with the letter. The walk reads the index alone (migrations
 * 022 and 024), a microsecond or so per entry.
 */
const TIER_WALK = 50_000

/**
 * A walk through the top tier reads at most this many index entries per book that matches, as
 * counted up to TIER_COUNTED: a rare word's matches are scored faster than a long walk finds too
 * few of them, and counting stops early for a common one.
 */
const TIER_WALK_PER_MATCH = 25
const TIER_COUNTED = TIER_WALK / TIER_WALK_PER_MATCH

/**
 * The top tier of the relevance order of `words` (see relevance): every word begins a word of the
 * title, the title begins with them as a phrase, and every word is whole. Its books outrank all
 * others, and among them the order is shorter title first, then id: the order of an index on the
 * title's length, which a walk reads from the start, or from a position inside the tier. Only
 * for words alone: other conditions would thin the tier out.
 */
function tierOf(query: FindQuery): { words: string[]; floor: number; after?: Position } | undefined {
  const { filter, order, after } = query
  const words = filter.words
  if (!order.relevance || words === undefined || words.length === 0) return undefined
  if (!wordsAlone(filter)) return undefined
  const floor = ((words.length * 256 + 255) * 128 + words.length) * 512
  if (after === undefined) return { words, floor }
  const [score, id] = after as [number, number]
  return score >= floor ? { words, floor, after: [floor + 511 - score, id] } : undefined
}

/** Whether a query's plan depends on how dense its matches are: a sort its filter's indexes cannot give, or relevance in the top tier. */
function needsProbe(query: FindQuery, { whole = false }: { whole?: boolean } = {}): boolean {
  const { filter, order } = query
  // Every book of a whole answer is scored anyway.
  if (order.relevance) return !whole && tierOf(query) !== undefined
  return filter.words !== undefined || filter.titleContains !== undefined || filter.authorContains !== undefined
}

/**
 * Whether the words of `query` match few enough books, `counted` (countStatement with `upTo`), that
 * scoring them all costs less than a walk through the top tier: its probe is then left out.
 */
function fewMatches(query: FindQuery, counted: number): boolean {
  return TIER_WALK_PER_MATCH * counted < query.limit
}

/** The plan for `query` once its probe found `found` books (see probeStatement). */
function planFrom(query: FindQuery, found: number): FindPlan {
  if (found >= query.limit) return 'walk'
  return query.order.relevance ? 'index' : 'matches'
}

/**
 * How to read the books of `query`: the statements to run on the way, each answered with the
 * first value of its first row, then the planning. Each engine runs them its own way, in turn.
 */
export function* planning(query: FindQuery, dialect: FindDialect, { whole = false } = {}): Generator<Statement, FindPlanning, number> {
  if (!needsProbe(query, { whole })) return { plan: 'index', narrow: false }
  let counted: number | undefined
  if (query.order.relevance) {
    counted = yield countStatement(query.filter, dialect, { upTo: true })
    if (fewMatches(query, counted)) return { plan: 'index', narrow: false, counted }
  }
  const held = blocksStatement(query.filter, dialect)
  const blocks = held === undefined ? undefined : yield held
  if (blocks !== undefined && blocks <= FEW_BLOCKS) return { plan: 'matches', narrow: true }
  const found = yield probeStatement(query, dialect, counted)
  return { plan: planFrom(query, found), narrow: blocks !== undefined && blocks <= NARROWED_MOST, counted }
}

/**
 * Whether a page of `query`, planned as `planned`, ranks at least TIER_COUNTED books by relevance,
 * each of them read from the table. Enough that on SQLite ranking them in parts by ranges of ids,
 * each part's best page merged with the others', answers sooner where the parts run at once: each
 * part ranks only its own books, and nothing else of the find's cost is read twice. Enough that
 * on PostgreSQL such a page and its count, which read the same pages of the table, run beside each
 * other in one process each, and that such a page without its count may read the whole table
 * (see denseStatement). The statements to run on the way, as for planning.
 */
export function* ranksMany(query: FindQuery, dialect: FindDialect, planned: FindPlanning): Generator<Statement, boolean, number> {
  if (!query.order.relevance || planned.plan !== 'index' || !wordsAlone(query.filter)) return false
  const counted = planned.counted ?? (yield countStatement(query.filter, dialect, { upTo: true }))
  return counted >= TIER_COUNTED
}

/** How to count the books of `filter`: the statements to run on the way, as for planning, then the count's. */
export function* counting(filter: BookFilter, dialect: FindDialect): Generator<Statement, Statement, number> {
  const held = blocksStatement(filter, dialect)
  const blocks = held === undefined ? undefined : yield held
  return countStatement(filter, dialect, { narrow: blocks !== undefined && blocks <= NARROWED_MOST })
}

/** A statement and its values. */
export interface Statement {
  text: string
  values: unknown[]
}

/** What each sort field orders by. */
function sortKey(field: SortField, dialect: FindDialect): string {
  return { id: 'id', title: dialect.filingTitle, author: 'author_folded', year: 'year' }[field]
}

/**
 * A row of `findStatement` as an array: the book's id, title, author and year, then the values of
 * its position. Arrays, because node:sqlite builds each object row through the V8 API, which
 * leaves tens of megabytes of old-generation garbage behind a million books; arrays leave none.
 */
export type FoundRow = [id: number, title: string, author: string, year: number, ...position: (string | number)[]]

/** The values of a statement being written, and how to add one: its placeholder in the text. */
export function collect(dialect: FindDialect) {
  const values: unknown[] = []
  return {
    values,
    add: (value: unknown): string => {
      values.push(value)
      return dialect.placeholder(values.length)
    },
  }
}

/** What picks a source's books, the guard first. */
function sourceConditions(dialect: FindDialect, source: BookSource): string[] {
  return [dialect.guard, source.where].filter((condition) => condition !== undefined)
}

function conditions(
  filter: BookFilter,
  dialect: FindDialect,
  source: BookSource,
  add: (value: unknown) => string,
  year = 'year',
): string[] {
  return [...sourceConditions(dialect, source), ...filterConditions(filter, source, add, year)]
}

/** The filter's conditions, without the source's own. */
function filterConditions(filter: BookFilter, source: BookSource, add: (value: unknown) => string, year = 'year'): string[] {
  const where: string[] = []
  if (filter.words !== undefined && filter.words.length > 0) where.push(source.wordsMatch(filter.words, add, filter))
  for (const [column, needle] of [
    ['title_folded', filter.titleContains],
    ['author_folded', filter.authorContains],
  ] as const) {
    if (needle === undefined) continue
    // No stored text holds a NUL, and PostgreSQL refuses one even as a value.
    where.push(needle.includes('\u0000') ? '1 = 0' : source.contains(column, needle, add))
  }
  if (filter.yearFrom !== undefined) where.push(`${year} >= ${add(filter.yearFrom)}`)
  if (filter.yearTo !== undefined) where.push(`${year} <= ${add(filter.yearTo)}`)
  if (filter.afterId !== undefined) where.push(`id > ${add(filter.afterId)}`)
  if (filter.upToId !== undefined) where.push(`id <= ${add(filter.upToId)}`)
  return where
}

/**
 * How well a book matches the words, as one integer, higher first. In turn: how many words begin
 * a word of the title (a title hit outranks an author-only hit); how early the title holds the
 * words as a phrase, in order (closer); how many are whole words rather than beginnings (fuller);
 * shorter titles first (the words cover more of it). Each part is bounded so that it never
 * reaches the one above it, and the whole stays below 2^31: at most 100 words fit in `q`.
 * Both engines compute it from the same strings, so they rank alike.
 */
function relevance(words: string[], dialect: FindDialect, add: (value: unknown) => string): string {
  if (words.length === 0) return '0'
  const title = `' ' || title_words`
  const everything = `' ' || title_words || ' ' || author_words || ' '`
  const count = (haystack: string, needles: string[]) =>
    needles.map((needle) => `(CASE WHEN ${dialect.position(haystack, add(needle))} > 0 THEN 1 ELSE 0 END)`).join(' + ')
  const inTitle = count(
    title,
    words.map((word) => ` ${word}`),
  )
  const at = dialect.position(title, add(` ${words.join(' ')}`))
  const phrase = `(CASE WHEN ${at} > 0 THEN 256 - ${dialect.least(at, '255')} ELSE 0 END)`
  const whole = count(
    everything,
    words.map((word) => ` ${word} `),
  )
  return `(((${inTitle}) * 256 + ${phrase}) * 128 + ${whole}) * 512 + 511 - ${dialect.least('length(title_words)', '511')}`
}

interface Key {
  expression: string
  descending: boolean
}

/** "After `position` in this order", as a condition; the first key's bound lets an index range help. */
function keyset(keys: Key[], position: Position, add: (value: unknown) => string): string {
  const values = position.map((value) => add(value))
  const alternatives = keys.map((key, i) => {
    const equal = keys.slice(0, i).map((earlier, j) => `${earlier.expression} = ${values[j]}`)
    return [...equal, `${key.expression} ${key.descending ? '<' : '>'} ${values[i]}`].join(' AND ')
  })
  const first = keys[0]!
  return `${first.expression} ${first.descending ? '<=' : '>='} ${values[0]} AND (${alternatives.map((a) => `(${a})`).join(' OR ')})`
}

const whereClause = (where: string[]) => (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '')

/** The keys of a query's order, ties going by id. */
function keysOf(query: FindQuery, dialect: FindDialect, add: (value: unknown) => string): Key[] {
  return query.order.relevance
    ? [
        { expression: relevance(query.filter.words ?? [], dialect, add), descending: true },
        { expression: 'id', descending: false },
      ]
    : totalOrder(query.order.keys).map((key) => ({ expression: sortKey(key.field, dialect), descending: key.descending }))
}

const orderBy = (keys: Key[], name: (key: Key, i: number) => string) =>
  keys.map((key, i) => `${name(key, i)}${key.descending ? ' DESC' : ''}`).join(', ')

/** The columns that every engine's walks read, to which a dialect adds its own. */
export const WALKED = 'id, title, author, year, title_folded, author_folded, title_words, author_words'

/**
 * The books of the top tier (see tierOf) among the first `walkLength` books of `source` whose
 * title begins with the first letter of the words, by title length, from the tier's position, up
 * to `query.limit` of them, as `id` and `k0` (their relevance, the expression `score`). The walk
 * reads the index books_by_first_letter_and_title_length alone (migration 024), which holds each
 * title's words: only the books whose title begins with the words are read, for their author's
 * words. A book of the tier has every word at the beginning of a word of its title, so it matches
 * the query.
 */
function tierWalk(
  query: FindQuery,
  tier: NonNullable<ReturnType<typeof tierOf>>,
  dialect: FindDialect,
  source: BookSource,
  add: (value: unknown) => string,
  { score, walkLength }: { score: string; walkLength: string },
): string {
  // The expressions of the index, the length being the one the relevance ends with.
  const length = dialect.least('length(title_words)', '511')
  const keys = [
    { expression: length, descending: false },
    { expression: 'id', descending: false },
  ]
  const after = tier.after === undefined ? [] : [keyset(keys, tier.after, add)]
  const firstLetter = `substr(title_words, 1, 1) = ${add(String.fromCodePoint(tier.words[0]!.codePointAt(0)!))}`
  const where = [...sourceConditions(dialect, source), ...(dialect.titleLengths?.where ?? []), firstLetter, ...after]
  const walked = `SELECT id, title_words FROM books${whereClause(where)}
      ORDER BY ${orderBy(keys, (key) => key.expression)} LIMIT ${walkLength}`
  const begins = `${dialect.position("' ' || title_words", add(` ${tier.words.join(' ')}`))} = 1`
  const authors = `SELECT id, title_words, (SELECT author_words FROM books AS book WHERE book.id = walked.id) AS author_words
      FROM (${walked}) AS walked WHERE ${begins} ${dialect.fence}`
  // Nothing between the walk and this LIMIT reorders the books: the first ones of the tier are kept.
  return `SELECT id, ${score} AS k0 FROM (${authors}) AS authors WHERE ${score} >= ${add(tier.floor)} LIMIT ${add(query.limit)}`
}

/** The books of the blocks that may hold the short text of `filter` (see FindPlanning). */
function narrowed(filter: BookFilter, dialect: FindDialect, add: (value: unknown) => string): string {
  const blocks = candidateBlocks(shortTexts(filter), add)
  return `(${blocks}) AS blocks ${dialect.blockBooks(`(blocks.block << ${BLOCK_BITS})`, `((blocks.block + 1) << ${BLOCK_BITS})`)}`
}

/**
 * The parts that a find of `query` reads. Ordered by id with no filter but `afterId`, it walks the
 * table's own order, which holds every book whatever part it is in: one SELECT, where merging
 * the parts read each book's part and cost a list of 100 books a third more.
 */
function sourcesOf(query: FindQuery, dialect: FindDialect): BookSource[] {
  if (!walksIds(query) || dialect.sources.length === 1) return dialect.sources
  return [{ ...dialect.sources[0]!, where: undefined }]
}

/**
 * The page of books that `query` asks for, each with the values of its position; with `whole`,
 * every book after its position, however many. With several sources, each SELECT gives its
 * books in the page's order, and SQLite merges them as they come. `plan` says how the first
 * source is read (see FindPlan); the others are short, and read as their planner chooses.
 */
export function findStatement(
  query: FindQuery,
  dialect: FindDialect,
  { whole = false, plan = 'index', narrow = false }: { whole?: boolean } & Partial<FindPlanning> = {},
): Statement {
  const { values, add } = collect(dialect)
  const { order, filter } = query
  // One year holds few books: those are found fastest from the year index, and sorted.
  const besideOrder = !order.relevance && order.keys[0]!.field !== 'year' && filter.yearFrom !== filter.yearTo
  const year = besideOrder ? dialect.yearBesideOrder : 'year'
  const keys = keysOf(query, dialect, add)
  const columns = keys.map((key, i) => `${key.expression} AS k${i}`).join(', ')
  const after = (names: Key[]) => (query.after === undefined ? [] : [keyset(names, query.after, add)])
  // Computed once per book in a fenced subquery, then compared by name, the relevance is no
  // longer computed again for each part of the "after" condition.
  const named = keys.map((key, i) => ({ ...key, expression: `k${i}` }))
  const selects = sourcesOf(query, dialect).map((source, i) => {
    const how = i === 0 ? plan : 'index'
    const tier = how === 'walk' && !whole ? tierOf(query) : undefined
    if (tier !== undefined) {
      const walk = tierWalk(query, tier, dialect, source, add, { score: keys[0]!.expression, walkLength: add(TIER_WALK) })
      return `SELECT books.id, title, author, year, k0, books.id AS k1 FROM (${walk}) AS tier JOIN books ON books.id = tier.id`
    }
    if (how === 'walk') {
      // The keys are computed in the walk, and named: PostgreSQL sees that the walk's order is the
      // query's only through columns of the walk, not through expressions computed again outside it.
      const walked = `SELECT ${dialect.walked}, ${columns} FROM books${whereClause([...sourceConditions(dialect, source), ...after(keys)])}
      ORDER BY ${orderBy(keys, (key) => key.expression)} ${whole ? (dialect.fenceWholeWalk ? dialect.fence : '') : `LIMIT ${add(WALK_LENGTH)}`}`
      const checks = { ...source, ...dialect.checked }
      const found = `SELECT id, title, author, year, ${named.map((key) => key.expression).join(', ')} FROM (${walked}) AS walked${whereClause(filterConditions(filter, checks, add, year))}`
      // A page's matches come in the walk's order, and the walk stops at the page's last: SQLite
      // would otherwise read the whole walk before merging the sources' pages.
      return whole ? found : `SELECT * FROM (${found} LIMIT ${add(query.limit)}) AS page`
    }
    if (how === 'matches') {
      const from = narrow ? narrowed(filter, dialect, add) : (dialect.matchesFrom?.(filter) ?? 'books')
      const matched = `SELECT ${dialect.walked} FROM ${from}${whereClause(conditions(filter, dialect, source, add, year))} ${dialect.fence}`
      return `SELECT id, title, author, year, ${columns} FROM (${matched}) AS matched${whereClause(after(keys))}`
    }
    if (order.relevance && query.after !== undefined) {
      const ranked = `SELECT id, title, author, year, ${columns} FROM books${whereClause(conditions(filter, dialect, source, add, year))} ${dialect.fence}`
      return `SELECT * FROM (${ranked}) AS ranked${whereClause(after(named))}`
    }
    return `SELECT id, title, author, year, ${columns}
    FROM books${whereClause([...conditions(filter, dialect, source, add, year), ...after(keys)])}`
  })
  const text = `${selects.join('\n    UNION ALL ')}
    ORDER BY ${orderBy(named, (key) => key.expression)}${whole ? '' : `\n    LIMIT ${add(query.limit)}`}`
  return { text, values }
}

/**
 * Whether a walk along the index of the query's order finds a page within WALK_LENGTH books of
 * its first source, or by relevance a walk through the top tier within a bound that grows with the
 * words' matches, `counted` (countStatement with `upTo`): `found` is the page's length when it
 * does, fewer otherwise.
 */
function probeStatement(query: FindQuery, dialect: FindDialect, counted?: number): Statement {
  const { values, add } = collect(dialect)
  const source = dialect.sources[0]!
  const tier = tierOf(query)
  if (tier !== undefined) {
    // The walk's bound is a value, not the count itself: SQLite reads a subquery's LIMIT only
    // when it is a value, and would otherwise walk the whole index.
    const walkLength = add(Math.min(TIER_WALK, TIER_WALK_PER_MATCH * (counted ?? 0)))
    const walk = tierWalk(query, tier, dialect, source, add, { score: relevance(tier.words, dialect, add), walkLength })
    const found = `(SELECT count(*) FROM (${walk}) AS tier)`
    const complete = dialect.titleLengths?.complete ?? []
    return {
      text: `SELECT ${complete.length > 0 ? `CASE WHEN ${complete.join(' AND ')} THEN ${found} ELSE 0 END` : found} AS found`,
      values,
    }
  }
  const keys = keysOf(query, dialect, add)
  const after = query.after === undefined ? [] : [keyset(keys, query.after, add)]
  const walked = `SELECT ${dialect.walked} FROM books${whereClause([...sourceConditions(dialect, source), ...after])}
    ORDER BY ${orderBy(keys, (key) => key.expression)} LIMIT ${add(WALK_LENGTH)}`
  const checks = { ...source, ...dialect.checked }
  const matches = `SELECT 1 FROM (${walked}) AS walked${whereClause(filterConditions(query.filter, checks, add))} LIMIT ${add(query.limit)}`
  return { text: `SELECT count(*) AS found FROM (${matches}) AS matches`, values }
}

/**
 * How many books match `filter`, all pages together, as `total`. With `upTo`, how many books of the
 * first source hold the words of a query by relevance, counted up to TIER_COUNTED only, for its
 * probe (see probeStatement).
 */
function countStatement(
  filter: BookFilter,
  dialect: FindDialect,
  { upTo = false, narrow = false }: { upTo?: boolean; narrow?: boolean } = {},
): Statement {
  const { values, add } = collect(dialect)
  if (upTo) return { text: `SELECT ${dialect.countedMatches(filter.words ?? [], add, TIER_COUNTED)} AS total`, values }
  const counts = dialect.sources.map((source, i) =>
    wordsAlone(filter) && filter.words !== undefined && source.countWords !== undefined
      ? source.countWords(filter.words, add)
      : `(SELECT count(*) FROM ${i === 0 && narrow ? narrowed(filter, dialect, add) : 'books'}${whereClause(conditions(filter, dialect, source, add))})`,
  )
  return { text: `SELECT ${counts.join(' + ')} AS total`, values }
}

/**
 * Whether a read of `query` costs at most what its first page does, however large the catalogue:
 * by id, with no filter but `afterId` and no count, a page walks the index of ids from where it
 * starts and stops after the page. So does it in SQLite's tail of books that the search indexes
 * have not taken in yet, which an import leaves long for a while and which has no index of the
 * other orders.
 */
export function boundedByPage(query: FindQuery): boolean {
  return query.count !== true && walksIds(query)
}

/** Whether `query` is ordered by id, with no filter but `afterId`. */
export function walksIds({ filter, order }: FindQuery): boolean {
  return (
    !order.relevance &&
    totalOrder(order.keys)[0]!.field === 'id' &&
    Object.entries(filter).every(([name, value]) => name === 'afterId' || value === undefined)
  )
}

/**
 * The books of the first page that a whole read bounded by its page (boundedByPage) tries where
 * reads by id run, and keeps when it is the last: at a million books, a page of 255 and the book
 * after it take SQLite a quarter of a millisecond or so and PostgreSQL half of one, where a page of
 * 1,000 takes two to four times that.
 */
export const QUICK_FIRST_PAGE = 255

/** The rows of `findStatement` as books with their positions. */
export function foundBooks(rows: FoundRow[]): FoundBook[] {
  return rows.map(([id, title, author, year, ...position]) => ({ book: { id, title, author, year }, position }))
}

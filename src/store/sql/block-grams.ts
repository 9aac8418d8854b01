import type { BookFilter } from '../../books/find.ts'

/**
 * Blocks of books and the characters and pairs of characters their titles and authors hold
 * (migration 023): text too short for the trigram indexes is looked for in the blocks that hold
 * it, and in those not yet summarised, instead of in every book.
 */

/** Ids per block: a block is `id >> BLOCK_BITS`, in the migration's SQL too. */
export const BLOCK_BITS = 10
const BLOCK_SIZE = 2 ** BLOCK_BITS

/**
 * Whether the deletion numbered `seq` (an SQL expression) came after the newest the summaries have
 * noted (migration 028): its block may still be summarised with the deleted book's text.
 */
export const unseenDeletion = (seq: string) => `${seq} > (SELECT seq FROM block_deletions_seen WHERE id = 1)`

/** The folded columns and their field in `block_grams`. */
const GRAM_FIELDS = { title_folded: 0, author_folded: 1 } as const
type GramColumn = keyof typeof GRAM_FIELDS

/** The longest text a block's summary knows: the trigram indexes find anything longer. */
const LONGEST_GRAM = 2

/** Whether `needle` is too short for the trigram indexes, and short enough for the blocks' summaries. */
export function isGram(needle: string): boolean {
  return [...needle].length <= LONGEST_GRAM
}

/**
 * The columns of `filter` that look for text short enough for the summaries, with that text. Text
 * with a NUL is left out: no book holds one (see find.ts), and PostgreSQL refuses it as a value.
 */
export function shortTexts(filter: BookFilter): [GramColumn, string][] {
  const texts: [GramColumn, string][] = []
  for (const [column, text] of [
    ['title_folded', filter.titleContains],
    ['author_folded', filter.authorContains],
  ] as const) {
    if (text !== undefined && isGram(text) && !text.includes('\u0000')) texts.push([column, text])
  }
  return texts
}

/** The first id of `block` and the first after it. */
export function blockIds(block: number): [first: number, end: number] {
  return [block * BLOCK_SIZE, (block + 1) * BLOCK_SIZE]
}

/** Code points: a pair is a number above every one of them, unique to its two. */
const CODE_POINTS = 0x110000

/**
 * The summary of one block: every distinct character and pair of characters of each folded title
 * and author, as the columns `field` and `gram` of its rows. Gathered as numbers, a fifth of the
 * time that strings took: a summary is made on the thread that answers requests.
 */
export function summaryOf(books: Iterable<[titleFolded: string, authorFolded: string]>): { fields: number[]; grams: string[] } {
  const seen = [new Set<number>(), new Set<number>()]
  for (const texts of books) {
    for (let field = 0; field < 2; field++) {
      const text = texts[field]!
      const grams = seen[field]!
      let previous = -1
      for (let i = 0; i < text.length;) {
        const char = text.codePointAt(i)!
        i += char > 0xffff ? 2 : 1
        grams.add(char)
        if (previous >= 0) grams.add((previous + 1) * CODE_POINTS + char)
        previous = char
      }
    }
  }
  const fields: number[] = []
  const grams: string[] = []
  seen.forEach((set, field) => {
    for (const gram of set) {
      fields.push(field)
      grams.push(
        gram < CODE_POINTS ? String.fromCodePoint(gram) : String.fromCodePoint(Math.floor(gram / CODE_POINTS) - 1, gram % CODE_POINTS),
      )
    }
  })
  return { fields, grams }
}

/** What a block's summary `held` names that its new `summary` does not: text of books since changed or deleted. */
export function staleGrams(
  held: Iterable<[field: number, gram: string]>,
  summary: { fields: number[]; grams: string[] },
): [number, string][] {
  const kept = new Set(summary.grams.map((gram, i) => `${summary.fields[i]!}${gram}`))
  return [...held].filter(([field, gram]) => !kept.has(`${field}${gram}`))
}

/**
 * The blocks that may hold a book with every short text of `texts`, as a SELECT of one column,
 * `block`: those whose summary holds each text, and those waiting for a summary.
 */
export function candidateBlocks(texts: [GramColumn, string][], add: (value: unknown) => string): string {
  const holding = ([column, text]: [GramColumn, string]) =>
    `SELECT block FROM block_grams WHERE field = ${GRAM_FIELDS[column]} AND gram = ${add(text)}`
  const [first, ...others] = texts
  const each = others.map((text) => `block IN (${holding(text)} UNION SELECT block FROM blocks_to_summarise)`)
  const union = `SELECT block FROM (${holding(first!)} UNION SELECT block FROM blocks_to_summarise) AS held`
  return each.length === 0 ? union : `${union} WHERE ${each.join(' AND ')}`
}

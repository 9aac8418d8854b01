import { fold, indexWords, queryWords } from '../../src/books/folding.ts'
import type { Book } from '../../src/books/book.ts'

/**
 * What section 9 promises, written plainly over books held in memory: the suites compare every
 * engine's answers with it, so the engines agree with each other as well as with the contract.
 */
export interface ModelQuery {
  q?: string
  title?: string
  author?: string
  year?: number
  yearFrom?: number
  yearTo?: number
}

const chars = (text: string) => [...text].length

export function matches(book: Book, query: ModelQuery): boolean {
  if (query.q !== undefined && query.q.trim() !== '') {
    const words = [...indexWords(fold(book.title)), ...indexWords(fold(book.author))]
    if (!queryWords(query.q).every((word) => words.some((candidate) => candidate.startsWith(word)))) return false
  }
  if (query.title !== undefined && query.title.trim() !== '' && !fold(book.title).includes(fold(query.title))) return false
  if (query.author !== undefined && query.author.trim() !== '' && !fold(book.author).includes(fold(query.author))) return false
  if (query.year !== undefined && book.year !== query.year) return false
  if (query.yearFrom !== undefined && book.year < query.yearFrom) return false
  if (query.yearTo !== undefined && book.year > query.yearTo) return false
  return true
}

/** The relevance of a book to the words of `q`, as src/store/sql/find.ts defines it. */
export function relevance(book: Book, q: string): number {
  const words = queryWords(q)
  if (words.length === 0) return 0
  const titleWords = indexWords(fold(book.title)).join(' ')
  const title = ` ${titleWords}`
  const everything = ` ${titleWords} ${indexWords(fold(book.author)).join(' ')} `
  const inTitle = words.filter((word) => title.includes(` ${word}`)).length
  const index = title.indexOf(` ${words.join(' ')}`)
  const at = index === -1 ? 0 : chars(title.slice(0, index)) + 1
  const phrase = at > 0 ? 256 - Math.min(at, 255) : 0
  const whole = words.filter((word) => everything.includes(` ${word} `)).length
  return ((inTitle * 256 + phrase) * 128 + whole) * 512 + 511 - Math.min(chars(titleWords), 511)
}

/** The ids of the books that match, in the order the service must give them. */
export function expectedIds(books: Book[], query: ModelQuery): number[] {
  const found = books.filter((book) => matches(book, query))
  if (query.q === undefined || query.q.trim() === '') return found.map((book) => book.id).sort((a, b) => a - b)
  const ranks = new Map(found.map((book) => [book.id, relevance(book, query.q!)]))
  return found.map((book) => book.id).sort((a, b) => ranks.get(b)! - ranks.get(a)! || a - b)
}

/** Compares folded text as the engines do: by code point (UTF-8 byte order). */
export function compareFolded(a: string, b: string): number {
  const x = Buffer.from(fold(a))
  const y = Buffer.from(fold(b))
  return Buffer.compare(x, y)
}

/** The folded title as `sort=title` files it: a leading "the", "a" or "an" and a space, after the rest. */
export function filingTitle(title: string): string {
  const folded = fold(title)
  const article = /^(the|an|a) +(?=[^ ])/.exec(folded)
  return article === null ? folded : `${folded.slice(article[0].length)}, ${article[1]}`
}

/** Compares titles as `sort=title` files them, by code point as the engines do. */
export function compareTitles(a: string, b: string): number {
  return Buffer.compare(Buffer.from(filingTitle(a)), Buffer.from(filingTitle(b)))
}

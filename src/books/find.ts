import type { Book } from './book.ts'

export const SORT_FIELDS = ['id', 'title', 'author', 'year'] as const
export type SortField = (typeof SORT_FIELDS)[number]

export interface SortKey {
  field: SortField
  descending: boolean
}

/** Which books match: every condition given must hold. Text arrives folded (see folding.ts). */
export interface BookFilter {
  /** Each must be the beginning of a word of the title or of the author. */
  words?: string[]
  /** Contained anywhere in the folded title, or author. */
  titleContains?: string
  authorContains?: string
  yearFrom?: number
  yearTo?: number
  /** Only ids greater than this. */
  afterId?: number
  /** Only ids up to this one: never asked for by a client, only by a store that reads a find in parts. */
  upToId?: number
}

/**
 * The order of the books: by relevance to `filter.words`, or by the sort keys. Either way ties
 * go by id, ascending, so that the order is total and a page can start after any book.
 */
export type BookOrder = { relevance: true } | { relevance: false; keys: SortKey[] }

/**
 * Where a page starts: the values of the order's keys for the last book of the page before,
 * id last. Books strictly after it in the order come next.
 */
export type Position = (string | number)[]

export interface FindQuery {
  filter: BookFilter
  order: BookOrder
  after?: Position | undefined
  limit: number
  /** Also count every book that matches the filter, all pages together. */
  count?: boolean
}

export interface FoundBook {
  book: Book
  /** Where a page that starts after this book starts. */
  position: Position
}

/** The sort keys with ties broken by id, ascending: keys after an id can never decide. */
export function totalOrder(keys: SortKey[]): SortKey[] {
  const id = keys.findIndex((key) => key.field === 'id')
  return id === -1 ? [...keys, { field: 'id', descending: false }] : keys.slice(0, id + 1)
}

/** The type of each value of a position, in order: what a cursor is checked against. */
export function positionShape(order: BookOrder): ('number' | 'string')[] {
  if (order.relevance) return ['number', 'number']
  return totalOrder(order.keys).map((key) => (key.field === 'title' || key.field === 'author' ? 'string' : 'number'))
}

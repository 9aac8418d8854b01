/** What the person is looking for, as the query of docs/api.md ("Finding books"). */
import type { ExportQuery } from 'book-catalogue-client'

export type SortField = 'title' | 'author' | 'year'

export const SORT_FIELDS: readonly SortField[] = ['title', 'author', 'year']

export interface Sort {
  field: SortField
  descending: boolean
}

export interface FindQuery {
  q: string
  author: string
  yearFrom: string
  yearTo: string
  /** Undefined: the service's default order (relevance while searching, otherwise oldest first). */
  sort: Sort | undefined
}

export const EVERY_BOOK: FindQuery = { q: '', author: '', yearFrom: '', yearTo: '', sort: undefined }

/** The `sort` parameter: `title`, `-title`… */
export function sortParam(sort: Sort): string {
  return `${sort.descending ? '-' : ''}${sort.field}`
}

/** The sort a `sort` parameter names, when it is one column the table sorts by. */
export function parseSort(text: string): Sort | undefined {
  const descending = text.startsWith('-')
  const field = descending ? text.slice(1) : text
  return (SORT_FIELDS as readonly string[]).includes(field) ? { field: field as SortField, descending } : undefined
}

/** The query's parameters, leaving blank ones out, in the order the page's own address writes them. */
export function findParams(query: FindQuery): URLSearchParams {
  const params = new URLSearchParams()
  if (query.q.trim() !== '') params.set('q', query.q)
  if (query.author.trim() !== '') params.set('author', query.author)
  if (query.yearFrom.trim() !== '') params.set('year_from', query.yearFrom.trim())
  if (query.yearTo.trim() !== '') params.set('year_to', query.yearTo.trim())
  if (query.sort) params.set('sort', sortParam(query.sort))
  return params
}

/** True when both ask the service the same thing, whatever blanks around them. */
export function sameQuery(a: FindQuery, b: FindQuery): boolean {
  return findParams(a).toString() === findParams(b).toString()
}

/** The first request for the query's books; the ones after it come from the `Link` header of the one before. */
export function firstPageUrl(query: FindQuery, limit: number): string {
  const params = findParams(query)
  params.set('limit', String(limit))
  params.set('count', 'true')
  return `/books?${params}`
}

/** The query of the CSV export of every book the query finds, in its order (docs/api.md). */
export function exportQuery(query: FindQuery): ExportQuery {
  return { ...Object.fromEntries(findParams(query)), format: 'csv' }
}

/** True when the query narrows the catalogue, so an empty answer means "no match" rather than "no books". */
export function isFiltered(query: FindQuery): boolean {
  return [query.q, query.author, query.yearFrom, query.yearTo].some((value) => value.trim() !== '')
}

/** The order in words, as the summary above the table shows it. */
export function describeOrder(query: FindQuery): string {
  const { sort } = query
  if (sort === undefined) return query.q.trim() === '' ? 'in the order they were added' : 'best matches first'
  if (sort.field === 'year') return sort.descending ? 'by year, newest first' : 'by year, oldest first'
  return `by ${sort.field}, ${sort.descending ? 'Z to A' : 'A to Z'}`
}

/** What the person is looking for, as the query of CONTRACT section 9 ("Finding books"). */

export const PAGE_SIZE = 50

export type SortField = 'title' | 'author' | 'year'

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

function findParams(query: FindQuery): URLSearchParams {
  const params = new URLSearchParams()
  if (query.q.trim() !== '') params.set('q', query.q)
  if (query.author.trim() !== '') params.set('author', query.author)
  if (query.yearFrom.trim() !== '') params.set('year_from', query.yearFrom.trim())
  if (query.yearTo.trim() !== '') params.set('year_to', query.yearTo.trim())
  if (query.sort) params.set('sort', `${query.sort.descending ? '-' : ''}${query.sort.field}`)
  return params
}

/** The first page's address; later pages come from the `Link` header of the one before. */
export function firstPageUrl(query: FindQuery): string {
  const params = findParams(query)
  params.set('limit', String(PAGE_SIZE))
  params.set('count', 'true')
  return `/books?${params}`
}

/** The CSV export of every book the query finds, in its order (CONTRACT section 10). */
export function exportUrl(query: FindQuery): string {
  const params = findParams(query)
  params.set('format', 'csv')
  return `/books/export?${params}`
}

/** True when the query narrows the catalogue, so an empty answer means "no match" rather than "no books". */
export function isFiltered(query: FindQuery): boolean {
  return [query.q, query.author, query.yearFrom, query.yearTo].some((value) => value.trim() !== '')
}

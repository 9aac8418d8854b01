/**
 * The page's own address holds what it shows (`/app/?q=tolkien&sort=-year&page=2`), so that a
 * reload, the back button or a shared link shows the same books. Its parameters are those of
 * the API's "Finding books" where they mean the same, and `page` and `size`.
 */
import { yearProblem } from './book-rules.ts'
import { EVERY_BOOK, findParams, parseSort, type FindQuery } from './find-query.ts'

/** Up to 100: a page of 200 rows took over 50 ms to lay out on a slow machine, and stalled the page meanwhile. */
export const PAGE_SIZES: readonly number[] = [25, 50, 100]
export const DEFAULT_PAGE_SIZE = 50
/** The longest search or filter text the service takes (docs/api.md). */
export const TEXT_MAX_LENGTH = 200

export interface ViewState {
  query: FindQuery
  /** Counted from 1. */
  page: number
  size: number
}

export const FIRST_VIEW: ViewState = { query: EVERY_BOOK, page: 1, size: DEFAULT_PAGE_SIZE }

const SETTINGS = ['q', 'author', 'year_from', 'year_to', 'sort', 'page', 'size']

/** The query string of `state`, without the defaults: `''` for the first page of every book. */
export function writeAddress(state: ViewState): string {
  const params = findParams(state.query)
  if (state.page !== 1) params.set('page', String(state.page))
  if (state.size !== DEFAULT_PAGE_SIZE) params.set('size', String(state.size))
  const text = params.toString()
  return text === '' ? '' : `?${text}`
}

/** A value from the address as the person reads it back, short enough for a sentence. */
function quoted(value: string): string {
  return `“${value.length > 40 ? `${value.slice(0, 40)}…` : value}”`
}

/**
 * The state a query string asks for, and what of it was ignored, in words: an address edited by
 * hand still shows a valid state, and says what it left out.
 */
export function readAddress(search: string): { state: ViewState; ignored: string[] } {
  const params = new URLSearchParams(search)
  const ignored: string[] = []
  const first = (name: string): string => {
    const values = params.getAll(name)
    if (values.length > 1) ignored.push(`${name} given ${values.length} times: only the first was used`)
    return values[0] ?? ''
  }

  for (const name of new Set(params.keys())) {
    if (!SETTINGS.includes(name)) ignored.push(`${quoted(name)}, which is not a setting of this page`)
  }

  const text = (name: string, what: string): string => {
    const raw = first(name)
    if (raw.length <= TEXT_MAX_LENGTH) return raw
    ignored.push(`${what} of over ${TEXT_MAX_LENGTH} characters`)
    return ''
  }
  const q = text('q', 'the search')
  const author = text('author', 'the author filter')

  const year = (name: string): string => {
    const raw = first(name).trim()
    if (raw === '' || yearProblem(raw) === undefined) return raw
    ignored.push(`${name}=${quoted(raw)}: a year is a whole number from -9999 to 9999`)
    return ''
  }
  let yearFrom = year('year_from')
  let yearTo = year('year_to')
  if (yearFrom !== '' && yearTo !== '' && Number(yearFrom) > Number(yearTo)) {
    ignored.push(`year_from=${yearFrom} with year_to=${yearTo}: no year lies in that range`)
    yearFrom = yearTo = ''
  }

  const sortText = first('sort').trim()
  const sort = sortText === '' ? undefined : parseSort(sortText)
  if (sortText !== '' && sort === undefined) ignored.push(`sort=${quoted(sortText)}: the table sorts by title, author or year`)

  const pageText = first('page').trim()
  let page = 1
  if (/^[1-9]\d{0,14}$/.test(pageText)) page = Number(pageText)
  else if (pageText !== '') ignored.push(`page=${quoted(pageText)}: pages are numbered from 1`)

  const sizeText = first('size').trim()
  let size = DEFAULT_PAGE_SIZE
  if (/^\d+$/.test(sizeText) && PAGE_SIZES.includes(Number(sizeText))) size = Number(sizeText)
  else if (sizeText !== '')
    ignored.push(`size=${quoted(sizeText)}: a page holds ${PAGE_SIZES.slice(0, -1).join(', ')} or ${PAGE_SIZES.at(-1)} books`)

  return { state: { query: { q, author, yearFrom, yearTo, sort }, page, size }, ignored }
}

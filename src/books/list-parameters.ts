import { InvalidInput } from './errors.ts'
import { SORT_FIELDS, type BookOrder, type FindQuery, type Position, type SortField, type SortKey } from './find.ts'
import { fold, queryWords } from './folding.ts'

/** The query parameters of `GET /books`, as they arrive: each a single string when present. */
export interface RawBookQuery {
  q?: string | undefined
  title?: string | undefined
  author?: string | undefined
  year?: string | undefined
  year_from?: string | undefined
  year_to?: string | undefined
  sort?: string | undefined
  count?: string | undefined
  limit?: string | undefined
  after?: string | undefined
  cursor?: string | undefined
}

/** A valid query of `GET /books`, with blank text dropped and numbers parsed. */
export interface BookQuery {
  q?: string
  title?: string
  author?: string
  year?: number
  yearFrom?: number
  yearTo?: number
  sort?: SortKey[]
  count: boolean
  limit?: number
  after?: number
  cursor?: string
}

export const MAX_SEARCH_TEXT = 200
export const MAX_LIMIT = 1000

/** Shared with the schema that documents the parameters, so both refuse the same values. */
export const PATTERNS = {
  year: '^(?:0|-?[1-9][0-9]{0,3})$',
  limit: '^(?:[1-9][0-9]{0,2}|1000)$',
  after: '^(?:0|[1-9][0-9]{0,15})$',
  sort: `^-?(?:${SORT_FIELDS.join('|')})(?:,-?(?:${SORT_FIELDS.join('|')}))*$`,
  count: '^(?:true|false)$',
}
const YEAR = new RegExp(PATTERNS.year)
const LIMIT = new RegExp(PATTERNS.limit)
const AFTER = new RegExp(PATTERNS.after)
const SORT_KEY = new RegExp(`^(-?)(${SORT_FIELDS.join('|')})$`)

const invalid = () => new InvalidInput()

function text(value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  // Counted in characters (code points), as the schema counts them.
  if ([...value].length > MAX_SEARCH_TEXT) throw invalid()
  return value.trim() === '' ? undefined : value
}

function integer(value: string | undefined, pattern: RegExp): number | undefined {
  if (value === undefined) return undefined
  if (!pattern.test(value)) throw invalid()
  const number = Number(value)
  if (!Number.isSafeInteger(number)) throw invalid()
  return number
}

function sortKeys(value: string | undefined): SortKey[] | undefined {
  if (value === undefined) return undefined
  const seen = new Set<SortField>()
  return value.split(',').map((item) => {
    const match = SORT_KEY.exec(item)
    if (!match) throw invalid()
    const field = match[2] as SortField
    if (seen.has(field)) throw invalid()
    seen.add(field)
    return { field, descending: match[1] === '-' }
  })
}

/** Checks every rule of the list's parameters; throws 400 `Invalid input` for the first one broken. */
export function parseBookQuery(raw: RawBookQuery): BookQuery {
  if (raw.count !== undefined && raw.count !== 'true' && raw.count !== 'false') throw invalid()
  const query: BookQuery = {
    q: text(raw.q),
    title: text(raw.title),
    author: text(raw.author),
    year: integer(raw.year, YEAR),
    yearFrom: integer(raw.year_from, YEAR),
    yearTo: integer(raw.year_to, YEAR),
    sort: sortKeys(raw.sort),
    count: raw.count === 'true',
    limit: integer(raw.limit, LIMIT),
    after: integer(raw.after, AFTER),
    cursor: raw.cursor,
  }
  for (const key of Object.keys(query) as (keyof BookQuery)[]) if (query[key] === undefined) delete query[key]
  if (query.yearFrom !== undefined && query.yearTo !== undefined && query.yearFrom > query.yearTo) throw invalid()
  if (query.after !== undefined && (query.q !== undefined || !inIdOrder(query.sort))) throw invalid()
  return query
}

/** True when the books come ascending by id: no sort, or one led by `id`. */
function inIdOrder(sort: SortKey[] | undefined): boolean {
  return sort === undefined || (sort[0]!.field === 'id' && !sort[0]!.descending)
}

/**
 * True when the query uses anything beyond `limit` and `after`: without it, the list answers as
 * it always has, with `after` in its `Link`.
 */
export function findsBooks(query: BookQuery): boolean {
  return (
    query.q !== undefined ||
    query.title !== undefined ||
    query.author !== undefined ||
    query.year !== undefined ||
    query.yearFrom !== undefined ||
    query.yearTo !== undefined ||
    query.sort !== undefined ||
    query.count ||
    query.cursor !== undefined
  )
}

/**
 * The query's parameters in one fixed form, without the cursor: what the `next` link carries,
 * and what a cursor is bound to.
 */
export function canonicalQuery(query: BookQuery): string {
  const params = new URLSearchParams()
  const add = (name: string, value: string | number | undefined) => {
    if (value !== undefined) params.append(name, String(value))
  }
  add('q', query.q)
  add('title', query.title)
  add('author', query.author)
  add('year', query.year)
  add('year_from', query.yearFrom)
  add('year_to', query.yearTo)
  add('sort', query.sort?.map((key) => `${key.descending ? '-' : ''}${key.field}`).join(','))
  if (query.count) add('count', 'true')
  add('limit', query.limit)
  add('after', query.after)
  return params.toString()
}

/** What the engines are asked for: text folded, year bounds merged, the order settled. */
export function findQueryOf(query: BookQuery, after: Position | undefined, limit: number): FindQuery {
  const bounds = [query.year, query.yearFrom].filter((year) => year !== undefined)
  const ceilings = [query.year, query.yearTo].filter((year) => year !== undefined)
  const words = query.q === undefined ? undefined : queryWords(query.q)
  return {
    filter: {
      words,
      titleContains: query.title === undefined ? undefined : fold(query.title),
      authorContains: query.author === undefined ? undefined : fold(query.author),
      yearFrom: bounds.length ? Math.max(...bounds) : undefined,
      yearTo: ceilings.length ? Math.min(...ceilings) : undefined,
      afterId: query.after,
    },
    order: orderOf(query),
    after,
    limit,
  }
}

export function orderOf(query: BookQuery): BookOrder {
  if (query.sort !== undefined) return { relevance: false, keys: query.sort }
  if (query.q !== undefined) return { relevance: true }
  return { relevance: false, keys: [{ field: 'id', descending: false }] }
}

/** The commands on books: find, show, add, edit, rm, restore, revert, history, trash and purge. */
import type { BookChanges, FindQuery, NewBook, Paged } from '../../index.ts'
import { BOOK_COLUMNS, CHANGE_COLUMNS, TRASH_COLUMNS } from '../columns.ts'
import type { Context } from '../context.ts'
import { UsageError } from '../exit.ts'
import { count, inOneBatch, printList, printOne, type Column, type Format } from '../output.ts'

/** The most books one page holds. */
const LARGEST_PAGE = 1000

export interface Filters {
  title?: string
  author?: string
  year?: number
  yearFrom?: number
  yearTo?: number
  sort?: string
}

export interface Shown {
  json?: boolean
  csv?: boolean
}

export function formatOf({ json, csv }: Shown): Format {
  return json ? 'json' : csv ? 'csv' : 'table'
}

/** The query of `GET /books` that words and filters make. */
export function queryOf(words: string[], filters: Filters): FindQuery {
  return {
    q: words.length > 0 ? words.join(' ') : undefined,
    title: filters.title,
    author: filters.author,
    year: filters.year,
    year_from: filters.yearFrom,
    year_to: filters.yearTo,
    sort: filters.sort,
  }
}

/** The pages of `list`, cut to the first `limit` items in all. */
async function* firstOf<T>(list: Paged<T>, limit: number | undefined, onPage: (total: number | undefined) => void): AsyncGenerator<T[]> {
  let left = limit ?? Infinity
  for await (const page of list.pages()) {
    onPage(page.total)
    const items = page.items.slice(0, left)
    left -= items.length
    yield items
    if (left <= 0) return
  }
}

/** Prints a list, and on stderr how many it held when that helps. */
async function printPaged<T>(
  context: Context,
  list: Paged<T>,
  columns: Column<T>[],
  shown: Shown,
  limit: number | undefined,
  noun: string,
): Promise<number> {
  let total: number | undefined
  const printed = await printList(
    context.stdout,
    formatOf(shown),
    columns,
    firstOf(list, limit, (pageTotal) => (total ??= pageTotal)),
  )
  if (total !== undefined) context.stderr.write(`${count(printed, noun)} of ${count(total, 'match', 'matches')}\n`)
  else if (printed === 0 && formatOf(shown) === 'table') context.stderr.write(`No ${noun}s\n`)
  return printed
}

export async function find(
  context: Context,
  words: string[],
  options: Filters & Shown & { limit?: number; count?: boolean },
): Promise<void> {
  const { limit } = options
  const books = context
    .signedIn()
    .books.find(
      { ...queryOf(words, options), limit: Math.min(limit ?? LARGEST_PAGE, LARGEST_PAGE), count: options.count ? true : undefined },
      { signal: context.signal },
    )
  await printPaged(context, books, BOOK_COLUMNS, options, limit, 'book')
}

export async function show(context: Context, id: number, options: Shown): Promise<void> {
  await printOne(context.stdout, formatOf(options), BOOK_COLUMNS, (await context.signedIn().books.get(id, { signal: context.signal })).book)
}

export async function add(context: Context, options: NewBook & Shown): Promise<void> {
  const { title, author, year } = options
  await printOne(
    context.stdout,
    formatOf(options),
    BOOK_COLUMNS,
    (await context.signedIn().books.create({ title, author, year }, { signal: context.signal })).book,
  )
}

export async function edit(context: Context, id: number, options: BookChanges & Shown): Promise<void> {
  const changes: BookChanges = {}
  if (options.title !== undefined) changes.title = options.title
  if (options.author !== undefined) changes.author = options.author
  if (options.year !== undefined) changes.year = options.year
  if (Object.keys(changes).length === 0) throw new UsageError('nothing to change: give --title, --author or --year')
  await printOne(
    context.stdout,
    formatOf(options),
    BOOK_COLUMNS,
    (await context.signedIn().books.update(id, changes, { signal: context.signal })).book,
  )
}

export async function rm(context: Context, ids: number[]): Promise<void> {
  const books = context.signedIn().books
  for (const id of ids) {
    await books.delete(id, { signal: context.signal })
    context.stderr.write(`Deleted book ${id}: book-catalogue restore ${id} takes it back\n`)
  }
}

export async function restore(context: Context, ids: number[], options: Shown): Promise<void> {
  const books = context.signedIn().books
  const restored = []
  for (const id of ids) restored.push((await books.restore(id, { signal: context.signal })).book)
  await printList(context.stdout, formatOf(options), BOOK_COLUMNS, inOneBatch(restored))
}

export async function revert(context: Context, id: number, seq: number, options: Shown): Promise<void> {
  await printOne(
    context.stdout,
    formatOf(options),
    BOOK_COLUMNS,
    (await context.signedIn().books.revert(id, seq, { signal: context.signal })).book,
  )
}

export async function history(context: Context, id: number, options: Shown & { limit?: number }): Promise<void> {
  const { limit } = options
  const changes = context.signedIn().books.history(id, { limit: Math.min(limit ?? LARGEST_PAGE, LARGEST_PAGE), signal: context.signal })
  await printPaged(context, changes, CHANGE_COLUMNS, options, limit, 'change')
}

export async function trash(context: Context, options: Shown & { limit?: number }): Promise<void> {
  const { limit } = options
  const books = context.signedIn().books.trash({ limit: Math.min(limit ?? LARGEST_PAGE, LARGEST_PAGE), signal: context.signal })
  await printPaged(context, books, TRASH_COLUMNS, options, limit, 'deleted book')
}

export async function purge(context: Context, ids: number[]): Promise<void> {
  const books = context.signedIn().books
  for (const id of ids) {
    await books.purge(id, { signal: context.signal })
    context.stderr.write(`Purged book ${id} and its history for good\n`)
  }
}

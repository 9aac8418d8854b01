import type { Book } from '../../src/books/book.ts'
import type { FindQuery, FoundBook } from '../../src/books/find.ts'
import type { Store } from '../../src/store/store.ts'

/** The first page of `query`, as one read of the store's reader gives it, with the count when asked. */
export async function findPage(store: Pick<Store, 'reader'>, query: FindQuery): Promise<{ found: FoundBook[]; total?: number }> {
  const pages = await store.reader.pages(query)
  let found: FoundBook[] = []
  for await (const page of pages) found = page
  return pages.total === undefined ? { found } : { found, total: pages.total }
}

/** The ids of every book of `query`, as one whole read gives them, page after page. */
export async function wholeIds(store: Pick<Store, 'reader'>, query: FindQuery): Promise<number[]> {
  const ids: number[] = []
  for await (const page of await store.reader.pages(query, { whole: true })) ids.push(...page.map(({ book }) => book.id))
  return ids
}

/** The books with an id greater than `after`, ascending, at most `limit` of them. */
export async function listById(store: Pick<Store, 'reader'>, after: number, limit: number): Promise<Book[]> {
  const query: FindQuery = { filter: { afterId: after }, order: { relevance: false, keys: [{ field: 'id', descending: false }] }, limit }
  return (await findPage(store, query)).found.map(({ book }) => book)
}

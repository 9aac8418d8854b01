import type { FetchHeaders } from './fetch.ts'

/** Lists the service answers a page at a time, with `Link: <…>; rel="next"` to the page after (docs/api.md#finding-books). */

export interface Page<T> {
  items: T[]
  /** The next page's `Link`, followed as it is; undefined on the last page. */
  next: string | undefined
  /** `X-Total-Count`, when the query asked for it with `count`. */
  total: number | undefined
}

const NEXT = /<([^>]*)>\s*;\s*rel="?next"?/

export function nextLink(header: string | null): string | undefined {
  return header === null ? undefined : NEXT.exec(header)?.[1]
}

export function pageOf<T>(items: T[], headers: FetchHeaders): Page<T> {
  const total = headers.get('x-total-count')
  return { items, next: nextLink(headers.get('link')), total: total === null ? undefined : Number(total) }
}

/**
 * Every item of a list, page after page, read only as far as they are used: `for await (const
 * book of list)`; `list.pages()` gives the pages themselves, with their `next` link and total.
 */
export class Paged<T> implements AsyncIterable<T> {
  readonly #first: () => Promise<Page<T>>
  readonly #follow: (link: string) => Promise<Page<T>>

  constructor(first: () => Promise<Page<T>>, follow: (link: string) => Promise<Page<T>>) {
    this.#first = first
    this.#follow = follow
  }

  /** The first page, or the one at `next`, the link of a page before: for a person who asks for more. */
  page(next?: string): Promise<Page<T>> {
    return next === undefined ? this.#first() : this.#follow(next)
  }

  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    let page = await this.#first()
    yield page
    while (page.next !== undefined) {
      page = await this.#follow(page.next)
      yield page
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.items
  }

  /** Every item, in one array: for lists known to be short. */
  async all(): Promise<T[]> {
    const items: T[] = []
    for await (const item of this) items.push(item)
    return items
  }
}

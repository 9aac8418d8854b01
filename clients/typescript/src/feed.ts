/**
 * The change feed (docs/api.md#following-changes): every change of every book, in the order the
 * changes committed, read a page at a time or followed as it happens.
 */
import { serverSentEvents } from './events.ts'
import { call } from './operations.ts'
import { pageOf, type Page } from './pages.ts'
import type { Transport } from './transport.ts'
import type { Change } from './types.ts'

/** What the feed needs of the client's token: to renew it before a stream, which ends with its token, does. */
export interface StreamCredentials {
  /** When the token that the client renews itself expires; undefined when nothing expires that the client could renew. */
  renewableUntil(): number | undefined
  renew(): Promise<void>
}

export interface FollowOptions {
  /** The changes after this `seq`; `latest` (the default): those from now on. */
  since?: number | 'latest' | undefined
  signal?: AbortSignal | undefined
  /**
   * A reading in the background, such as a page's: a refused token ends it with the `ApiError`
   * rather than calling the client's `onRefused`, which asks a person to sign in again.
   */
  background?: boolean | undefined
}

/** A stream is ended by the service when its token expires: the token is renewed this long before. */
const RENEW_BEFORE_END_MS = 60_000
/** The wait before opening a stream again when the service said none (`retry:`). */
const DEFAULT_RETRY_MS = 1000

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error)
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer)
        reject(signal.reason as Error)
      },
      { once: true },
    )
  })
}

export class Feed {
  readonly #transport: Transport
  readonly #credentials: StreamCredentials

  constructor(transport: Transport, credentials: StreamCredentials) {
    this.#transport = transport
    this.#credentials = credentials
  }

  /**
   * The changes after `since` (a `seq`, `latest`, or the `next` link of a page before), oldest
   * first. `next` is always there: followed now, it reads on; later, what came since.
   */
  async page(
    since: number | string = 0,
    { limit, signal }: { limit?: number | undefined; signal?: AbortSignal | undefined } = {},
  ): Promise<Page<Change>> {
    const { data, headers } =
      typeof since === 'string' && since !== 'latest'
        ? await this.#transport.json<Change[]>({ method: 'GET', path: since, signal })
        : await call(this.#transport, 'get', '/books/changes', { query: { since, limit }, signal })
    return pageOf(data, headers)
  }

  /** The `seq` of the newest change. */
  async latest({ signal }: { signal?: AbortSignal | undefined } = {}): Promise<number> {
    const { next } = await this.page('latest', { signal })
    return Number(new URL(next ?? '', 'http://service').searchParams.get('since') ?? 0)
  }

  /**
   * Every change after `since`, as it commits, until `signal` aborts: `for await (const change of
   * catalogue.changes.follow())`. Streams end when their token expires and when an instance
   * shuts down; the next opens where the last left off (`Last-Event-ID`), with a token renewed
   * in time. A service that cannot be reached after the retries ends it with a `ConnectionError`.
   */
  async *follow({ since = 'latest', signal, background = false }: FollowOptions = {}): AsyncGenerator<Change, void, undefined> {
    // A number, so that a stream opened again misses nothing committed in between.
    let last = since === 'latest' ? await this.latest({ signal }) : since
    for (;;) {
      const renewal = this.#renewBeforeEnd()
      const opened = Date.now()
      let retryMs = 0
      try {
        const response = await this.#transport.send({
          method: 'GET',
          path: '/books/changes',
          headers: { accept: 'text/event-stream', 'last-event-id': String(last) },
          signal,
          background,
        })
        for await (const item of serverSentEvents(response.body ?? new Blob([]).stream())) {
          if (item.retry !== undefined) retryMs = item.retry
          if (item.event?.event !== 'change') continue
          const change = JSON.parse(item.event.data) as Change
          last = change.seq
          yield change
        }
      } catch (err) {
        // A stream cut short is opened again; a request refused, or stopped by the caller, ends it.
        if (signal?.aborted || !(err instanceof TypeError)) throw err
        retryMs ||= DEFAULT_RETRY_MS
      } finally {
        clearTimeout(renewal)
      }
      // A stream that ended at once is not opened again at once: that would be a busy loop.
      if (retryMs === 0 && Date.now() - opened < DEFAULT_RETRY_MS) retryMs = DEFAULT_RETRY_MS
      if (retryMs > 0) await sleep(retryMs, signal)
    }
  }

  /** Renews the client's token a minute before it expires, when the stream would end with it. */
  #renewBeforeEnd(): ReturnType<typeof setTimeout> | undefined {
    const until = this.#credentials.renewableUntil()
    if (until === undefined) return undefined
    return setTimeout(() => void this.#credentials.renew(), Math.max(0, until - RENEW_BEFORE_END_MS - Date.now()))
  }
}

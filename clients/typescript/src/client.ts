import { Keys, Users } from './accounts.ts'
import { Books } from './books.ts'
import { Feed } from './feed.ts'
import type { Fetch } from './fetch.ts'
import type { ApiError } from './errors.ts'
import { call } from './operations.ts'
import { Session, type SessionOptions } from './session.ts'
import { Transport } from './transport.ts'

export interface ClientOptions extends SessionOptions {
  /** The service's address, `http://localhost:8080`. In a page served by the service, leave it out. */
  url?: string | undefined
  /** The fetch to send requests with; the global one by default. */
  fetch?: Fetch | undefined
  /** How many times a request that is safe to repeat is sent again after a lost connection or a 503. Default 3. */
  retries?: number | undefined
  /**
   * The longest wait, in seconds, that a retry after a `503` makes as its `Retry-After` asks; an
   * answer asking for longer is the caller's at once. Default 10.
   */
  longestWaitSeconds?: number | undefined
  /**
   * Hears that the service refused the token or key of a request (`401` other than `Invalid
   * credentials`: it expired, its password or role changed, it was revoked). Resolve true once a
   * new token is in place, by `login` or `currentToken`, and the request is sent once more.
   */
  onRefused?: ((error: ApiError) => Promise<boolean>) | undefined
}

/**
 * A client of the book catalogue service: `new BookCatalogue({ url })`, then `login`, or a `key`
 * in the options; then `books`, `changes`, `users` and `keys`.
 */
export class BookCatalogue {
  readonly books: Books
  readonly users: Users
  readonly keys: Keys
  /** The change feed: `changes.follow()`, `changes.page(since)`. */
  readonly changes: Feed
  readonly #transport: Transport
  readonly #session: Session

  constructor({ url = '', fetch: fetcher, retries = 3, longestWaitSeconds = 10, onRefused, ...session }: ClientOptions = {}) {
    this.#session = new Session(session)
    this.#transport = new Transport({
      url,
      // Called as a method of globalThis: a browser refuses fetch called on anything else.
      fetch: fetcher ?? ((input, init) => fetch(input, init)),
      retries,
      longestWaitSeconds,
      authorization: () => this.#session.authorization((token) => this.#refresh(token)),
      onRefused,
    })
    this.books = new Books(this.#transport)
    this.users = new Users(this.#transport)
    this.keys = new Keys(this.#transport)
    this.changes = new Feed(this.#transport, {
      renewableUntil: () => this.#session.renewableUntil,
      renew: () => this.#session.renew((token) => this.#refresh(token)),
    })
  }

  /** The token requests are sent with, renewed as it goes. */
  get token(): string | undefined {
    return this.#session.token
  }

  /** Gets a token for the name and password, used from then on; `ApiError` 401 `Invalid credentials` when they are wrong. */
  async login(username: string, password: string): Promise<string> {
    const { data } = await call(this.#transport, 'post', '/token', { json: { username, password }, authorization: null })
    this.#session.setToken(data.token)
    return data.token
  }

  /** Renews the token now, rather than when it is about to expire. */
  async refresh(): Promise<string> {
    const token = this.#session.token
    if (token === undefined) throw new Error('There is no token to renew: log in first')
    const fresh = await this.#refresh(token)
    this.#session.setToken(fresh)
    return fresh
  }

  /** Sends `key` instead of a token from then on (docs/api.md#accounts). */
  useKey(key: string | undefined): void {
    this.#session.useKey(key)
  }

  /** Forgets the token. */
  signOut(): void {
    this.#session.setToken(undefined)
  }

  async #refresh(token: string): Promise<string> {
    return (await call(this.#transport, 'post', '/token/refresh', { authorization: token })).data.token
  }
}

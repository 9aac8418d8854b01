/**
 * What the client signs in with: a token from `POST /token`, renewed by `POST /token/refresh`
 * before it expires, or a key, sent as it is and never renewed (docs/api.md#accounts).
 */
import { ApiError } from './errors.ts'

export interface SessionOptions {
  token?: string | undefined
  key?: string | undefined
  /** Hears every new token, from a login or a renewal, and `undefined` on signing out: to keep it, as the command does. */
  onToken?: ((token: string | undefined) => void) | undefined
  /** A token is renewed on the first request within this many seconds of its expiry. Default 300 (tokens last 900). */
  renewWithinSeconds?: number | undefined
  /**
   * The token to send, asked for before each request, for a program that keeps and renews its
   * token itself, as the catalogue page does: the client then renews it only when `refresh` is called.
   */
  currentToken?: (() => string | undefined) | undefined
}

/** A token's `exp` claim in milliseconds, or undefined when it cannot be read. */
export function expiresAt(token: string): number | undefined {
  try {
    const part = token.split('.')[1] ?? ''
    const json = atob(
      part
        .replace(/-/g, '+')
        .replace(/_/g, '/')
        .padEnd(Math.ceil(part.length / 4) * 4, '='),
    )
    const { exp } = JSON.parse(json) as { exp?: unknown }
    return typeof exp === 'number' ? exp * 1000 : undefined
  } catch {
    return undefined
  }
}

export class Session {
  #token: string | undefined
  #key: string | undefined
  readonly #onToken: SessionOptions['onToken']
  readonly #renewWithinMs: number
  #renewing: Promise<void> | undefined
  /** A token the service would not renew: it is used as it is until it expires. */
  #unrenewable: string | undefined
  readonly #currentToken: SessionOptions['currentToken']

  constructor({ token, key, onToken, renewWithinSeconds = 300, currentToken }: SessionOptions) {
    this.#currentToken = currentToken
    this.#token = token
    this.#key = key
    this.#onToken = onToken
    this.#renewWithinMs = renewWithinSeconds * 1000
  }

  get token(): string | undefined {
    return this.#currentToken === undefined ? this.#token : this.#currentToken()
  }

  get key(): string | undefined {
    return this.#key
  }

  setToken(token: string | undefined): void {
    this.#token = token
    this.#onToken?.(token)
  }

  useKey(key: string | undefined): void {
    this.#key = key
  }

  /** When the token that the client renews itself expires; undefined for a key, a token a program keeps, or one the service would not renew. */
  get renewableUntil(): number | undefined {
    if (this.#key !== undefined || this.#currentToken !== undefined) return undefined
    const token = this.#token
    return token === undefined || token === this.#unrenewable ? undefined : expiresAt(token)
  }

  /**
   * The `Authorization` header: the key, or the token, renewed first by `renew` when it expires
   * soon. A renewal that fails leaves the token as it was: the request says what is wrong, not
   * the renewal.
   */
  async authorization(renew: (token: string) => Promise<string>): Promise<string | undefined> {
    if (this.#key !== undefined) return this.#key
    if (this.#currentToken !== undefined) return this.#currentToken()
    const expiry = this.renewableUntil
    if (expiry !== undefined && Date.now() >= expiry - this.#renewWithinMs) await this.renew(renew)
    return this.#token
  }

  /** Renews the token now, unless it has expired or is about to, which could expire on the way. Calls at once share one renewal. */
  async renew(renew: (token: string) => Promise<string>): Promise<void> {
    const token = this.#token
    const expiry = this.renewableUntil
    if (token === undefined || expiry === undefined || Date.now() > expiry - 5_000) return
    this.#renewing ??= renew(token)
      .then((fresh) => {
        if (this.#token === token) this.setToken(fresh)
      })
      .catch((err: unknown) => {
        if (err instanceof ApiError) this.#unrenewable = token
      })
      .finally(() => (this.#renewing = undefined))
    await this.#renewing
  }
}

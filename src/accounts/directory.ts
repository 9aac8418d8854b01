import { apiKeyHash } from '../auth/api-keys.ts'
import { isRole, ROLES, type Principal, type Role } from '../auth/principal.ts'
import type { TokenClaims } from '../auth/tokens.ts'
import type { AccountRepository } from '../store/store.ts'
import { usernameKey, type StoredKey, type StoredUser } from './account.ts'

export interface DirectoryOptions {
  accounts: AccountRepository
  configuredUsername: string
  /** How often the accounts' version is read: a revocation elsewhere takes effect within it. */
  pollMs?: number
  /** How often the times keys were last used are written. */
  touchMs?: number
  onError: (err: unknown) => void
}

function lower(a: Role, b: Role): Role {
  return ROLES.indexOf(a) <= ROLES.indexOf(b) ? a : b
}

/**
 * Every user and key, held in memory so that checking a token or a key costs no store round
 * trip. The accounts' version is read a few times a second, and everything reloaded when it has
 * moved: a user deleted or changed, or a key revoked, on any instance, is refused here within
 * `pollMs` and a reload.
 */
export class AccountDirectory {
  readonly #accounts: AccountRepository
  readonly #configuredKey: string
  readonly #configuredUsername: string
  readonly #pollMs: number
  readonly #touchMs: number
  readonly #onError: (err: unknown) => void
  #version = -1
  #users = new Map<string, StoredUser>()
  #keys = new Map<string, StoredKey>()
  /**
   * What tokens and keys already seen stand for in the accounts as they are now, so that a
   * client's repeated token or key costs a lookup: emptied whenever the accounts are read again.
   * A token's claims are kept as one object by the verified tokens; a key is found by its text,
   * without hashing it again.
   */
  #tokenPrincipals = new WeakMap<TokenClaims, Principal | null>()
  #keysByText = new Map<string, { key: StoredKey; principal: Principal }>()
  /** The last use of each key since the last write of them, in milliseconds. */
  #uses = new Map<number, number>()
  readonly #changeListeners = new Set<() => void>()
  #loading: Promise<void> = Promise.resolve()
  #poll: NodeJS.Timeout | undefined
  #touch: NodeJS.Timeout | undefined

  constructor({ accounts, configuredUsername, pollMs = 200, touchMs = 30_000, onError }: DirectoryOptions) {
    this.#accounts = accounts
    this.#configuredUsername = configuredUsername
    this.#configuredKey = usernameKey(configuredUsername)
    this.#pollMs = pollMs
    this.#touchMs = touchMs
    this.#onError = onError
  }

  async start(): Promise<void> {
    await this.refresh()
    const poll = () => {
      this.refresh()
        .catch(this.#onError)
        .finally(() => {
          if (this.#poll !== undefined) this.#poll = setTimeout(poll, this.#pollMs).unref()
        })
    }
    this.#poll = setTimeout(poll, this.#pollMs).unref()
    this.#touch = setInterval(() => void this.writeUses().catch(this.#onError), this.#touchMs).unref()
  }

  async stop(): Promise<void> {
    clearTimeout(this.#poll)
    this.#poll = undefined
    clearInterval(this.#touch)
    await this.#loading.catch(() => {})
    // Shutting down goes on without them: the times of keys are a minute's worth at most.
    await this.writeUses().catch(this.#onError)
  }

  /** Reloads the accounts when their version has moved; one load at a time, each after the last. */
  refresh(): Promise<void> {
    const next = this.#loading.catch(() => {}).then(() => this.#load())
    this.#loading = next
    return next
  }

  async #load(): Promise<void> {
    if ((await this.#accounts.current()) === this.#version) return
    const { version, users, keys } = await this.#accounts.snapshot()
    this.#users = new Map(users.map((user) => [usernameKey(user.username), user]))
    this.#keys = new Map(keys.map((key) => [key.hash, key]))
    this.#tokenPrincipals = new WeakMap()
    this.#keysByText = new Map()
    this.#version = version
    for (const listener of this.#changeListeners) listener()
  }

  /**
   * Calls `listener` each time the users and keys were read again because they changed, here or
   * on another instance; answers what stops it. What was accepted before may be refused now.
   */
  onChange(listener: () => void): () => void {
    this.#changeListeners.add(listener)
    return () => this.#changeListeners.delete(listener)
  }

  isConfigured(username: string): boolean {
    return usernameKey(username) === this.#configuredKey
  }

  user(username: string): StoredUser | undefined {
    return this.#users.get(usernameKey(username))
  }

  /** The principal of a verified token, while its user still has the role and the stamp it names. */
  principalOfToken(claims: TokenClaims): Principal | undefined {
    let principal = this.#tokenPrincipals.get(claims)
    if (principal === undefined) {
      principal = this.#tokenPrincipal(claims) ?? null
      this.#tokenPrincipals.set(claims, principal)
    }
    return principal ?? undefined
  }

  #tokenPrincipal({ sub, role, sv, auth_time, iat }: TokenClaims): Principal | undefined {
    if (typeof sub !== 'string') return undefined
    const authTime = typeof auth_time === 'number' ? auth_time : (iat ?? 0)
    if (sv === undefined) {
      // The configured user: tokens issued before tokens named a role act as admin.
      if (sub !== this.#configuredUsername || (role !== undefined && role !== 'admin')) return undefined
      return { actor: sub, username: sub, role: 'admin', session: { authTime } }
    }
    const user = this.#users.get(usernameKey(sub))
    if (user === undefined || user.stamp !== sv || user.role !== role) return undefined
    return { actor: user.username, username: user.username, role: user.role, session: { authTime, stamp: user.stamp } }
  }

  /**
   * The principal of a key that is stored, unexpired, and whose owner is still a user: it acts in
   * its own role, or its owner's when that is now lower.
   */
  principalOfKey(text: string, now = Date.now()): Principal | undefined {
    const found = this.#keyPrincipal(text, now)
    if (found === undefined) return undefined
    this.#uses.set(found.key.id, now)
    return found.principal
  }

  /** Whether a key accepted before would still be, without counting a use: revoked, expired or ownerless, it is not. */
  keyStands(text: string, now = Date.now()): boolean {
    return this.#keyPrincipal(text, now) !== undefined
  }

  /** When a stored key expires, in milliseconds since the epoch; undefined for one that never does. */
  keyExpiry(text: string): number | undefined {
    return (this.#keysByText.get(text)?.key ?? this.#keys.get(apiKeyHash(text)))?.expires ?? undefined
  }

  #keyPrincipal(text: string, now: number): { key: StoredKey; principal: Principal } | undefined {
    let found = this.#keysByText.get(text)
    if (found === undefined) {
      const key = this.#keys.get(apiKeyHash(text))
      if (key === undefined) return undefined
      const ownerRole = usernameKey(key.owner) === this.#configuredKey ? 'admin' : this.#users.get(usernameKey(key.owner))?.role
      if (!isRole(ownerRole)) return undefined
      found = { key, principal: { actor: `key:${key.name}`, username: key.owner, role: lower(key.role, ownerRole) } }
      // Only keys that are stored and owned are kept, at most one per stored key.
      this.#keysByText.set(text, found)
    }
    if (found.key.expires !== null && found.key.expires <= now) return undefined
    return found
  }

  /** When the key was last used here and not yet written, if it was. */
  unwrittenUse(id: number): number | undefined {
    return this.#uses.get(id)
  }

  async writeUses(): Promise<void> {
    if (this.#uses.size === 0) return
    const uses = this.#uses
    this.#uses = new Map()
    await this.#accounts.touchKeys(uses)
  }
}

import type { CredentialCheck } from '../auth/credentials.ts'
import { newApiKey } from '../auth/api-keys.ts'
import { Forbidden, InvalidCredentials } from '../auth/errors.ts'
import type { PasswordHasher } from '../auth/passwords.ts'
import { mayUse, type Principal, type Role, type Session } from '../auth/principal.ts'
import { passwordWeakness } from '../auth/weak-settings.ts'
import { InvalidInput } from '../books/errors.ts'
import type { AccountRepository } from '../store/store.ts'
import { usernameKey, type StoredKey, type StoredUser } from './account.ts'
import type { AccountDirectory } from './directory.ts'
import { KeyNotFound, UserExists, UserNotFound } from './errors.ts'

const DAY_MS = 24 * 60 * 60 * 1000

/** A user as the interface shows it; `created` is null for the configured user, who lives in the configuration. */
export interface User {
  username: string
  role: Role
  created: number | null
}

/** Who logged in, and what their tokens carry. */
export interface Identity {
  username: string
  role: Role
  session: Session
}

export interface UserChanges {
  role?: Role | undefined
  password?: string | undefined
  currentPassword?: string | undefined
}

export interface AccountsOptions {
  store: AccountRepository
  directory: AccountDirectory
  hasher: PasswordHasher
  checkConfigured: CredentialCheck
  configuredUsername: string
}

/**
 * The users and keys, and every rule of who may change which (docs/api.md#accounts). Each write
 * reloads the directory before it answers, so that this instance already acts on it.
 */
export class Accounts {
  readonly #store: AccountRepository
  readonly #directory: AccountDirectory
  readonly #hasher: PasswordHasher
  readonly #checkConfigured: CredentialCheck
  readonly #configured: User

  constructor({ store, directory, hasher, checkConfigured, configuredUsername }: AccountsOptions) {
    this.#store = store
    this.#directory = directory
    this.#hasher = hasher
    this.#checkConfigured = checkConfigured
    this.#configured = { username: configuredUsername, role: 'admin', created: null }
  }

  /**
   * The identity the pair belongs to, or undefined. A stored user's password is checked against
   * its hash; an unknown name, or the configured one with a wrong password, against a decoy that
   * takes as long.
   */
  async login(username: string, password: string, now = Date.now()): Promise<Identity | undefined> {
    const session = { authTime: Math.floor(now / 1000) }
    if (this.#checkConfigured(username, password)) return { username, role: 'admin', session }
    if (!this.#directory.isConfigured(username)) {
      // A user created on another instance a moment ago may not have reached this one yet.
      if (this.#directory.user(username) === undefined) await this.#directory.refresh()
      const user = this.#directory.user(username)
      if (user !== undefined) {
        if (!(await this.#hasher.verify(password, user.passwordHash))) return undefined
        return { username: user.username, role: user.role, session: { ...session, stamp: user.stamp } }
      }
    }
    return this.#hasher.decoy(password).then(() => undefined)
  }

  async createUser({ username, password, role }: { username: string; password: string; role: Role }): Promise<User> {
    if (passwordWeakness(password, username) !== undefined) throw new InvalidInput()
    if (this.#directory.isConfigured(username)) throw new UserExists()
    const passwordHash = await this.#hasher.hash(password)
    const created = await this.#store.createUser({ username, role, passwordHash, created: Date.now() })
    if (created === undefined) throw new UserExists()
    await this.#directory.refresh()
    return { username: created.username, role: created.role, created: created.created }
  }

  async users(): Promise<User[]> {
    const { users } = await this.#store.snapshot()
    return [this.#configured, ...users.map(({ username, role, created }) => ({ username, role, created }))]
  }

  async user(username: string): Promise<User> {
    if (this.#directory.isConfigured(username)) return this.#configured
    const found = await this.#stored(username)
    return { username: found.username, role: found.role, created: found.created }
  }

  /** The stored user of that name, whatever its case, as the store has it now; 404 when none. */
  async #stored(username: string): Promise<StoredUser> {
    const key = usernameKey(username)
    const found = (await this.#store.snapshot()).users.find((user) => usernameKey(user.username) === key)
    if (found === undefined) throw new UserNotFound()
    return found
  }

  /**
   * An admin changes anyone's role or password; everyone else only their own password, with the
   * current one. The configured user is changed in the configuration, never here.
   */
  async updateUser(principal: Principal, username: string, { role, password, currentPassword }: UserChanges): Promise<User> {
    const own = usernameKey(username) === usernameKey(principal.username)
    const admin = principal.role === 'admin'
    if (this.#directory.isConfigured(username) || (!admin && (!own || role !== undefined))) throw new Forbidden()
    if (role === undefined && password === undefined) throw new InvalidInput()
    const user = await this.#stored(username)
    let passwordHash: string | undefined
    if (password !== undefined) {
      if (passwordWeakness(password, user.username) !== undefined) throw new InvalidInput()
      if (own) {
        if (currentPassword === undefined) throw new InvalidInput()
        if (!(await this.#hasher.verify(currentPassword, user.passwordHash))) throw new InvalidCredentials()
      }
      passwordHash = await this.#hasher.hash(password)
    }
    const updated = await this.#store.updateUser(username, { role, passwordHash })
    if (updated === undefined) throw new UserNotFound()
    await this.#directory.refresh()
    return { username: updated.username, role: updated.role, created: updated.created }
  }

  async deleteUser(username: string): Promise<void> {
    if (this.#directory.isConfigured(username)) throw new Forbidden()
    if (!(await this.#store.deleteUser(username))) throw new UserNotFound()
    await this.#directory.refresh()
  }

  /** A key of the caller's, in their role or a lower one; the key itself is in the answer only. */
  async createKey(
    principal: Principal,
    { name, role, expiresInDays }: { name: string; role: Role; expiresInDays?: number | undefined },
  ): Promise<StoredKey & { key: string }> {
    if (!mayUse(principal.role, role)) throw new Forbidden()
    const { key, hash } = newApiKey()
    const created = Date.now()
    const stored = await this.#store.createKey({
      name,
      role,
      owner: principal.username,
      hash,
      created,
      expires: expiresInDays === undefined ? null : created + expiresInDays * DAY_MS,
    })
    await this.#directory.refresh()
    return { ...stored, key }
  }

  /** The caller's keys; an admin's are everyone's. `lastUsed` includes uses not yet written. */
  async keys(principal: Principal): Promise<StoredKey[]> {
    const { keys } = await this.#store.snapshot()
    return keys
      .filter((key) => principal.role === 'admin' || usernameKey(key.owner) === usernameKey(principal.username))
      .map((key) => ({ ...key, lastUsed: Math.max(key.lastUsed ?? 0, this.#directory.unwrittenUse(key.id) ?? 0) || null }))
  }

  /** Revokes a key of the caller's, or any key for an admin; another's is not found. */
  async revokeKey(principal: Principal, id: number): Promise<void> {
    const key = (await this.keys(principal)).find((own) => own.id === id)
    if (key === undefined || !(await this.#store.deleteKey(id))) throw new KeyNotFound()
    await this.#directory.refresh()
  }
}

/** Users and keys (docs/api.md#accounts): admins manage users; everyone holds keys of their own. */
import { call } from './operations.ts'
import type { Transport } from './transport.ts'
import type { CreatedKey, Key, NewKey, NewUser, User, UserChanges } from './types.ts'

export class Users {
  readonly #transport: Transport

  constructor(transport: Transport) {
    this.#transport = transport
  }

  /** The configured user first, then every other by name. */
  async list(): Promise<User[]> {
    return (await call(this.#transport, 'get', '/users')).data
  }

  async get(username: string): Promise<User> {
    return (await call(this.#transport, 'get', '/user/{username}', { params: { username } })).data
  }

  async create(user: NewUser): Promise<User> {
    return (await call(this.#transport, 'post', '/users', { json: user })).data
  }

  /** A new role or password; users changing their own password send `current_password` too. */
  async update(username: string, changes: UserChanges): Promise<User> {
    return (await call(this.#transport, 'put', '/user/{username}', { params: { username }, json: changes })).data
  }

  /** Deletes the user and revokes their keys. */
  async delete(username: string): Promise<void> {
    await call(this.#transport, 'delete', '/user/{username}', { params: { username } })
  }
}

export class Keys {
  readonly #transport: Transport

  constructor(transport: Transport) {
    this.#transport = transport
  }

  /** The caller's keys; an admin's: everyone's. Never the keys themselves. */
  async list(): Promise<Key[]> {
    return (await call(this.#transport, 'get', '/keys')).data
  }

  /** A new key, in the caller's role or a lower one: `key` is in this answer only. */
  async create(key: NewKey): Promise<CreatedKey> {
    return (await call(this.#transport, 'post', '/keys', { json: key })).data
  }

  async revoke(id: number): Promise<void> {
    await call(this.#transport, 'delete', '/key/{id}', { params: { id } })
  }
}

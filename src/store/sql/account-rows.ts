import type { StoredKey, StoredUser } from '../../accounts/account.ts'
import type { Role } from '../../auth/principal.ts'

export const USER_COLUMNS = 'username, role, password_hash, created, stamp'
export const KEY_COLUMNS = 'id, name, role, owner, hash, created, expires, last_used'

export interface UserRow {
  username: string
  role: string
  password_hash: string
  created: number
  stamp: number
}

export interface ApiKeyRow {
  id: number
  name: string
  role: string
  owner: string
  hash: string
  created: number
  expires: number | null
  last_used: number | null
}

/** The tables' CHECK constraints hold each role to the three. */
export function userOf(row: UserRow): StoredUser {
  return { username: row.username, role: row.role as Role, passwordHash: row.password_hash, created: row.created, stamp: row.stamp }
}

export function keyOf(row: ApiKeyRow): StoredKey {
  return {
    id: row.id,
    name: row.name,
    role: row.role as Role,
    owner: row.owner,
    hash: row.hash,
    created: row.created,
    expires: row.expires,
    lastUsed: row.last_used,
  }
}

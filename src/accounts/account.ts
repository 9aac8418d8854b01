import type { Role } from '../auth/principal.ts'

/** A user of the catalogue, as the store keeps it. */
export interface StoredUser {
  /** As it was given when the user was created. */
  username: string
  role: Role
  /** The scrypt hash with its parameters and salt (see src/auth/passwords.ts). */
  passwordHash: string
  /** Milliseconds since the epoch. */
  created: number
  /**
   * Changes whenever the password or the role does: a token names the stamp of its user, and one
   * with any other is refused.
   */
  stamp: number
}

/** A key for a program, as the store keeps it: the key itself only as its hash. */
export interface StoredKey {
  id: number
  name: string
  role: Role
  /** The user whose key it is, as named when it was created. */
  owner: string
  /** SHA-256 of the key, in hex. */
  hash: string
  created: number
  /** Milliseconds since the epoch; null for a key that never expires. */
  expires: number | null
  lastUsed: number | null
}

/** Every user and key at one moment, with the version of the accounts they belong to. */
export interface AccountsSnapshot {
  /** Grows with every change to a user or a key. */
  version: number
  users: StoredUser[]
  keys: StoredKey[]
}

/**
 * The form of a name that says whether two are the same user: names are unique regardless of
 * case, so `Ada` and `ada` are one.
 */
export function usernameKey(username: string): string {
  return username.normalize('NFC').toLowerCase()
}

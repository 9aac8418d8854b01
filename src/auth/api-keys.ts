import { hash, randomBytes } from 'node:crypto'

/** Every key starts so: a token never does (a JWT starts with `eyJ`), so one look tells them apart. */
const PREFIX = 'bk_'

/** A new key, shown once, and the hash the store keeps instead. */
export function newApiKey(): { key: string; hash: string } {
  const key = PREFIX + randomBytes(32).toString('base64url')
  return { key, hash: apiKeyHash(key) }
}

/** 256 random bits need no slow hash: SHA-256 cannot be reversed, and guessing is hopeless. */
export function apiKeyHash(key: string): string {
  return hash('sha256', key, 'hex')
}

export function isApiKey(text: string): boolean {
  return text.startsWith(PREFIX)
}

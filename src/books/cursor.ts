import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto'
import type { Position } from './find.ts'

/**
 * Opaque keyset cursors. A cursor holds where the next page starts and a MAC over that and
 * over the query it was issued for, so it cannot be forged, altered, or used with other
 * parameters. Its key is derived from the token secret, so no other setting is needed and
 * every instance sharing the secret accepts the cursors of the others.
 */
export interface Cursors {
  /** A cursor for the page that starts after `position`, of the query written as `query`. */
  issue(query: string, position: Position): string
  /** The position `cursor` holds, when this service issued it for `query`; else undefined. */
  open(query: string, cursor: string): Position | undefined
}

export interface CursorSecrets {
  secret: string
  /** Cursors signed before a rotation of the secret keep working, as tokens do. */
  previousSecret?: string | undefined
}

const PURPOSE = 'book-catalogue list cursor v1'
const BASE64URL = /^[A-Za-z0-9_-]+$/

function deriveKey(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, '', PURPOSE, 32))
}

function mac(key: Buffer, query: string, payload: string): Buffer {
  return createHmac('sha256', key).update(`${query}\n${payload}`).digest()
}

function isPosition(value: unknown): value is Position {
  return Array.isArray(value) && value.every((item) => typeof item === 'string' || (typeof item === 'number' && Number.isFinite(item)))
}

export function createCursors({ secret, previousSecret }: CursorSecrets): Cursors {
  const keys = [secret, previousSecret].filter((key) => key !== undefined).map(deriveKey)
  const signing = keys[0]!
  return {
    issue(query, position) {
      const payload = Buffer.from(JSON.stringify(position)).toString('base64url')
      return `${payload}.${mac(signing, query, payload).toString('base64url')}`
    },
    open(query, cursor) {
      const [payload, signature, ...rest] = cursor.split('.')
      if (payload === undefined || signature === undefined || rest.length > 0) return undefined
      if (!BASE64URL.test(payload) || !BASE64URL.test(signature)) return undefined
      const given = Buffer.from(signature, 'base64url')
      // Base64 has several spellings of the same bytes; only the one issued is accepted.
      if (given.toString('base64url') !== signature) return undefined
      const genuine = keys.some((key) => {
        const expected = mac(key, query, payload)
        return given.length === expected.length && timingSafeEqual(given, expected)
      })
      if (!genuine) return undefined
      try {
        const position: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
        return isPosition(position) ? position : undefined
      } catch {
        return undefined
      }
    },
  }
}

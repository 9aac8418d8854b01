import pg from 'pg'
import { StoreUnavailableError } from '../store.ts'

/**
 * SQLSTATEs that mean "not now": connection exceptions, refused logins and a missing database
 * (the server cannot be used until an operator fixes it, as with SQLite's CANTOPEN), insufficient
 * resources (too many clients, disk full), operator intervention (shutdown, cancelled by
 * statement_timeout), I/O errors, and conflicts that a retry resolves.
 */
const UNAVAILABLE_CLASSES = new Set(['08', '28', '53', '57', '58'])
const UNAVAILABLE_CODES = new Set(['3D000', '40001', '40P01', '55P03'])

function isUnavailable(err: unknown): boolean {
  if (err instanceof pg.DatabaseError) {
    const code = err.code ?? ''
    return UNAVAILABLE_CLASSES.has(code.slice(0, 2)) || UNAVAILABLE_CODES.has(code)
  }
  // Socket failures carry an errno code (ECONNREFUSED, ECONNRESET, ETIMEDOUT…), also when several
  // addresses failed at once; the driver's own transport failures (terminated, timed out) are plain
  // errors. Typed errors such as TypeError are programming mistakes, not an unavailable store.
  const code = (err as { code?: unknown } | null)?.code
  return (typeof code === 'string' && /^E[A-Z]+$/.test(code)) || (err instanceof Error && err.name === 'Error')
}

/** The error a store operation should raise for `err`. */
export function classifyPostgresError(err: unknown): unknown {
  return isUnavailable(err) ? new StoreUnavailableError(err) : err
}

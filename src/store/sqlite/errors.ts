import { StoreUnavailableError } from '../store.ts'

// Primary result codes (the low byte of an extended code) that mean "try again later".
const SQLITE_BUSY = 5
const SQLITE_LOCKED = 6
const SQLITE_IOERR = 10
const SQLITE_FULL = 13
const SQLITE_CANTOPEN = 14
const TRANSIENT = new Set([SQLITE_BUSY, SQLITE_LOCKED, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN])

/** The error a store operation should raise for `err`: the store is unavailable for now, or `err` itself. */
export function classifySqliteError(err: unknown): Error {
  const code = (err as { errcode?: unknown } | null)?.errcode
  return typeof code === 'number' && TRANSIENT.has(code & 0xff) ? new StoreUnavailableError(err) : (err as Error)
}

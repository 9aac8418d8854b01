import { closeSync, mkdirSync, openSync } from 'node:fs'
import { dirname } from 'node:path'
import { StoreUnavailableError } from '../store.ts'

/**
 * Creates the folder of a database file readable by this user only (0700), and the file itself
 * (0600) when it does not exist yet: the database holds the client addresses of failed logins.
 * SQLite gives its `-wal` and `-shm` files the mode of the database file. Existing folders and
 * files keep their modes: they may be shared mount points the operator set up.
 */
export function createPrivateDatabaseFile(path: string): void {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
    // 'a' creates the file when missing and never truncates; the mode applies only on creation.
    closeSync(openSync(path, 'a', 0o600))
  } catch (err) {
    // A read-only or foreign folder: said in one line at start-up, like an unreachable server.
    throw new StoreUnavailableError(new Error(`cannot create ${path}: ${(err as Error).message}`))
  }
}

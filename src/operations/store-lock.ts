import { existsSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'
import { OperationError, reason } from './operation-error.ts'

const SQLITE_BUSY = 5

/**
 * Fails when a process has the store at `storePath` open. A running service keeps its connection
 * open, and in WAL mode every open connection holds a shared lock that SQLite's exclusive locking
 * mode cannot get past; once this returns, no service had it open.
 */
export function refuseWhileOpen(storePath: string): void {
  if (!existsSync(storePath)) return
  const db = new DatabaseSync(storePath)
  try {
    db.exec('PRAGMA busy_timeout = 0')
    db.exec('PRAGMA locking_mode = EXCLUSIVE')
    db.exec('BEGIN EXCLUSIVE')
    db.exec('COMMIT')
  } catch (err) {
    if ((err as { errcode?: number }).errcode === SQLITE_BUSY) {
      throw new OperationError(`a service has ${storePath} open: stop it first; nothing was restored`)
    }
    throw new OperationError(`cannot open the store ${storePath}: ${reason(err)}; nothing was restored`)
  } finally {
    db.close()
  }
}

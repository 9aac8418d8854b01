import type { DatabaseSync } from 'node:sqlite'

/**
 * Takes the write lock on `db`'s file, another connection than the store's, and releases it from
 * a timer of this thread after `ms`; answers how late that timer fired. Work of the store's that
 * waits for the lock on this thread holds the timer up; work on a thread of its own does not.
 */
export function holdWriteLock(db: DatabaseSync, ms: number): Promise<number> {
  db.exec('BEGIN IMMEDIATE')
  return new Promise((resolve) => {
    const due = Date.now() + ms
    setTimeout(() => {
      db.exec('COMMIT')
      resolve(Date.now() - due)
    }, ms)
  })
}

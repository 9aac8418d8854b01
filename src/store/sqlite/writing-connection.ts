import type { DatabaseSync } from 'node:sqlite'

/**
 * Sets up a connection that writes: the store's own and the upkeep thread's.
 *
 * `synchronous` per connection, so that each one's commits are as durable as the store's.
 *
 * The statement journal in memory: each write of a turn runs in a savepoint, and the pages it
 * changes are copied to that journal first. Kept on disk, SQLite moves it into a file of its own
 * past 64 KiB, which a turn of deletions passes (each one touches a dozen trees): a file opened,
 * written page by page and removed at every turn took a quarter of the service's CPU under
 * deletions (docs/performance.md). In memory it holds the pages that one write changes, until its
 * savepoint is released.
 */
export function setUpWritingConnection(db: DatabaseSync, synchronous: 'NORMAL' | 'FULL'): void {
  db.exec(`PRAGMA synchronous = ${synchronous}`)
  db.exec('PRAGMA temp_store = MEMORY')
}

import { statSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'
import { loadMigrations } from '../store/migrations.ts'
import { OperationError, reason } from './operation-error.ts'
import { mebibytes } from './progress.ts'

export interface CheckedBackup {
  pages: number
  pageSize: number
}

/** Checking a file reads all of it, which takes seconds for large ones: those say so first. */
const LARGE_BYTES = 64 * 2 ** 20

interface AppliedMigration {
  version: number
  name: string
}

/**
 * Opens `path` read-only and makes sure it is a whole, undamaged backup of this service's SQLite
 * store, of a schema this version knows: its migrations are this service's, none newer than its
 * own (older ones are applied when the service starts on it).
 */
export function checkBackup(path: string, say: (line: string) => void): CheckedBackup {
  const notOurs = (why: string) => new OperationError(`${path} is not a backup of this service: ${why}; nothing was restored`)
  const kind = statSync(path, { throwIfNoEntry: false })
  if (kind === undefined) throw new OperationError(`there is no file at ${path}: nothing was restored`)
  if (!kind.isFile()) throw notOurs('it is not a file')

  let db: DatabaseSync
  try {
    db = new DatabaseSync(path, { readOnly: true })
  } catch (err) {
    throw new OperationError(`cannot open ${path}: ${reason(err)}; nothing was restored`)
  }
  try {
    let applied: AppliedMigration[]
    try {
      applied = db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all() as unknown as AppliedMigration[]
    } catch (err) {
      const why = reason(err)
      if (/malformed/.test(why)) throw new OperationError(`${path} is damaged (${why}); nothing was restored`)
      throw notOurs(
        /not a database/.test(why) ? 'not an SQLite database' : /no such table/.test(why) ? 'it has no schema_migrations table' : why,
      )
    }
    const known = new Map(loadMigrations('sqlite').map(({ version, name }) => [version, name]))
    const ours = Math.max(...known.keys())
    const newest = applied.at(-1)?.version ?? 0
    if (newest > ours) {
      throw new OperationError(
        `${path} has schema version ${newest}, newer than this service's ${ours}: restore it with the version of the service that made it; nothing was restored`,
      )
    }
    const stranger = applied.find(({ version, name }) => known.get(version) !== name)
    if (applied.length === 0 || stranger !== undefined) {
      throw notOurs(
        stranger ? `its migration ${stranger.version} "${stranger.name}" is not one of this service's` : 'no migration was applied to it',
      )
    }

    if (kind.size > LARGE_BYTES) say(`restore: checking the ${mebibytes(kind.size)} MiB of ${path} first`)
    const [problem] = db.prepare('PRAGMA quick_check(1)').all() as { quick_check: string }[]
    if (problem?.quick_check !== 'ok') throw new OperationError(`${path} is damaged (${problem?.quick_check}); nothing was restored`)
    const { pages, pageSize } = db
      .prepare('SELECT page_count AS pages, page_size AS pageSize FROM pragma_page_count, pragma_page_size')
      .get() as {
      pages: number
      pageSize: number
    }
    return { pages, pageSize }
  } catch (err) {
    if (err instanceof OperationError) throw err
    throw new OperationError(`cannot read ${path}: ${reason(err)}; nothing was restored`)
  } finally {
    db.close()
  }
}

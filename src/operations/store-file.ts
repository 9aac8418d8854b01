import { resolve } from 'node:path'
import { OperationError } from './operation-error.ts'

export type StoreCommand = 'backup' | 'restore'

const POSTGRES_TOOL: Record<StoreCommand, string> = { backup: 'back it up with pg_dump', restore: 'restore it with pg_restore' }
const VERB: Record<StoreCommand, string> = { backup: 'back up', restore: 'restore' }

/**
 * The SQLite file that `dbUrl` names, resolved as the service resolves it; a PostgreSQL database
 * or an in-memory store is refused, saying what to use instead.
 */
export function storeFile(dbUrl: string, command: StoreCommand): string {
  if (!dbUrl.startsWith('sqlite:')) {
    throw new OperationError(
      `DB_URL names a PostgreSQL database: ${POSTGRES_TOOL[command]}, as docs/postgresql.md shows; nothing was copied`,
    )
  }
  if (dbUrl === 'sqlite::memory:') {
    throw new OperationError(`DB_URL is sqlite::memory:, a store that lives only inside the service: there is nothing to ${VERB[command]}`)
  }
  return resolve(dbUrl.slice('sqlite:'.length))
}

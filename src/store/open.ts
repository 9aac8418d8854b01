import { SqliteBookStore, sqlitePath } from './sqlite.ts'
import type { BookStore } from './store.ts'

export interface StoreOptions {
  /** SQLite only: `normal` survives a crash of the process, `full` also a power loss. */
  sqliteSynchronous?: 'normal' | 'full'
}

/** Opens the store that `DB_URL` names and brings its schema up to date. */
export async function openStore(dbUrl: string, options: StoreOptions = {}): Promise<BookStore> {
  if (dbUrl.startsWith('sqlite:')) {
    return new SqliteBookStore({ path: sqlitePath(dbUrl), synchronous: options.sqliteSynchronous })
  }
  throw new Error(`No store for ${dbUrl.split(':')[0]} URLs`)
}

import { SqliteBookStore, sqlitePath } from './sqlite.ts'
import type { BookStore } from './store.ts'

/** Opens the store that `DB_URL` names and brings its schema up to date. */
export async function openStore(dbUrl: string): Promise<BookStore> {
  if (dbUrl.startsWith('sqlite:')) return new SqliteBookStore({ path: sqlitePath(dbUrl) })
  throw new Error(`No store for ${dbUrl.split(':')[0]} URLs`)
}

import type { Config } from '../config.ts'
import { PostgresBookStore } from './postgres.ts'
import { SqliteBookStore, sqlitePath } from './sqlite.ts'
import type { Store } from './store.ts'

export type StoreConfig = Pick<Config, 'dbUrl' | 'dbPoolSize' | 'dbConnectTimeoutMs' | 'dbQueryTimeoutMs'> &
  Partial<Pick<Config, 'sqliteSynchronous'>>

/** Opens the store that `DB_URL` names and brings its schema up to date. */
export async function openStore(config: StoreConfig): Promise<Store> {
  const { dbUrl } = config
  if (dbUrl.startsWith('sqlite:')) {
    return new SqliteBookStore({
      path: sqlitePath(dbUrl),
      busyTimeoutMs: config.dbQueryTimeoutMs,
      synchronous: config.sqliteSynchronous,
    })
  }
  if (/^postgres(ql)?:\/\//.test(dbUrl)) {
    return PostgresBookStore.open({
      url: dbUrl,
      poolSize: config.dbPoolSize,
      connectTimeoutMs: config.dbConnectTimeoutMs,
      queryTimeoutMs: config.dbQueryTimeoutMs,
    })
  }
  throw new Error(`No store for ${dbUrl.split(':')[0]} URLs`)
}

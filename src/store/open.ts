import type { Config } from '../config.ts'
import { PostgresStore } from './postgres/store.ts'
import { SqliteStore, sqlitePath } from './sqlite/store.ts'
import type { Store } from './store.ts'

export type StoreConfig = Pick<Config, 'dbUrl' | 'dbPoolSize' | 'dbConnectTimeoutMs' | 'dbQueryTimeoutMs'> &
  Partial<Pick<Config, 'sqliteSynchronous'>>

/** Opens the store that `DB_URL` names and brings its schema up to date. */
export async function openStore(config: StoreConfig): Promise<Store> {
  const { dbUrl } = config
  if (dbUrl.startsWith('sqlite:')) {
    return new SqliteStore({
      path: sqlitePath(dbUrl),
      busyTimeoutMs: config.dbQueryTimeoutMs,
      synchronous: config.sqliteSynchronous,
    })
  }
  if (/^postgres(ql)?:\/\//.test(dbUrl)) {
    return PostgresStore.open({
      url: dbUrl,
      poolSize: config.dbPoolSize,
      connectTimeoutMs: config.dbConnectTimeoutMs,
      queryTimeoutMs: config.dbQueryTimeoutMs,
    })
  }
  throw new Error(`No store for ${dbUrl.split(':')[0]} URLs`)
}

import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openStore } from '../../../src/store/open.ts'
import { SqliteStore } from '../../../src/store/sqlite/store.ts'
import { storeEngines } from '../../helpers.ts'

const sqlite = storeEngines.find((engine) => engine.name === 'sqlite')!

describe('SQLite durability setting', () => {
  for (const [setting, level] of [
    [undefined, 1],
    ['normal', 1],
    ['full', 2],
  ] as const) {
    it(`SQLITE_SYNCHRONOUS=${setting ?? '(unset)'} runs with synchronous level ${level}`, async () => {
      const database = await sqlite.freshDatabase()
      const base = { dbUrl: database.dbUrl, dbPoolSize: 1, dbConnectTimeoutMs: 1000, dbQueryTimeoutMs: 1000 }
      const store = await openStore(setting === undefined ? base : { ...base, sqliteSynchronous: setting })
      try {
        assert.ok(store instanceof SqliteStore)
        assert.equal(store.synchronousLevel(), level)
      } finally {
        await store.close()
        await database.drop()
      }
    })
  }
})

import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openStore } from '../../src/store/open.ts'
import { SqliteBookStore } from '../../src/store/sqlite.ts'
import { storeEngines } from '../helpers.ts'

const sqlite = storeEngines.find((engine) => engine.name === 'sqlite')!

describe('SQLite durability setting', () => {
  for (const [setting, level] of [[undefined, 1], ['normal', 1], ['full', 2]] as const) {
    it(`SQLITE_SYNCHRONOUS=${setting ?? '(unset)'} runs with synchronous level ${level}`, async () => {
      const database = await sqlite.freshDatabase()
      const store = await openStore(database.dbUrl, setting === undefined ? {} : { sqliteSynchronous: setting })
      try {
        assert.ok(store instanceof SqliteBookStore)
        assert.equal(store.synchronousLevel(), level)
      } finally {
        await store.close()
        await database.drop()
      }
    })
  }
})

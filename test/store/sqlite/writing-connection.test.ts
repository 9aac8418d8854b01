import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { describe, it } from 'node:test'
import { setUpWritingConnection } from '../../../src/store/sqlite/writing-connection.ts'

const pragma = (db: DatabaseSync, name: string) => Object.values(db.prepare(`PRAGMA ${name}`).get()!)[0]

describe('a writing connection', () => {
  for (const [level, expected] of [
    ['NORMAL', 1],
    ['FULL', 2],
  ] as const) {
    it(`commits at the store's level (${level}) and keeps its statement journal in memory`, () => {
      const db = new DatabaseSync(':memory:')
      try {
        assert.equal(pragma(db, 'temp_store'), 0)
        setUpWritingConnection(db, level)
        assert.equal(pragma(db, 'synchronous'), expected)
        // 2: MEMORY, which keeps a savepoint's copies of pages out of files of their own.
        assert.equal(pragma(db, 'temp_store'), 2)
      } finally {
        db.close()
      }
    })
  }
})

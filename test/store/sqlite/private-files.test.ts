import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { SqliteStore } from '../../../src/store/sqlite/store.ts'

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8)

test('the data folder is created 0700 and the SQLite files 0600', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'books-modes-'))
  t.after(() => rmSync(root, { recursive: true, force: true }))
  const dir = join(root, 'data')
  const path = join(dir, 'books.db')
  const store = new SqliteStore({ path })
  t.after(() => store.close())
  await store.books.create('tester', { title: 'Dune', author: 'Frank Herbert', year: 1965 })
  assert.equal(mode(dir), '700')
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    assert.ok(existsSync(file), file)
    assert.equal(mode(file), '600', file)
  }
})

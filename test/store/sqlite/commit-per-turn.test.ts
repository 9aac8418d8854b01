import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { test } from 'node:test'
import { DatabaseSync } from 'node:sqlite'
import { CommitPerTurn } from '../../../src/store/sqlite/commit-per-turn.ts'
import { SqliteStore } from '../../../src/store/sqlite/store.ts'
import { dune } from '../../helpers.ts'
import { temporaryDirectory } from '../../support/temporary.ts'
import { listById } from '../../support/reads.ts'

const dir = temporaryDirectory('books-group-commit-')
let files = 0
const freshPath = () => join(dir, `books-${++files}.db`)

test('writes asked for together all commit, each with its own result', async () => {
  const store = new SqliteStore({ path: freshPath() })
  try {
    const created = await Promise.all(Array.from({ length: 20 }, (_, i) => store.books.create('tester', { ...dune, year: 1900 + i })))
    assert.deepEqual(
      created.map((book) => book.id),
      Array.from({ length: 20 }, (_, i) => i + 1),
    )
    const [updated, deleted, missing] = await Promise.all([
      store.books.update('tester', 3, { title: 'Dune Messiah' }),
      store.books.delete('tester', 4),
      store.books.delete('tester', 99),
    ])
    assert.equal(updated.outcome, 'updated')
    assert.equal(deleted, 'deleted')
    assert.equal(missing, 'missing')
    assert.equal((await store.books.get(3))?.title, 'Dune Messiah')
    assert.equal(await store.books.get(4), undefined)
  } finally {
    await store.close()
  }
})

test('a write that fails does not take the others in its transaction with it', async () => {
  const store = new SqliteStore({ path: freshPath() })
  try {
    const results = await Promise.allSettled([
      store.books.create('tester', dune),
      store.books.create('tester', { ...dune, year: 123456 }),
      store.books.create('tester', dune),
    ])
    assert.deepEqual(
      results.map((result) => result.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    )
    assert.equal((await listById(store, 0, 10)).length, 2)
  } finally {
    await store.close()
  }
})

test('closing the store commits the writes still waiting', async () => {
  const path = freshPath()
  const store = new SqliteStore({ path })
  const pending = store.books.create('tester', dune)
  await store.close()
  assert.equal((await pending).id, 1)
  const reopened = new SqliteStore({ path })
  try {
    assert.equal((await reopened.books.get(1))?.title, dune.title)
  } finally {
    await reopened.close()
  }
})

test('every acknowledged write survives a kill -9 right after its answer, with exactly one change', async () => {
  const path = freshPath()
  const storeModule = new URL('../../../src/store/sqlite/store.ts', import.meta.url).href
  // The child acknowledges each write on stdout as its promise settles (writeSync: the line
  // has left the process when it returns), and dies by SIGKILL as soon as the last one is
  // acknowledged, before anything could tidy up. Its reader threads leave stdout non-blocking: a
  // full pipe answers EAGAIN, and the line is written again.
  const child = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `
      const { writeSync } = await import('node:fs')
      const { SqliteStore } = await import(${JSON.stringify(storeModule)})
      const ack = (line) => {
        for (;;) {
          try {
            return writeSync(1, line + '\\n')
          } catch (err) {
            if (err.code !== 'EAGAIN') throw err
          }
        }
      }
      const store = new SqliteStore({ path: ${JSON.stringify(path)} })
      const writes = []
      for (let i = 0; i < 200; i++) {
        writes.push(store.books.create('tester', { title: 'Book ' + i, author: 'Author', year: 2000 }).then((book) => ack(book.id)))
      }
      writes.push(store.books.update('tester', 1, { title: 'Changed' }).then(() => ack('updated')))
      writes.push(store.books.delete('tester', 2).then(() => ack('deleted')))
      await Promise.all(writes)
      process.kill(process.pid, 'SIGKILL')
      `,
    ],
    { encoding: 'utf8' },
  )
  assert.equal(child.signal, 'SIGKILL', child.stderr)
  const acknowledged = child.stdout.trim().split('\n')
  assert.equal(acknowledged.length, 202)
  const store = new SqliteStore({ path })
  try {
    const books = await listById(store, 0, 1000)
    assert.deepEqual(
      books.map((book) => book.id),
      Array.from({ length: 200 }, (_, i) => i + 1).filter((id) => id !== 2),
    )
    assert.equal(books[0]?.title, 'Changed')
    const kinds = async (id: number) => (await store.changes.ofBook(id, undefined, 10))?.map((change) => change.kind)
    assert.deepEqual(await kinds(1), ['updated', 'created'])
    assert.deepEqual(await kinds(2), ['deleted', 'created'])
    for (let id = 3; id <= 200; id++) assert.deepEqual(await kinds(id), ['created'])
  } finally {
    await store.close()
  }
})

test('a lone read whose statements must agree runs in a transaction of its own; another lone read needs none', async () => {
  const db = new DatabaseSync(':memory:')
  const turns = new CommitPerTurn(db, (err) => err as Error)
  assert.equal(await turns.read(() => db.isTransaction, { together: true }), true)
  assert.equal(await turns.read(() => db.isTransaction), false)
  assert.equal(db.isTransaction, false)
  db.close()
})

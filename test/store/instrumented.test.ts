import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { FindQuery } from '../../src/books/find.ts'
import { instrumentStore } from '../../src/store/instrumented.ts'
import { SqliteStore } from '../../src/store/sqlite/store.ts'
import { StoreUnavailableError } from '../../src/store/store.ts'
import { dune } from '../helpers.ts'
import { findPage, listById } from '../support/reads.ts'

function recorder() {
  const seen: [string, string][] = []
  const durations: number[] = []
  const observeStore = (operation: string, outcome: string, seconds: number) => {
    seen.push([operation, outcome])
    durations.push(seconds)
  }
  return { seen, durations, observeStore }
}

describe('instrumented store', () => {
  it('answers what the store answers and records each operation as ok', async () => {
    const metrics = recorder()
    const store = instrumentStore(new SqliteStore({ path: ':memory:' }), metrics)
    const book = await store.books.create('tester', dune)
    // node:sqlite rows have no prototype: compare their members.
    assert.deepEqual({ ...(await store.books.get(book.id)) }, { ...book })
    assert.deepEqual(await listById(store, 0, 10), [{ id: book.id, ...dune }])
    await store.close()
    assert.deepEqual(metrics.seen, [
      ['create', 'ok'],
      ['get', 'ok'],
      ['find', 'ok'],
    ])
  })

  it("keeps the engine's own serialisation of pages, recorded as a find", async () => {
    const metrics = recorder()
    const store = instrumentStore(new SqliteStore({ path: ':memory:' }), metrics)
    const book = await store.books.create('tester', dune)
    const query: FindQuery = { filter: {}, order: { relevance: false, keys: [{ field: 'id', descending: false }] }, limit: 10 }
    const pages = await store.reader.pages(query, { whole: true, json: true })
    const json = []
    for await (const page of pages) json.push(page)
    assert.deepEqual(json, [{ json: JSON.stringify([{ id: book.id, ...dune }]), size: 1, last: [book.id] }])
    await store.close()
    assert.deepEqual(metrics.seen, [
      ['create', 'ok'],
      ['find', 'ok'],
    ])
  })

  it('records the operations of a transaction, and every method a repository has', async () => {
    const metrics = recorder()
    const engine = new SqliteStore({ path: ':memory:' })
    // A method that no list names: generic instrumentation records it all the same.
    Object.assign(engine.books, { count: async () => (await listById(engine, 0, 100)).length })
    const store = instrumentStore(engine, metrics)
    await store.transaction(async ({ books, loginFailures }) => {
      await books.create('tester', dune)
      await loginFailures.record('203.0.113.7', 1000, 0)
    })
    assert.equal(await (store.books as unknown as { count(): Promise<number> }).count(), 1)
    await store.loginFailures.recent('203.0.113.7', 0, 10)
    await store.close()
    assert.deepEqual(metrics.seen, [
      ['create', 'ok'],
      ['recordLoginFailure', 'ok'],
      ['count', 'ok'],
      ['recentLoginFailures', 'ok'],
    ])
  })

  it("keeps a repository's members that are not methods, in and out of transactions", async () => {
    const engine = new SqliteStore({ path: ':memory:' })
    const store = instrumentStore(engine, recorder())
    assert.equal(store.books.importRows, engine.books.importRows)
    assert.equal(await store.transaction(({ books }) => Promise.resolve(books.importRows)), engine.books.importRows)
    await store.close()
  })

  it('records reads of books as find, ok or failed', async () => {
    const metrics = recorder()
    const store = instrumentStore(new SqliteStore({ path: ':memory:' }), metrics)
    const query: FindQuery = { filter: { words: ['dune'] }, order: { relevance: true }, limit: 10 }
    await store.books.create('tester', dune)
    assert.deepEqual(
      (await findPage(store, query)).found.map(({ book }) => book.title),
      [dune.title],
    )
    await store.close()
    assert.deepEqual(metrics.seen, [
      ['create', 'ok'],
      ['find', 'ok'],
    ])
  })

  it('records how long the operation took, in seconds', async () => {
    const slowPing = () => new Promise<void>((resolve) => setTimeout(resolve, 40))
    const metrics = recorder()
    const store = instrumentStore(Object.assign(new SqliteStore({ path: ':memory:' }), { ping: slowPing }), metrics)
    await store.ping()
    await store.close()
    assert.deepEqual(metrics.seen, [['ping', 'ok']])
    // A timer never fires early; milliseconds instead of seconds would be a thousand times more.
    assert.ok(metrics.durations[0]! >= 0.035 && metrics.durations[0]! < 35, `recorded ${metrics.durations[0]} s`)
  })

  it('passes failures on and records them as unavailable or error', async () => {
    const down = new StoreUnavailableError(new Error('down'))
    const broken = new Error('broken')
    const failing = new SqliteStore({ path: ':memory:' })
    Object.assign(failing.books, {
      get: () => Promise.reject(down),
      delete: () => Promise.reject(broken),
    })
    const metrics = recorder()
    const store = instrumentStore(failing, metrics)
    await assert.rejects(store.books.get(1), down)
    await assert.rejects(store.books.delete('tester', 1), broken)
    await store.close()
    assert.deepEqual(metrics.seen, [
      ['get', 'unavailable'],
      ['delete', 'error'],
    ])
  })
})

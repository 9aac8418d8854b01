import assert from 'node:assert/strict'
import { afterEach, beforeEach, describe, it } from 'node:test'
import type { Store } from '../../src/store/store.ts'
import type { StoredBook } from '../../src/books/book.ts'
import { dune, storeEngines } from '../helpers.ts'
import { listById } from '../support/reads.ts'

/** What a client would see of a value: rows of some engines have a null prototype. */
function asJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value ?? null))
}

for (const engine of storeEngines) {
  describe(`${engine.name} store, writes asked for together`, { skip: engine.skip }, () => {
    let store: Store

    beforeEach(async () => {
      store = await engine.open()
    })
    afterEach(async () => {
      await store.close()
    })

    it('gives concurrent creates rising ids in the order they were asked for', async () => {
      const titles = Array.from({ length: 30 }, (_, i) => `Book ${i}`)
      const created = await Promise.all(titles.map((title) => store.books.create('tester', { ...dune, title })))
      assert.deepEqual(
        created.map((book) => book.title),
        titles,
      )
      for (let i = 1; i < created.length; i++) assert.ok(created[i]!.id > created[i - 1]!.id, `id ${i} does not rise`)
      for (const book of created) assert.deepEqual(asJson(await store.books.get(book.id)), asJson(book))
    })

    it('answers each of concurrent updates and deletes as if they ran one after another', async () => {
      const [a, b, c] = await Promise.all([
        store.books.create('tester', dune),
        store.books.create('tester', dune),
        store.books.create('tester', dune),
      ])
      const missing = c.id + 1000
      const outcomes = await Promise.all([
        store.books.update('tester', a.id, { title: 'Changed' }),
        store.books.update('tester', a.id, { year: 2000 }, [2]),
        store.books.update('tester', a.id, { year: 1 }, [2]),
        store.books.update('tester', missing, { title: 'Nowhere' }),
        store.books.update('tester', b.id, { author: 'Someone' }, [1, 7]),
        store.books.update('tester', c.id, { author: 'Someone' }, []),
        store.books.delete('tester', b.id),
        store.books.delete('tester', b.id),
        store.books.delete('tester', missing),
      ])
      assert.deepEqual(asJson(outcomes), [
        { outcome: 'updated', book: { id: a.id, title: 'Changed', author: dune.author, year: dune.year, revision: 2 } },
        { outcome: 'updated', book: { id: a.id, title: 'Changed', author: dune.author, year: 2000, revision: 3 } },
        { outcome: 'stale' },
        { outcome: 'missing' },
        { outcome: 'updated', book: { id: b.id, title: dune.title, author: 'Someone', year: dune.year, revision: 2 } },
        { outcome: 'stale' },
        'deleted',
        'missing',
        'missing',
      ])
      assert.equal(await store.books.get(b.id), undefined)
      assert.deepEqual(asJson(await store.books.get(a.id)), { id: a.id, title: 'Changed', author: dune.author, year: 2000, revision: 3 })
    })

    it('keeps writes asked for together inside a failed transaction out of the batches outside it', async () => {
      const failure = new Error('the work failed')
      let outside: Promise<StoredBook> | undefined
      await assert.rejects(
        store.transaction(async ({ books }) => {
          outside = store.books.create('tester', { ...dune, title: 'Outside' })
          await Promise.all([
            books.create('tester', { ...dune, title: 'Inside 1' }),
            books.create('tester', { ...dune, title: 'Inside 2' }),
          ])
          throw failure
        }),
        failure,
      )
      const kept = await outside!
      assert.deepEqual(asJson(await listById(store, 0, 10)), [{ id: kept.id, ...dune, title: 'Outside' }])
    })

    it('fails only the write that breaks a rule, and keeps the others of its batch', async () => {
      const outcomes = await Promise.allSettled([
        store.books.create('tester', { ...dune, title: 'Fine' }),
        store.books.create('tester', { ...dune, title: 'x'.repeat(501) }),
        store.books.create('tester', { ...dune, title: 'Also fine' }),
      ])
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      )
    })
  })
}

import assert from 'node:assert/strict'
import { describe, test, type TestContext } from 'node:test'
import type { StoredAnswer } from '../../src/store/store.ts'
import { dune, storeEngines } from '../helpers.ts'
import { listById } from '../support/reads.ts'

const DAY = 24 * 60 * 60 * 1000
const answer: StoredAnswer = { status: 201, headers: { location: '/book/1' }, body: '{"status":201}' }

for (const engine of storeEngines) {
  describe(`idempotency keys and batch inserts on ${engine.name}`, { skip: engine.skip }, () => {
    async function open(t: TestContext) {
      const store = await engine.open()
      t.after(() => store.close())
      return store
    }

    test('a new key is claimed; while held another claim finds it running; once answered, done', async (t) => {
      const { idempotencyKeys: keys, transaction } = await open(t).then((store) => ({
        ...store,
        transaction: store.transaction.bind(store),
      }))
      assert.deepEqual(await keys.claim('POST /book', 'k', 1000, 61_000, 1000 - DAY), { state: 'claimed' })
      assert.deepEqual(await keys.claim('POST /book', 'k', 2000, 62_000, 2000 - DAY), { state: 'running' })
      await transaction((repositories) => repositories.idempotencyKeys.complete('POST /book', 'k', 'hash', answer))
      assert.deepEqual(await keys.claim('POST /book', 'k', 3000, 63_000, 3000 - DAY), { state: 'done', fingerprint: 'hash', answer })
      assert.deepEqual(await keys.claim('POST /books/import', 'k', 3000, 63_000, 3000 - DAY), { state: 'claimed' }, 'keys are scoped')
    })

    test('an answer recorded in a transaction that rolls back is not kept', async (t) => {
      const store = await open(t)
      await store.idempotencyKeys.claim('s', 'k', 1000, 61_000, 0)
      await assert.rejects(
        store.transaction(async (repositories) => {
          await repositories.idempotencyKeys.complete('s', 'k', 'hash', answer)
          throw new Error('the write failed')
        }),
        /the write failed/,
      )
      assert.deepEqual(await store.idempotencyKeys.claim('s', 'k', 2000, 62_000, 0), { state: 'running' })
      await store.idempotencyKeys.release('s', 'k')
      assert.deepEqual(await store.idempotencyKeys.claim('s', 'k', 3000, 63_000, 0), { state: 'claimed' })
    })

    test('completing a key nobody holds fails, so the write it guards rolls back', async (t) => {
      const store = await open(t)
      await assert.rejects(store.transaction((repositories) => repositories.idempotencyKeys.complete('s', 'never', 'h', answer)))
    })

    test('a released key is claimed afresh; an answered key is not released', async (t) => {
      const { idempotencyKeys: keys, transaction } = await open(t).then((store) => ({
        ...store,
        transaction: store.transaction.bind(store),
      }))
      await keys.claim('s', 'a', 1000, 61_000, 0)
      await keys.release('s', 'a')
      assert.deepEqual(await keys.claim('s', 'a', 1000, 61_000, 0), { state: 'claimed' })
      await transaction((repositories) => repositories.idempotencyKeys.complete('s', 'a', 'h', answer))
      await keys.release('s', 'a')
      assert.equal((await keys.claim('s', 'a', 2000, 62_000, 0)).state, 'done')
    })

    test('a holder whose time ran out loses the key to the next claim', async (t) => {
      const { idempotencyKeys: keys } = await open(t)
      await keys.claim('s', 'k', 1000, 61_000, 0)
      assert.deepEqual(await keys.claim('s', 'k', 60_999, 120_999, 0), { state: 'running' })
      assert.deepEqual(await keys.claim('s', 'k', 61_000, 121_000, 0), { state: 'claimed' })
    })

    test('after 24 hours an answered key is forgotten, and old keys are purged as new ones come', async (t) => {
      const store = await open(t)
      const keys = store.idempotencyKeys
      for (const key of ['a', 'b', 'c']) {
        await keys.claim('s', key, 1000, 61_000, 1000 - DAY)
        await store.transaction((repositories) => repositories.idempotencyKeys.complete('s', key, 'h', answer))
      }
      assert.equal((await keys.claim('s', 'a', 1000 + DAY - 1, 2 * DAY, 1000 - 1)).state, 'done')
      assert.deepEqual(await keys.claim('s', 'a', 1000 + DAY, 2 * DAY, 1000), { state: 'claimed' })
      // Claims purge the other expired keys too: b is gone, so claiming it starts afresh.
      await keys.claim('s', 'd', 1000 + DAY, 2 * DAY, 1000)
      assert.deepEqual(await keys.claim('s', 'b', 1000 + DAY, 2 * DAY, 0), { state: 'claimed' })
    })

    test('createMany stores every book in one statement and answers their ids in order', async (t) => {
      const store = await open(t)
      const before = await store.books.create('tester', dune)
      const books = Array.from({ length: 1500 }, (_, i) => ({ title: `T${i}`, author: `A${i}`, year: i - 750 }))
      const ids = await store.books.createMany('tester', books)
      assert.equal(ids.length, books.length)
      assert.ok(ids.every((id, i) => id > before.id && (i === 0 || id > ids[i - 1]!)))
      const stored = await listById(store, before.id, 2000)
      assert.deepEqual(
        stored.map(({ id, title, author, year }) => ({ id, title, author, year })),
        books.map((book, i) => ({ id: ids[i], ...book })),
      )
    })
  })
}

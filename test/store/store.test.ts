import assert from 'node:assert/strict'
import { afterEach, beforeEach, describe, it } from 'node:test'
import { StoreUnavailableError, type NewBook, type Store } from '../../src/store/store.ts'
import { dune, storeEngines } from '../helpers.ts'

const books: NewBook[] = [
  dune,
  { title: 'Solaris', author: 'Stanisław Lem', year: 1961 },
  { title: 'Kindred', author: 'Octavia E. Butler', year: 1979 },
  { title: 'Ficciones', author: 'Jorge Luis Borges', year: 1944 },
  { title: 'Beowulf', author: 'Unknown', year: -9999 },
]

/** What a client would see of a value: rows of some engines have a null prototype. */
function asJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value ?? null))
}

for (const engine of storeEngines) {
  describe(`${engine.name} store`, { skip: engine.skip }, () => {
    let store: Store

    beforeEach(async () => {
      store = await engine.open()
    })
    afterEach(async () => {
      await store.close()
    })

    async function createAll() {
      const created = []
      for (const book of books) created.push(await store.create(book))
      return created
    }

    it('creates a book with a numeric id and revision 1, and gets it back', async () => {
      const created = await store.create(dune)
      assert.equal(typeof created.id, 'number')
      assert.deepEqual(asJson(created), { id: created.id, ...dune, revision: 1 })
      assert.deepEqual(asJson(await store.get(created.id)), asJson(created))
    })

    it('stores text exactly as given, up to 500 characters', async () => {
      const book = { title: '😀'.repeat(500), author: '  Ĳssel — «naïve»  ', year: 9999 }
      const created = await store.create(book)
      assert.deepEqual(asJson(await store.get(created.id)), { id: created.id, ...book, revision: 1 })
    })

    it('refuses what the contract forbids, as an error that is not "unavailable"', async () => {
      for (const bad of [
        { ...dune, title: '' },
        { ...dune, author: 'x'.repeat(501) },
        { ...dune, year: 10000 },
        { ...dune, year: -10000 },
      ]) {
        await assert.rejects(store.create(bad), (err) => !(err instanceof StoreUnavailableError))
      }
      assert.deepEqual(asJson(await store.list(0, 10)), [])
    })

    it('finds nothing for an id that was never assigned', async () => {
      assert.equal(await store.get(1), undefined)
      assert.equal(await store.get(Number.MAX_SAFE_INTEGER), undefined)
    })

    it('assigns ascending ids and never reuses the id of a deleted newest book', async () => {
      const first = await store.create(dune)
      const second = await store.create(dune)
      assert.ok(second.id > first.id)
      assert.equal(await store.delete(second.id), true)
      const third = await store.create(dune)
      assert.ok(third.id > second.id)
    })

    it('lists books ascending by id, a page at a time, without revisions', async () => {
      const created = (await createAll()).map(({ revision: _, ...book }) => book)
      assert.deepEqual(asJson(await store.list(0, 1000)), created)
      assert.deepEqual(asJson(await store.list(0, 2)), created.slice(0, 2))
      assert.deepEqual(asJson(await store.list(created[1]!.id, 2)), created.slice(2, 4))
      assert.deepEqual(asJson(await store.list(created[3]!.id, 2)), created.slice(4))
      assert.deepEqual(asJson(await store.list(created[4]!.id, 2)), [])
    })

    it('serialises a page itself as the JSON of what list gives, when it can', async (t) => {
      if (!store.listJson) {
        t.skip('this engine lists only through list()')
        return
      }
      const created = await createAll()
      const awkward = await store.create({ title: 'Quote " and \\ and \n', author: 'é 😀 \u2028', year: 0 })
      for (const [after, limit] of [
        [0, 100],
        [0, 2],
        [created[1]!.id, 2],
        [awkward.id, 10],
      ] as const) {
        const page = await store.listJson(after, limit)
        const rows = asJson(await store.list(after, limit)) as { id: number }[]
        assert.deepEqual(JSON.parse(page.json), rows)
        assert.equal(page.count, rows.length)
        assert.equal(page.lastId, rows.at(-1)?.id)
      }
    })

    it('updates only the given members and raises the revision', async () => {
      const { id } = await store.create(dune)
      const result = await store.update(id, { year: 1966 })
      const expected = { id, ...dune, year: 1966, revision: 2 }
      assert.deepEqual(asJson(result), { outcome: 'updated', book: expected })
      assert.deepEqual(asJson(await store.get(id)), expected)
      const again = await store.update(id, { title: 'Dune Messiah', author: 'F. Herbert' })
      assert.deepEqual(asJson(again), {
        outcome: 'updated',
        book: { id, title: 'Dune Messiah', author: 'F. Herbert', year: 1966, revision: 3 },
      })
    })

    it('updates when the revision is one of the expected ones', async () => {
      const { id } = await store.create(dune)
      const result = await store.update(id, { year: 1970 }, [7, 1])
      assert.deepEqual(asJson(result), { outcome: 'updated', book: { id, ...dune, year: 1970, revision: 2 } })
    })

    it('changes nothing and reports "stale" when the revision is not expected', async () => {
      const { id } = await store.create(dune)
      await store.update(id, { year: 1966 })
      assert.deepEqual(await store.update(id, { year: 1970 }, [1]), { outcome: 'stale' })
      assert.deepEqual(await store.update(id, { year: 1970 }, []), { outcome: 'stale' })
      assert.deepEqual(asJson(await store.get(id)), { id, ...dune, year: 1966, revision: 2 })
    })

    it('reports "missing" for a book that does not exist, with or without expected revisions', async () => {
      const { id } = await store.create(dune)
      await store.delete(id)
      assert.deepEqual(await store.update(id, { year: 1970 }), { outcome: 'missing' })
      assert.deepEqual(await store.update(id, { year: 1970 }, [1]), { outcome: 'missing' })
    })

    it('lets exactly one of two updates expecting the same revision win', async () => {
      const { id } = await store.create(dune)
      const outcomes = await Promise.all([store.update(id, { year: 1970 }, [1]), store.update(id, { year: 1980 }, [1])])
      assert.deepEqual(outcomes.map((result) => result.outcome).sort(), ['stale', 'updated'])
      assert.equal((await store.get(id))?.revision, 2)
    })

    it('deletes a book once', async () => {
      const [kept, deleted] = await createAll()
      assert.equal(await store.delete(deleted!.id), true)
      assert.equal(await store.get(deleted!.id), undefined)
      assert.equal(await store.delete(deleted!.id), false)
      assert.deepEqual(asJson(await store.get(kept!.id)), asJson(kept))
    })

    it('gives the newest failed logins of a key after a time, newest first, at most as many as asked', async () => {
      for (const at of [1000, 2000, 3000, 3000, 4000]) await store.recordLoginFailure('203.0.113.7', at, 0)
      await store.recordLoginFailure('203.0.113.8', 5000, 0)
      assert.deepEqual(await store.recentLoginFailures('203.0.113.7', 1000, 10), [4000, 3000, 3000, 2000])
      assert.deepEqual(await store.recentLoginFailures('203.0.113.7', 0, 2), [4000, 3000])
      assert.deepEqual(await store.recentLoginFailures('198.51.100.1', 0, 10), [])
    })

    it('deletes the failed logins of every key up to the expiry time given with a new one', async () => {
      await store.recordLoginFailure('203.0.113.7', 1000, 0)
      await store.recordLoginFailure('203.0.113.7', 2000, 0)
      await store.recordLoginFailure('203.0.113.8', 3000, 0)
      await store.recordLoginFailure('198.51.100.1', 4000, 2000)
      assert.deepEqual(await store.recentLoginFailures('203.0.113.7', 0, 10), [])
      assert.deepEqual(await store.recentLoginFailures('203.0.113.8', 0, 10), [3000])
      assert.deepEqual(await store.recentLoginFailures('198.51.100.1', 0, 10), [4000])
    })

    it('answers a ping', async () => {
      await store.ping()
    })
  })
}

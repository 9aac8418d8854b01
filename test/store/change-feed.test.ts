import assert from 'node:assert/strict'
import { afterEach, beforeEach, describe, it } from 'node:test'
import { PostgresStore } from '../../src/store/postgres/store.ts'
import type { Store } from '../../src/store/store.ts'
import type { BookFilter } from '../../src/books/find.ts'
import { dune, openSqliteFile, storeEngines, type StoreEngine } from '../helpers.ts'
import { createTestSchema } from '../support/postgres.ts'

const solaris = { title: 'Solaris', author: 'Stanisław Lem', year: 1961 }

/** What a client would see of a value: rows of some engines have a null prototype. */
function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T
}

const postgres = storeEngines.find((engine) => engine.name === 'postgres')!

/** The engines as the service runs them: a whole read holds a snapshot of its own. */
const snapshotEngines: StoreEngine[] = [{ ...storeEngines[0]!, name: 'sqlite file', open: () => openSqliteFile({ readers: 1 }) }, postgres]

for (const engine of storeEngines) {
  describe(`${engine.name} store: the changes in order`, { skip: engine.skip }, () => {
    let store: Store

    beforeEach(async () => {
      store = await engine.open()
    })
    afterEach(async () => {
      await store.close()
    })

    it('knows no change in a new store: latest is 0, and nothing comes after 0', async () => {
      assert.equal(await store.changes.latest(), 0)
      assert.deepEqual(await store.changes.after(0, 10), [])
    })

    it('gives every change after a seq, oldest first, at most as many as asked, of every kind', async () => {
      const book = await store.books.create('ada', dune)
      const [other] = await store.books.createMany('grace', [solaris])
      await store.books.update('ada', book.id, { year: 1966 })
      await store.books.delete('grace', other!)
      await store.books.restore('ada', other!)
      await store.books.delete('ada', book.id)
      await store.books.purge('ada', book.id)
      const all = plain(await store.changes.after(0, 100))
      // The purge took the book's earlier changes with it.
      assert.deepEqual(
        all.map(({ bookId, kind, actor }) => ({ bookId, kind, actor })),
        [
          { bookId: other, kind: 'created', actor: 'grace' },
          { bookId: other, kind: 'deleted', actor: 'grace' },
          { bookId: other, kind: 'restored', actor: 'ada' },
          { bookId: book.id, kind: 'purged', actor: 'ada' },
        ],
      )
      assert.deepEqual(all.at(-1)!.book, null)
      assert.deepEqual(all[2]!.book, { id: other, ...solaris })
      const seqs = all.map((change) => change.seq)
      assert.deepEqual(
        seqs,
        [...seqs].sort((a, b) => a - b),
      )
      assert.equal(await store.changes.latest(), seqs.at(-1))
      assert.deepEqual(plain(await store.changes.after(seqs[0]!, 2)), all.slice(1, 3))
      assert.deepEqual(await store.changes.after(seqs.at(-1)!, 10), [])
    })

    it("numbers every change of a transaction after every change committed before it, and before the next one's", async () => {
      const first = await store.books.create('ada', dune)
      const ids = await store.transaction(async (repositories) => {
        const stored = await repositories.books.createMany('ada', [solaris, dune])
        await repositories.books.update('ada', first.id, { year: 1 })
        return stored
      })
      await store.books.delete('ada', first.id)
      const changes = await store.changes.after(0, 10)
      assert.deepEqual(changes[0]!.kind, 'created')
      assert.deepEqual(
        changes
          .slice(1, 4)
          .map(({ bookId, kind }) => `${bookId} ${kind}`)
          .sort(),
        [...ids.map((id) => `${id} created`), `${first.id} updated`].sort(),
      )
      assert.deepEqual(changes[4]!.kind, 'deleted')
    })
  })
}

for (const engine of snapshotEngines) {
  describe(`${engine.name} store: the change a whole read reflects`, { skip: engine.skip }, () => {
    let store: Store

    beforeEach(async () => {
      store = await engine.open()
    })
    afterEach(async () => {
      await store.close()
    })

    it('names the newest change its snapshot holds, and reflects none made while its pages are read', async () => {
      const ids = await store.books.createMany(
        'ada',
        Array.from({ length: 30 }, (_, i) => ({ ...dune, year: i })),
      )
      const seq = await store.changes.latest()
      const query = { filter: {}, order: { relevance: false as const, keys: [{ field: 'id' as const, descending: false }] }, limit: 10 }
      const pages = await store.reader.pages(query, { whole: true })
      assert.equal(pages.changeSeq, seq)
      // Changes to books of later pages, and a new book, while the read is under way.
      await store.books.update('grace', ids.at(-1)!, { title: 'Changed' })
      await store.books.delete('grace', ids.at(-2)!)
      await store.books.create('grace', solaris)
      const read: { id: number; title: string }[] = []
      for await (const page of pages) read.push(...page.map(({ book }) => book))
      assert.deepEqual(
        read.map((book) => book.id),
        ids,
      )
      assert.equal(read.at(-1)!.title, 'Dune')
      assert.equal((await store.changes.after(seq, 10)).length, 3)
    })

    it('names the newest change of a whole read that one page holds, in either order, and of one that finds no book', async () => {
      const ids = await store.books.createMany(
        'ada',
        Array.from({ length: 3 }, (_, i) => ({ ...dune, year: i })),
      )
      const seq = await store.changes.latest()
      const read = async (filter: BookFilter, descending: boolean) => {
        const order = { relevance: false as const, keys: [{ field: 'id' as const, descending }] }
        const pages = await store.reader.pages({ filter, order, limit: 10 }, { whole: true, json: true })
        const found: number[] = []
        for await (const page of pages) found.push(...(JSON.parse(page.json) as { id: number }[]).map((book) => book.id))
        return { changeSeq: pages.changeSeq, found }
      }
      assert.deepEqual(await read({}, false), { changeSeq: seq, found: ids })
      assert.deepEqual(await read({}, true), { changeSeq: seq, found: ids.toReversed() })
      assert.deepEqual(await read({ afterId: ids.at(-1)! }, false), { changeSeq: seq, found: [] })
    })
  })
}

describe('postgres store: word of changes from every instance', { skip: postgres.skip }, () => {
  it("hears of each commit that records changes, on its own schema's store only, after it commits", async (t) => {
    const schema = await createTestSchema()
    const elsewhere = await postgres.open()
    const options = { url: schema.url, poolSize: 2, connectTimeoutMs: 2000, queryTimeoutMs: 4000 }
    const listening = await PostgresStore.open(options)
    const writing = await PostgresStore.open(options)
    t.after(async () => {
      await Promise.all([listening.close(), writing.close(), elsewhere.close()])
      await schema.drop()
    })
    let heard = 0
    let wake = () => {}
    const stop = await listening.changeSignals.listen(
      () => {
        heard++
        wake()
      },
      (err) => assert.fail(String(err)),
    )
    t.after(stop)
    const nextSignal = () => new Promise<void>((resolve) => (wake = resolve))

    await elsewhere.books.create('ada', dune)
    await writing.ping()
    assert.equal(heard, 0)

    let signalled = nextSignal()
    await writing.books.create('ada', dune)
    await signalled
    assert.equal(heard, 1)

    // A transaction tells when it commits, and one rolled back never does.
    signalled = nextSignal()
    await assert.rejects(
      writing.transaction(async (repositories) => {
        await repositories.books.create('ada', solaris)
        throw new Error('changed my mind')
      }),
    )
    await writing.transaction(async (repositories) => {
      await repositories.books.createMany('ada', [solaris])
      assert.equal(heard, 1)
    })
    await signalled
    assert.equal(heard, 2)
    // Word comes in the order of the commits: had the rolled-back one said anything, this would be the fourth.
    signalled = nextSignal()
    await writing.books.create('ada', dune)
    await signalled
    assert.equal(heard, 3)
  })
})

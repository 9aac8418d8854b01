import assert from 'node:assert/strict'
import { afterEach, beforeEach, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Change } from '../../src/books/change.ts'
import type { Store } from '../../src/store/store.ts'
import { dune, searchEngines, storeEngines } from '../helpers.ts'
import { findPage, listById } from '../support/reads.ts'

const solaris = { title: 'Solaris', author: 'Stanisław Lem', year: 1961 }

/** What a client would see of a value: rows of some engines have a null prototype. */
function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T
}

function kinds(changes: Change[]): string[] {
  return changes.map((change) => change.kind)
}

for (const engine of storeEngines) {
  describe(`${engine.name} store: history and trash`, { skip: engine.skip }, () => {
    let store: Store

    beforeEach(async () => {
      store = await engine.open()
    })
    afterEach(async () => {
      await store.close()
    })

    it('records each write once, newest first, with who made it, when, and the values it left', async () => {
      const before = Date.now()
      const book = await store.books.create('ada', dune)
      await store.books.update('grace', book.id, { year: 1966 })
      assert.equal(await store.books.delete('ada', book.id), 'deleted')
      await store.books.restore('grace', book.id)
      const changes = plain((await store.changes.ofBook(book.id, undefined, 10))!)
      assert.deepEqual(kinds(changes), ['restored', 'deleted', 'updated', 'created'])
      assert.deepEqual(
        changes.map((change) => change.actor),
        ['grace', 'ada', 'grace', 'ada'],
      )
      assert.deepEqual(
        changes.map((change) => change.book),
        [
          { id: book.id, ...dune, year: 1966 },
          { id: book.id, ...dune, year: 1966 },
          { id: book.id, ...dune, year: 1966 },
          { id: book.id, ...dune },
        ],
      )
      const seqs = changes.map((change) => change.seq)
      assert.deepEqual(
        seqs,
        [...seqs].sort((a, b) => b - a),
      )
      assert.equal(new Set(seqs).size, 4)
      for (const change of changes) {
        assert.equal(change.bookId, book.id)
        assert.ok(change.at >= before - 1000 && change.at <= Date.now() + 1000, `at ${change.at}`)
      }
      assert.deepEqual(plain(await store.changes.get(seqs[2]!)), changes[2])
    })

    it('pages a history by seq: before gives the older changes only', async () => {
      const book = await store.books.create('ada', dune)
      const other = await store.books.create('ada', solaris)
      const otherSeqs: number[] = []
      for (let year = 1; year <= 5; year++) {
        await store.books.update('ada', book.id, { year })
        const update = await store.books.update('ada', other.id, { year })
        assert.equal(update.outcome, 'updated')
        otherSeqs.push((await store.changes.ofBook(other.id, undefined, 1))![0]!.seq)
      }
      const all = (await store.changes.ofBook(book.id, undefined, 100))!
      assert.equal(all.length, 6)
      assert.deepEqual(
        all.map(({ bookId, book }) => [bookId, book?.year]),
        [5, 4, 3, 2, 1, dune.year].map((year) => [book.id, year]),
      )
      // Before a seq of another book, that of its third update: this book's changes older than it.
      assert.deepEqual(
        (await store.changes.ofBook(book.id, otherSeqs[2], 10))!.map(({ book }) => book?.year),
        [3, 2, 1, dune.year],
      )
      const first = (await store.changes.ofBook(book.id, undefined, 2))!
      assert.deepEqual(
        first.map((change) => change.seq),
        all.slice(0, 2).map((change) => change.seq),
      )
      const next = (await store.changes.ofBook(book.id, first[1]!.seq, 10))!
      assert.deepEqual(
        next.map((change) => change.seq),
        all.slice(2).map((change) => change.seq),
      )
    })

    it('knows no history for an id never used; an empty one for nothing else', async () => {
      assert.equal(await store.changes.ofBook(424242, undefined, 10), undefined)
      const book = await store.books.create('ada', dune)
      assert.equal(await store.changes.ofBook(book.id + 1, undefined, 10), undefined)
      assert.equal(await store.changes.get(987654321), undefined)
    })

    it('records every book of a batch as a created change of its own, in id order', async () => {
      const ids = await store.books.createMany('importer', [dune, solaris, { ...dune, year: 1 }])
      const created = await Promise.all(ids.map(async (id) => plain((await store.changes.ofBook(id, undefined, 10))!)))
      assert.deepEqual(
        created.map((changes) => changes.map(({ kind, actor, book }) => ({ kind, actor, book }))),
        [
          [{ kind: 'created', actor: 'importer', book: { id: ids[0], ...dune } }],
          [{ kind: 'created', actor: 'importer', book: { id: ids[1], ...solaris } }],
          [{ kind: 'created', actor: 'importer', book: { id: ids[2], ...dune, year: 1 } }],
        ],
      )
      const seqs = created.map((changes) => changes[0]!.seq)
      assert.deepEqual(
        seqs,
        [...seqs].sort((a, b) => a - b),
      )
    })

    it('records nothing for a write refused or rolled back', async () => {
      const book = await store.books.create('ada', dune)
      assert.equal((await store.books.update('ada', book.id, { year: 2 }, [7])).outcome, 'stale')
      assert.equal(await store.books.delete('ada', book.id, [7]), 'stale')
      assert.equal(await store.books.delete('ada', book.id + 1), 'missing')
      await assert.rejects(
        store.transaction(async (repositories) => {
          await repositories.books.update('ada', book.id, { year: 3 })
          await repositories.books.create('ada', solaris)
          throw new Error('changed my mind')
        }),
        /changed my mind/,
      )
      assert.deepEqual(kinds((await store.changes.ofBook(book.id, undefined, 10))!), ['created'])
      assert.equal((await listById(store, 0, 10)).length, 1)
    })

    it('keeps a deleted book in the trash, latest deletion first, out of every read of books', async () => {
      const [a, b, c] = await Promise.all([dune, solaris, { ...dune, title: 'Kindred' }].map((book) => store.books.create('ada', book)))
      for (const book of [b!, a!, c!]) await store.books.delete('grace', book.id)
      const trash = plain(await store.trash.list(undefined, 10))
      assert.deepEqual(
        trash.map(({ id, title, deletedBy }) => ({ id, title, deletedBy })),
        [c!, a!, b!].map(({ id, title }) => ({ id, title, deletedBy: 'grace' })),
      )
      assert.deepEqual(
        plain(await store.trash.list(trash[0]!.deletedSeq, 10)).map((book) => book.id),
        [a!.id, b!.id],
      )
      assert.equal(await store.books.get(a!.id), undefined)
      assert.deepEqual(await listById(store, 0, 10), [])
      assert.deepEqual(
        (
          await findPage(store, {
            filter: {},
            order: { relevance: false, keys: [{ field: 'id', descending: false }] },
            limit: 10,
            count: true,
          })
        ).total,
        0,
      )
      // The history of a book in the trash is still there.
      assert.deepEqual(kinds((await store.changes.ofBook(a!.id, undefined, 10))!), ['deleted', 'created'])
    })

    it('finds the books deleted at or before a time, the oldest deletion first', async () => {
      const [a, b] = await Promise.all([dune, solaris].map((book) => store.books.create('ada', book)))
      await store.books.delete('ada', a!.id)
      await sleep(5)
      const between = Date.now()
      await sleep(5)
      await store.books.delete('ada', b!.id)
      assert.deepEqual(await store.trash.expired(between, 10), [a!.id])
      assert.deepEqual(await store.trash.expired(Date.now() + 1000, 10), [a!.id, b!.id])
      assert.deepEqual(await store.trash.expired(Date.now() + 1000, 1), [a!.id])
    })

    it('takes the oldest deletions first, so that one deleted by a clock behind waits for those before it', async (t) => {
      const [a, b] = await Promise.all([dune, solaris].map((book) => store.books.create('ada', book)))
      const now = Date.now()
      t.mock.timers.enable({ apis: ['Date'], now: now + 60_000 })
      await store.books.delete('ada', a!.id)
      t.mock.timers.setTime(now)
      await store.books.delete('ada', b!.id)
      t.mock.timers.reset()
      assert.deepEqual(await store.trash.expired(now + 1000, 1), [])
      assert.deepEqual(await store.trash.expired(now + 1000, 2), [b!.id])
      assert.deepEqual(await store.trash.expired(now + 60_000, 1), [a!.id])
    })

    it('restores a book with its id and values, a new revision, and a restored change', async () => {
      const book = await store.books.create('ada', dune)
      const updated = await store.books.update('ada', book.id, { year: 1966 })
      assert.equal(updated.outcome, 'updated')
      await store.books.delete('ada', book.id)
      const restored = plain(await store.books.restore('grace', book.id))
      assert.deepEqual(restored, { id: book.id, ...dune, year: 1966, revision: 3 })
      assert.deepEqual(plain(await store.books.get(book.id)), restored)
      assert.deepEqual(await store.trash.list(undefined, 10), [])
      assert.equal(await store.books.restore('grace', book.id), undefined)
      assert.equal(await store.books.restore('grace', book.id + 1), undefined)
    })

    it('restores a book once when asked twice at the same time', async () => {
      const book = await store.books.create('ada', dune)
      await store.books.delete('ada', book.id)
      const both = await Promise.all([store.books.restore('ada', book.id), store.books.restore('grace', book.id)])
      assert.equal(both.filter((restored) => restored !== undefined).length, 1)
      assert.deepEqual(kinds((await store.changes.ofBook(book.id, undefined, 10))!), ['restored', 'deleted', 'created'])
    })

    it('purges a book and its history for good, leaving one purged change, and never reuses its id', async () => {
      const book = await store.books.create('ada', dune)
      const kept = await store.books.create('ada', solaris)
      await store.books.update('ada', book.id, { year: 1 })
      await store.books.delete('ada', book.id)
      const history = (await store.changes.ofBook(book.id, undefined, 10))!
      assert.deepEqual(kinds(history), ['deleted', 'updated', 'created'])
      assert.equal(await store.books.purge('root', book.id), true)
      assert.equal(await store.changes.ofBook(book.id, undefined, 10), undefined)
      for (const { seq } of history) assert.equal(await store.changes.get(seq), undefined)
      assert.deepEqual(kinds((await store.changes.ofBook(kept.id, undefined, 10))!), ['created'])
      assert.deepEqual(await store.trash.list(undefined, 10), [])
      assert.equal(await store.books.restore('ada', book.id), undefined)
      assert.equal(await store.books.purge('root', book.id), false)
      // A live book is not purged: it is deleted first.
      assert.equal(await store.books.purge('root', kept.id), false)
      const later = await store.books.create('ada', dune)
      assert.ok(later.id > kept.id, `${later.id} after ${kept.id}`)
      const lastSeq = (await store.changes.ofBook(later.id, undefined, 1))![0]!.seq
      const purged = plain(await store.changes.get(lastSeq - 1))
      assert.deepEqual(purged && { bookId: purged.bookId, kind: purged.kind, actor: purged.actor, book: purged.book }, {
        bookId: book.id,
        kind: 'purged',
        actor: 'root',
        book: null,
      })
    })

    it('either restores or purges a book asked for both at once, never both', async () => {
      const book = await store.books.create('ada', dune)
      await store.books.delete('ada', book.id)
      const [restored, purged] = await Promise.all([store.books.restore('ada', book.id), store.books.purge('root', book.id)])
      assert.equal(Number(restored !== undefined) + Number(purged), 1)
      const changes = await store.changes.ofBook(book.id, undefined, 10)
      if (purged) assert.equal(changes, undefined)
      else assert.deepEqual(kinds(changes!), ['restored', 'deleted', 'created'])
    })
  })
}

for (const engine of searchEngines) {
  describe(`${engine.name}: a restored book`, { skip: engine.skip }, () => {
    let store: Store

    beforeEach(async () => {
      store = await engine.open()
    })
    afterEach(async () => {
      await store.close()
    })

    it('is found again by every list, search, count and sort', async () => {
      const ids = await store.books.createMany('ada', [
        dune,
        solaris,
        { title: 'Kindred', author: 'Octavia E. Butler', year: 1979 },
        { title: 'Ficciones', author: 'Jorge Luis Borges', year: 1944 },
        { title: 'Beowulf', author: 'Unknown', year: 1000 },
        { title: 'Dune Messiah', author: 'Frank Herbert', year: 1969 },
      ])
      const id = ids[1]!
      await store.books.delete('ada', id)
      const search = { filter: { words: ['solaris'] }, order: { relevance: true, keys: [] }, limit: 10, count: true }
      assert.equal((await findPage(store, search)).total, 0)
      await store.books.restore('ada', id)
      const found = await findPage(store, search)
      assert.deepEqual({ ids: found.found.map(({ book }) => book.id), total: found.total }, { ids: [id], total: 1 })
      const byAuthor = await findPage(store, {
        filter: { authorContains: 'lem' },
        order: { relevance: false, keys: [{ field: 'id', descending: false }] },
        limit: 10,
        count: true,
      })
      assert.deepEqual(
        byAuthor.found.map(({ book }) => book.id),
        [id],
      )
      const byYear = await findPage(store, {
        filter: {},
        order: { relevance: false, keys: [{ field: 'year', descending: false }] },
        limit: 10,
        count: true,
      })
      assert.equal(byYear.total, 6)
      assert.deepEqual(
        byYear.found.map(({ book }) => book.year),
        [1000, 1944, 1961, 1965, 1969, 1979],
      )
      assert.deepEqual(
        (await listById(store, 0, 10)).map((book) => book.id),
        ids,
      )
    })
  })
}

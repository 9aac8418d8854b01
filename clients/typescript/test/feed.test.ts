import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createSigner } from 'fast-jwt'
import { TEST_SECRET } from '../../../test/helpers.ts'
import { BookCatalogue, type Change } from '../src/index.ts'
import { serviceFor, storeEngines, TEST_USERNAME } from './support/service.ts'

const book = (n: number) => ({ title: `Book ${n}`, author: 'Someone', year: 2000 + n })

/** A token of the configured user that expires in `seconds`, signed as the service signs them. */
function tokenExpiringIn(seconds: number): string {
  const sign = createSigner({ key: TEST_SECRET, algorithm: 'HS256', expiresIn: seconds * 1000 })
  return sign({ sub: TEST_USERNAME, role: 'admin', auth_time: Math.floor(Date.now() / 1000) })
}

/** The next `count` changes `changes` gives; it goes on following. */
async function take(changes: AsyncGenerator<Change>, count: number): Promise<Change[]> {
  const taken: Change[] = []
  while (taken.length < count) {
    const { value, done } = await changes.next()
    if (done) break
    taken.push(value)
  }
  return taken
}

for (const engine of storeEngines) {
  describe(`the client's change feed (${engine.name})`, { skip: engine.skip }, () => {
    it('reads the changes a page at a time, oldest first, with a link to read on that is always there', async (t) => {
      const catalogue = await (await serviceFor(t, engine)).admin()
      for (let n = 1; n <= 3; n++) await catalogue.books.create(book(n))
      const first = await catalogue.changes.page(0, { limit: 2 })
      assert.deepEqual(
        first.items.map((change) => [change.kind, change.book?.title]),
        [
          ['created', 'Book 1'],
          ['created', 'Book 2'],
        ],
      )
      const second = await catalogue.changes.page(first.next)
      assert.deepEqual(
        second.items.map((change) => change.book?.title),
        ['Book 3'],
      )
      assert.deepEqual((await catalogue.changes.page(second.next)).items, [])
      assert.equal(await catalogue.changes.latest(), second.items[0]!.seq)
    })

    it('follows the changes as they commit, from now on or after a seq', async (t) => {
      const catalogue = await (await serviceFor(t, engine)).admin()
      const { book: first } = await catalogue.books.create(book(1))
      const fromNow = catalogue.changes.follow()
      const next = take(fromNow, 2)
      // The feed knows where "now" is once the first request is answered; the writes come after it.
      await new Promise((resolve) => setTimeout(resolve, 500))
      await catalogue.books.update(first.id, { year: 1999 })
      await catalogue.books.delete(first.id)
      assert.deepEqual(
        (await next).map((change) => [change.kind, change.book_id]),
        [
          ['updated', first.id],
          ['deleted', first.id],
        ],
      )
      await fromNow.return()
      const fromStart = catalogue.changes.follow({ since: 0 })
      const replayed = await take(fromStart, 3)
      await fromStart.return()
      assert.deepEqual(
        replayed.map((change) => change.kind),
        ['created', 'updated', 'deleted'],
      )
    })

    it('a refused token ends a reading in the background without asking onRefused, which a reading in front asks', async (t) => {
      const service = await serviceFor(t, engine)
      let asked = 0
      const forged = tokenExpiringIn(600).replace(/\.[^.]+$/, '.c2lnbmF0dXJl')
      const page = new BookCatalogue({ url: service.url, currentToken: () => forged, onRefused: async () => (asked++, false) })
      await assert.rejects(take(page.changes.follow({ since: 0, background: true }), 1), { status: 401, message: 'Invalid token' })
      assert.equal(asked, 0)
      await assert.rejects(take(page.changes.follow({ since: 0 }), 1), { status: 401, message: 'Invalid token' })
      assert.equal(asked, 1)
    })

    it(
      'opens the stream again when its token expires, with a token renewed in time, and misses nothing',
      { timeout: 30_000 },
      async (t) => {
        const service = await serviceFor(t, engine)
        const writer = await service.admin()
        // A token about to expire, which requests alone would not renew: the stream opened with it
        // ends within seconds, and the feed renews it before that.
        const reader = new BookCatalogue({ url: service.url, token: tokenExpiringIn(8), renewWithinSeconds: 0 })
        const before = reader.token
        const changes = reader.changes.follow({ since: 0 })
        await writer.books.create(book(1))
        const [created] = await take(changes, 1)
        assert.equal(created?.book?.title, 'Book 1')
        await new Promise((resolve) => setTimeout(resolve, 9000))
        await writer.books.create(book(2))
        const [after] = await take(changes, 1)
        assert.equal(after?.book?.title, 'Book 2')
        assert.notEqual(reader.token, before)
        await changes.return()
      },
    )
  })
}

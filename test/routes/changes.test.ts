import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { assertEnvelope, buildTestApp, dune, issueToken, storeEngines, TEST_USERNAME, withToken } from '../helpers.ts'

const solaris = { title: 'Solaris', author: 'Stanisław Lem', year: 1961 }

interface Book {
  id: number
  title: string
  author: string
  year: number
}

interface ChangeAnswer {
  seq: number
  book_id: number
  kind: string
  actor: string
  at: string
  book: Book | null
}

type Call = (options: InjectOptions) => Promise<LightMyRequestResponse>

async function session(app: FastifyInstance) {
  const token = await issueToken(app)
  const call: Call = (options) => app.inject(withToken(token, options))
  const create = async (book: object) =>
    assertEnvelope(await call({ method: 'POST', url: '/book', payload: book }), 201, 'Book created successfully') as Book
  return { call, create }
}

/** The path and query of a `Link: <…>; rel="next"` header. */
function nextOf(link: unknown): string {
  const match = /^<([^>]+)>; rel="next"$/.exec(String(link))
  assert.ok(match, `a Link to the next page, not ${String(link)}`)
  return match[1]!
}

/** The changes from `url` on, following each Link until a page comes back empty; and the link to read on from. */
async function follow(call: Call, url: string): Promise<{ changes: ChangeAnswer[]; next: string }> {
  const changes: ChangeAnswer[] = []
  for (;;) {
    const res = await call({ method: 'GET', url })
    const page = assertEnvelope(res, 200, 'Changes retrieved successfully') as ChangeAnswer[]
    const next = nextOf(res.headers.link)
    if (page.length === 0) return { changes, next }
    changes.push(...page)
    url = next
  }
}

/** What a client keeps of the catalogue: each change leaves the book as it carries it, or takes it away. */
function apply(copy: Map<number, Book>, changes: ChangeAnswer[]): Map<number, Book> {
  for (const change of changes) {
    if (change.kind === 'deleted' || change.kind === 'purged') copy.delete(change.book_id)
    else copy.set(change.book_id, change.book!)
  }
  return copy
}

function sorted(copy: Map<number, Book>): Book[] {
  return [...copy.values()].sort((a, b) => a.id - b.id)
}

for (const engine of storeEngines) {
  describe(`GET /books/changes (${engine.name})`, { skip: engine.skip }, () => {
    async function start(t: { after(fn: () => unknown): void }) {
      const app = await buildTestApp({}, { store: await engine.open() })
      t.after(() => app.close())
      return session(app)
    }

    it('answers every change after since, oldest first, with a Link to read on from the last one, always', async (t) => {
      const { call, create } = await start(t)
      const empty = await call({ method: 'GET', url: '/books/changes' })
      assertEnvelope(empty, 200, 'Changes retrieved successfully', [])
      assert.equal(nextOf(empty.headers.link), '/books/changes?limit=100&since=0')

      const book = await create(dune)
      await call({ method: 'PUT', url: `/book/${book.id}`, payload: { year: 1966 } })
      const other = await create(solaris)
      await call({ method: 'DELETE', url: `/book/${other.id}` })
      const res = await call({ method: 'GET', url: '/books/changes' })
      const changes = assertEnvelope(res, 200, 'Changes retrieved successfully') as ChangeAnswer[]
      assert.deepEqual(
        changes.map(({ book_id, kind, actor, book }) => ({ book_id, kind, actor, book })),
        [
          { book_id: book.id, kind: 'created', actor: TEST_USERNAME, book: { id: book.id, ...dune } },
          { book_id: book.id, kind: 'updated', actor: TEST_USERNAME, book: { id: book.id, ...dune, year: 1966 } },
          { book_id: other.id, kind: 'created', actor: TEST_USERNAME, book: { id: other.id, ...solaris } },
          { book_id: other.id, kind: 'deleted', actor: TEST_USERNAME, book: { id: other.id, ...solaris } },
        ],
      )
      for (const change of changes) {
        assert.deepEqual(Object.keys(change).sort(), ['actor', 'at', 'book', 'book_id', 'kind', 'seq'])
        assert.match(change.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      }
      const seqs = changes.map((change) => change.seq)
      assert.deepEqual(
        seqs,
        [...seqs].sort((a, b) => a - b),
      )
      assert.equal(nextOf(res.headers.link), `/books/changes?limit=100&since=${seqs.at(-1)}`)

      // Nothing new yet: the same link again, and what comes later is found there.
      const caughtUp = await call({ method: 'GET', url: nextOf(res.headers.link) })
      assertEnvelope(caughtUp, 200, 'Changes retrieved successfully', [])
      assert.equal(caughtUp.headers.link, res.headers.link)
      await call({ method: 'POST', url: `/book/${other.id}/restore` })
      const later = assertEnvelope(await call({ method: 'GET', url: nextOf(res.headers.link) }), 200, 'Changes retrieved successfully')
      assert.deepEqual(
        (later as ChangeAnswer[]).map((change) => change.kind),
        ['restored'],
      )
    })

    it('pages by limit: following the links gives every change once, in order', async (t) => {
      const { call, create } = await start(t)
      const { id } = await create(dune)
      for (let year = 1; year <= 6; year++) await call({ method: 'PUT', url: `/book/${id}`, payload: { year } })
      const all = (await call({ method: 'GET', url: '/books/changes' })).json().data as ChangeAnswer[]
      assert.equal(all.length, 7)
      const first = await call({ method: 'GET', url: '/books/changes?limit=3' })
      assert.deepEqual(first.json().data, all.slice(0, 3))
      assert.equal(nextOf(first.headers.link), `/books/changes?limit=3&since=${all[2]!.seq}`)
      const { changes } = await follow(call, nextOf(first.headers.link))
      assert.deepEqual(changes, all.slice(3))
      const since = await call({ method: 'GET', url: `/books/changes?since=${all[4]!.seq}&limit=1` })
      assert.deepEqual(since.json().data, [all[5]])
    })

    it('since=latest answers none, with a Link that starts at the newest change', async (t) => {
      const { call, create } = await start(t)
      const empty = await call({ method: 'GET', url: '/books/changes?since=latest' })
      assertEnvelope(empty, 200, 'Changes retrieved successfully', [])
      assert.equal(nextOf(empty.headers.link), '/books/changes?limit=100&since=0')
      const { id } = await create(dune)
      const newest = (await call({ method: 'GET', url: '/books/changes' })).json().data.at(-1) as ChangeAnswer
      const latest = await call({ method: 'GET', url: '/books/changes?since=latest&limit=5' })
      assertEnvelope(latest, 200, 'Changes retrieved successfully', [])
      assert.equal(nextOf(latest.headers.link), `/books/changes?limit=5&since=${newest.seq}`)
      await call({ method: 'PUT', url: `/book/${id}`, payload: { year: 1 } })
      const { changes } = await follow(call, nextOf(latest.headers.link))
      assert.deepEqual(
        changes.map((change) => change.kind),
        ['updated'],
      )
    })

    it('refuses a since that is not a whole number from 0 nor latest, and a limit out of range: 400 Invalid input', async (t) => {
      const { call } = await start(t)
      for (const query of [
        'since=-1',
        'since=1.5',
        'since=01',
        'since=x',
        'since=',
        'since=LATEST',
        'since=9007199254740992',
        'since=1&since=2',
        'limit=0',
        'limit=1001',
        'limit=x',
      ]) {
        assertEnvelope(await call({ method: 'GET', url: `/books/changes?${query}` }), 400, 'Invalid input', null)
      }
    })
  })
}

// In a database of its own, as the service runs: an SQLite file, whose whole reads hold a snapshot, or a server.
for (const engine of storeEngines) {
  describe(`a copy kept by a snapshot and the changes after it (${engine.name}, a database of its own)`, { skip: engine.skip }, () => {
    it('rebuilds the catalogue exactly, while a writer keeps changing it during the snapshot and after', async (t) => {
      const database = await engine.freshDatabase()
      const app = await buildTestApp({ dbUrl: database.dbUrl })
      t.after(async () => {
        await app.close()
        await database.drop()
      })
      const { call } = await session(app)
      const seeded = await call({
        method: 'POST',
        url: '/books/import',
        headers: { 'content-type': 'application/json' },
        payload: Array.from({ length: 3000 }, (_, i) => ({ title: `Book ${i}`, author: `Author ${i % 50}`, year: i % 2000 })),
      })
      assert.equal(seeded.statusCode, 201, seeded.body)
      const ids: number[] = seeded.json().data.ids

      // A writer that adds, changes, deletes and restores books across the whole catalogue, one after another.
      let writing = true
      let writes = 0
      const writer = (async () => {
        const deleted: number[] = []
        for (let n = 0; writing; n++) {
          const id = ids[(n * 7919) % ids.length]!
          if (n % 4 === 0) ids.push((await call({ method: 'POST', url: '/book', payload: { ...dune, year: n % 2000 } })).json().data.id)
          else if (n % 4 === 1) await call({ method: 'PUT', url: `/book/${id}`, payload: { title: `Changed ${n}` } })
          else if (n % 4 === 2 && (await call({ method: 'DELETE', url: `/book/${id}` })).statusCode === 200) deleted.push(id)
          else if (deleted.length > 0) await call({ method: 'POST', url: `/book/${deleted.shift()}/restore` })
          writes++
        }
      })()

      while (writes < 20) await new Promise((resolve) => setImmediate(resolve))
      const [list, exported] = await Promise.all([
        call({ method: 'GET', url: '/books' }),
        call({ method: 'GET', url: '/books/export?format=ndjson' }),
      ])
      const writesAfterSnapshots = writes
      while (writes < writesAfterSnapshots + 20) await new Promise((resolve) => setImmediate(resolve))
      writing = false
      await writer

      const store = (await call({ method: 'GET', url: '/books' })).json().data as Book[]
      const log = await follow(call, '/books/changes?since=0&limit=1000')
      for (const [name, res, books] of [
        ['GET /books', list, list.json().data as Book[]],
        [
          'export',
          exported,
          exported.body
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line) as Book),
        ],
      ] as const) {
        assert.equal(res.statusCode, 200)
        const seq = Number(res.headers['x-change-seq'])
        assert.ok(Number.isSafeInteger(seq) && seq > 0, `${name}: X-Change-Seq ${res.headers['x-change-seq']}`)
        // Every change up to the seq and none after it: exactly the catalogue the log rebuilds up to there.
        const upTo = log.changes.filter((change) => change.seq <= seq)
        assert.deepEqual(books, sorted(apply(new Map(), upTo)), `${name} reflects exactly the changes up to ${seq}`)
        const after = await follow(call, `/books/changes?since=${seq}`)
        assert.ok(after.changes.length > 0, `${name}: the writer went on after the snapshot`)
        const copy = apply(new Map(books.map((book) => [book.id, book])), after.changes)
        assert.deepEqual(sorted(copy), store, `${name}: the snapshot and the changes after it rebuild the catalogue`)
      }
    })
  })
}

import assert from 'node:assert/strict'
import { after, before, describe, it, type TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { loadMigrations } from '../../../src/store/migrations.ts'
import { findStatement } from '../../../src/store/sql/find.ts'
import { postgresFind } from '../../../src/store/postgres/find.ts'
import { PostgresStore, type PostgresOptions } from '../../../src/store/postgres/store.ts'
import { SEARCH_DEADLINE_MS, StoreUnavailableError, type ReadOptions } from '../../../src/store/store.ts'
import { dune, storeEngines } from '../../helpers.ts'
import { adminQuery, createTestSchema, TEST_DATABASE_URL, type TestSchema } from '../../support/postgres.ts'
import { listById } from '../../support/reads.ts'
import { expectedIds } from '../../support/book-search-model.ts'
import { startTcpProxy } from '../../support/tcp-proxy.ts'
import { closedPort } from '../../support/closed-port.ts'

const postgres = storeEngines.find((engine) => engine.name === 'postgres')!

/** How the statement of a page of books begins (findStatement), its planning's statements aside. */
const PAGE = 'SELECT id, title, author, year'

/**
 * Shows `seconds` each statement that the store sends, and holds up each for which it gives a number
 * that long on the server, by `pg_sleep` on its connection first: a find made as slow as a test
 * needs, where it runs.
 */
function onStatements(t: TestContext, seconds: (text: string, values: unknown[] | undefined) => number | undefined) {
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown
  t.mock.method(pg.Client.prototype, 'query', function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as string | { text?: string; values?: unknown[] }
    const { text = '', values } = typeof config === 'string' ? { text: config } : config
    const delay = seconds(text, values)
    const run = () => query.apply(this, args)
    return delay === undefined ? run() : query.call(this, `SELECT pg_sleep(${delay})`, run)
  })
}

function options(url: string): PostgresOptions {
  return { url, poolSize: 2, connectTimeoutMs: 1000, queryTimeoutMs: 2000 }
}

describe('postgres store', () => {
  it('fails to open with StoreUnavailableError when nothing listens', async () => {
    const url = `postgres://postgres@127.0.0.1:${await closedPort()}/test`
    await assert.rejects(PostgresStore.open(options(url)), StoreUnavailableError)
  })

  describe('on a database', { skip: postgres.skip }, () => {
    let schema: TestSchema
    before(async () => {
      schema = await createTestSchema()
    })
    after(() => schema?.drop())

    it('fails to open with StoreUnavailableError when the database does not exist', async () => {
      const url = new URL(TEST_DATABASE_URL)
      url.pathname = '/book_catalogue_no_such_database'
      await assert.rejects(PostgresStore.open(options(url.toString())), StoreUnavailableError)
    })

    it('records its migrations once, however often it is opened', async () => {
      for (let i = 0; i < 2; i++) await (await PostgresStore.open(options(schema.url))).close()
      const { rows } = await adminQuery(`SELECT version, name FROM ${schema.name}.schema_migrations ORDER BY version`)
      assert.deepEqual(
        rows,
        loadMigrations('postgres').map(({ version, name }) => ({ version, name })),
      )
    })

    it("looks for duplicates in one transaction at a time: the second sees the first's books, or gives up at its deadline", async () => {
      const store = await PostgresStore.open({ ...options(schema.url), poolSize: 8, queryTimeoutMs: 1000 })
      let stored!: () => void
      const storedNow = new Promise<void>((resolve) => (stored = resolve))
      let commit!: () => void
      const committing = new Promise<void>((resolve) => (commit = resolve))
      try {
        const first = store.transaction(async ({ books }) => {
          assert.deepEqual(await books.sameAs([dune]), [undefined])
          const [id] = await books.createMany('tester', [dune])
          stored()
          await committing
          return id
        })
        await storedNow
        // Looks outside a transaction (a dry run's) wait for no one, and see only what has committed.
        assert.deepEqual(await store.books.sameAs([dune]), [undefined])
        // Kept from committing past the deadline: the second's look gives up as unavailable.
        const started = performance.now()
        await assert.rejects(
          store.transaction(({ books }) => books.sameAs([dune])),
          StoreUnavailableError,
        )
        assert.ok(performance.now() - started >= 900, 'the look waited for the first transaction')
        // Let through: the second looks once the first has committed, and finds its book.
        const second = store.transaction(({ books }) => books.sameAs([dune]))
        setTimeout(commit, 100)
        const id = await first
        assert.deepEqual(await second, [id])
      } finally {
        commit()
        await store.close()
      }
    })

    it('asks whether any title is too long for the index of title lengths through its own index, before any ANALYZE', async () => {
      const store = await PostgresStore.open(options(schema.url))
      const client = new pg.Client(schema.url)
      try {
        // Just imported: the table has no statistics yet, as for a minute or so after a large import.
        const imported = Array.from({ length: 3000 }, (_, n) => ({ title: `The Book Number ${n}`, author: `Author ${n % 97}`, year: 2000 }))
        await store.transaction(({ books }) => books.createMany('tester', imported))
        await client.connect()
        const { rows } = await client.query(`EXPLAIN (FORMAT JSON) SELECT ${postgresFind.titleLengths!.complete.join(' AND ')}`)
        const plan = JSON.stringify(rows[0]['QUERY PLAN'])
        assert.match(plan, /books_long_title_words/)
        assert.doesNotMatch(plan, /Seq Scan/)
      } finally {
        await client.end()
        await store.close()
      }
    })

    it('reads a whole search sorted by a key in the order its walk reads, without sorting the books again', async () => {
      const store = await PostgresStore.open(options(schema.url))
      const client = new pg.Client(schema.url)
      try {
        const books = Array.from({ length: 3000 }, (_, n) => ({ title: `The Book Number ${n}`, author: `Author ${n % 97}`, year: 2000 }))
        await store.transaction(({ books: repository }) => repository.createMany('tester', books))
        await client.connect()
        // At this size a sort costs little: forbidden, it is left only where no plan can do without.
        await client.query('SET enable_sort = off')
        for (const field of ['title', 'author', 'year', 'id'] as const) {
          const query = {
            filter: { words: ['book'] },
            order: { relevance: false as const, keys: [{ field, descending: false }] },
            limit: 20,
          }
          const { text, values } = findStatement(query, postgresFind, { whole: true, plan: 'walk' })
          const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${text}`, values)
          assert.doesNotMatch(JSON.stringify(rows[0]['QUERY PLAN']), /"Sort"/, `sorted by ${field}`)
        }
      } finally {
        await client.end()
        await store.close()
      }
    })

    it('gives the first page of a whole read by relevance from the top tier, before the cursor ranks the other matches', async (t) => {
      const store = await PostgresStore.open(options(schema.url))
      t.after(() => store.close())
      // Titles that begin with the words, the top tier, and others that hold them further on.
      const books = Array.from({ length: 600 }, (_, i) =>
        i % 7 === 0
          ? { title: `Theory of the Old ${i}`, author: 'Anonymous', year: 2000 }
          : { title: `The Old ${'x'.repeat(1 + (i % 30))}`, author: 'Anonymous', year: 2000 },
      )
      const ids = await store.transaction(({ books: repository }) => repository.createMany('tester', books))
      const stored = books.map((book, i) => ({ ...book, id: ids[i]!, revision: 1 }))
      const fetched: string[] = []
      onStatements(t, (text) => {
        if (text.startsWith('FETCH')) fetched.push(text)
        return undefined
      })
      const pages = await store.reader.pages({ filter: { words: ['the', 'old'] }, order: { relevance: true }, limit: 10 }, { whole: true })
      const read: number[] = []
      try {
        assert.deepEqual(fetched, [], 'the first page came without the cursor')
        for await (const page of pages) read.push(...page.map(({ book }) => book.id))
      } finally {
        // A read left open keeps its connection, and the store's closing waits for it.
        await pages.close()
      }
      assert.ok(fetched.length > 0)
      assert.deepEqual(read, expectedIds(stored, { q: 'the old' }))
    })

    /**
     * A whole read by relevance of the catalogue's first books, the first page through the top tier,
     * whose cursor's first FETCH, the ranking of every match after that page, is held up `seconds`
     * on the server before it runs.
     */
    async function slowRanking(t: TestContext, seconds: number) {
      const store = await PostgresStore.open(options(schema.url))
      t.after(() => store.close())
      const books = Array.from({ length: 300 }, (_, i) => ({
        title: `The Rank ${'y'.repeat(1 + (i % 40))}`,
        author: 'Anonymous',
        year: 2000,
      }))
      const ids = await store.transaction(({ books: repository }) => repository.createMany('tester', books))
      const stored = books.map((book, i) => ({ ...book, id: ids[i]!, revision: 1 }))
      let held = false
      onStatements(t, (text) => {
        if (held || !text.startsWith('FETCH')) return undefined
        held = true
        return seconds
      })
      const pages = await store.reader.pages({ filter: { words: ['the', 'rank'] }, order: { relevance: true }, limit: 10 }, { whole: true })
      return { pages, expected: expectedIds(stored, { q: 'the rank' }) }
    }

    it('gives every book of a whole read by relevance whose ranking after the first page outlasts the deadline of a page', async (t) => {
      const { pages, expected } = await slowRanking(t, (SEARCH_DEADLINE_MS + 500) / 1000)
      const read: number[] = []
      try {
        for await (const page of pages) read.push(...page.map(({ book }) => book.id))
      } finally {
        await pages.close()
      }
      assert.deepEqual(read, expected)
    })

    it('stops the ranking of a whole read on the server within seconds of the read being ended', async (t) => {
      const seconds = 6.125
      const { pages } = await slowRanking(t, seconds)
      const iterator = pages[Symbol.asyncIterator]()
      await iterator.next()
      const ranking = iterator.next()
      ranking.catch(() => {})
      const sleeping = async () =>
        Number((await adminQuery(`SELECT count(*) AS n FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(${seconds})'`)).rows[0].n)
      while ((await sleeping()) === 0) await sleep(20)
      const ended = performance.now()
      await pages.close()
      while ((await sleeping()) > 0) await sleep(50)
      const stoppedAfter = performance.now() - ended
      // Sooner than any deadline would stop it, a page's included.
      assert.ok(stoppedAfter < SEARCH_DEADLINE_MS, `stopped ${Math.round(stoppedAfter)} ms after the read ended`)
      await assert.rejects(ranking)
    })

    it("answers one client's find while another's many slow ones wait their turns, and each within its deadline or not at all", async (t) => {
      // Eight connections: a quarter of them, two, for finds.
      const store = await PostgresStore.open({ ...options(schema.url), poolSize: 8 })
      t.after(() => store.close())
      await store.books.create('tester', { title: 'Quick Find', author: 'Anonymous', year: 2000 })
      // The page of each of the busy client's finds takes 600 ms on the server, the other's 300.
      onStatements(t, (text, values) => (text.startsWith(PAGE) ? (values?.includes('%zzslow%') === true ? 0.6 : 0.3) : undefined))
      const find = (client: string, titleContains: string) => {
        const started = performance.now()
        return store.reader
          .pages(
            { filter: { titleContains }, order: { relevance: false, keys: [{ field: 'id', descending: false }] }, limit: 10 },
            { client },
          )
          .then(
            async (pages) => {
              const found: number[] = []
              for await (const page of pages) found.push(...page.map(({ book }) => book.id))
              return { ms: performance.now() - started, found }
            },
            (err: unknown) => ({ ms: performance.now() - started, err }),
          )
      }
      const busy = Array.from({ length: 8 }, () => find('busy', 'zzslow'))
      await sleep(50)
      const other = await find('other', 'quick')
      assert.ok('found' in other, `the other client's find failed after ${Math.round(other.ms)} ms`)
      assert.equal(other.found.length, 1)
      for (const answer of await Promise.all(busy)) {
        if ('err' in answer) assert.ok(answer.err instanceof StoreUnavailableError)
        else assert.ok(answer.ms < SEARCH_DEADLINE_MS + 250, `a find answered after ${Math.round(answer.ms)} ms`)
      }
    })

    it('sends no statement of a find whose client went while it waited for its turn', async (t) => {
      // Eight connections: two for finds, both taken by the busy client's slow pages.
      const store = await PostgresStore.open({ ...options(schema.url), poolSize: 8 })
      t.after(() => store.close())
      const sent: string[] = []
      onStatements(t, (text, values) => {
        if (values?.includes('%zzgone%') === true) sent.push(text)
        return text.startsWith(PAGE) && values?.includes('%zzslow%') === true ? 0.5 : undefined
      })
      const order = { relevance: false as const, keys: [{ field: 'id' as const, descending: false }] }
      const find = (titleContains: string, options: ReadOptions) =>
        store.reader.pages({ filter: { titleContains }, order, limit: 10 }, options)
      const busy = [find('zzslow', { client: 'busy' }), find('zzslow', { client: 'busy' })]
      await sleep(50)
      const gone = new AbortController()
      const refused = assert.rejects(find('zzgone', { client: 'other', signal: gone.signal }), StoreUnavailableError)
      await sleep(50)
      gone.abort()
      await Promise.all(busy)
      await refused
      assert.deepEqual(sent, [])
    })

    it("answers one client's find without waiting for a connection behind another's page and count", async (t) => {
      const store = await PostgresStore.open({ ...options(schema.url), poolSize: 8 })
      t.after(() => store.close())
      await store.books.create('tester', { title: 'Swift Answer', author: 'Anonymous', year: 2000 })
      // The page and the count of each of the busy client's finds take a second each on the server.
      onStatements(t, (text, values) =>
        values?.includes('%zzcount%') === true && (text.startsWith(PAGE) || text.endsWith(' AS total')) ? 1 : undefined,
      )
      const order = { relevance: false as const, keys: [{ field: 'id' as const, descending: false }] }
      const busy = Array.from({ length: 4 }, () =>
        store.reader.pages({ filter: { titleContains: 'zzcount' }, order, limit: 10, count: true }, { client: 'busy' }).catch(() => {}),
      )
      await sleep(50)
      const started = performance.now()
      const pages = await store.reader.pages({ filter: { titleContains: 'swift answer' }, order, limit: 10 }, { client: 'other' })
      const ms = performance.now() - started
      for await (const page of pages) assert.equal(page.length, 1)
      await Promise.all(busy)
      // Its turn comes once the first find's page and count have ended, and it has a connection at
      // once: no find that has a turn holds two connections.
      assert.ok(ms < 1600, `answered after ${Math.round(ms)} ms`)
    })

    it('keeps a connection for pages while whole reads that their client does not read hold the others', async (t) => {
      const store = await PostgresStore.open({ ...options(schema.url), poolSize: 8 })
      t.after(() => store.close())
      const books = Array.from({ length: 30 }, (_, i) => ({ title: `Held Open ${i}`, author: 'Anonymous', year: 2000 }))
      await store.transaction(({ books: repository }) => repository.createMany('tester', books))
      const order = { relevance: false as const, keys: [{ field: 'id' as const, descending: false }] }
      const whole = () => store.reader.pages({ filter: { titleContains: 'held open' }, order, limit: 5 }, { whole: true, client: 'slow' })
      // Two finds' connections: the first whole read holds one for as long as it is not read.
      const held = await whole()
      const second = whole()
      second.catch(() => {})
      try {
        const started = performance.now()
        const pages = await store.reader.pages({ filter: { titleContains: 'held open 29' }, order, limit: 5 }, { client: 'other' })
        const ms = performance.now() - started
        for await (const page of pages) assert.equal(page.length, 1)
        assert.ok(ms < SEARCH_DEADLINE_MS / 2, `answered after ${Math.round(ms)} ms`)
        await assert.rejects(second, StoreUnavailableError)
      } finally {
        // A read left open keeps its connection, and the store's closing waits for it.
        await held.close()
        await second.then(
          (pages) => pages.close(),
          () => {},
        )
      }
    })

    it('returns ids beyond 32 bits as exact JSON numbers', async () => {
      const store = await PostgresStore.open(options(schema.url))
      try {
        await adminQuery(`ALTER TABLE ${schema.name}.books ALTER COLUMN id RESTART WITH 4503599627370496`)
        const created = await store.books.create('tester', dune)
        assert.equal(created.id, 4503599627370496)
        assert.equal(JSON.stringify((await listById(store, created.id - 1, 1))[0]?.id), '4503599627370496')
      } finally {
        await store.close()
      }
    })

    it('keeps the connections it opened however long they idle, and finds again on them', async (t) => {
      const server = new URL(TEST_DATABASE_URL)
      const proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) })
      t.after(() => proxy.close())
      const throughProxy = new URL(schema.url)
      throughProxy.hostname = '127.0.0.1'
      throughProxy.port = String(proxy.port)
      // From the start, so that every timer the pools set on an idle connection is one the test moves.
      t.mock.timers.enable({ apis: ['setTimeout'] })
      // Deadlines beyond the clock's move: a step of the summaries, a statement or a connection under
      // way when the clock moves would otherwise fail on its deadline and close its connection.
      const store = await PostgresStore.open({
        url: throughProxy.toString(),
        poolSize: 4,
        connectTimeoutMs: 60_000,
        queryTimeoutMs: 60_000,
      })
      t.after(() => store.close())
      // A title of its own: the tests of this schema share its books.
      const { id } = await store.books.create('tester', { title: 'Idle Connections', author: 'Anonymous', year: 2000 })
      const find = async () => {
        const pages = await store.reader.pages({
          filter: { words: ['idle', 'connections'] },
          order: { relevance: true },
          limit: 10,
          count: true,
        })
        await pages.close()
        return pages
      }
      assert.equal((await find()).total, 1)
      assert.equal((await store.books.get(id))?.title, 'Idle Connections')
      const open = proxy.openConnections()
      assert.ok(open >= 2, `${open} connections`)

      // Past pg's idle timeout (10 s unless set) and short of the store's deadlines.
      t.mock.timers.tick(30_000)
      t.mock.timers.reset()
      // Long enough for a connection that the pool ends to close its socket.
      await sleep(300)
      assert.equal(proxy.openConnections(), open)
      const connected = proxy.nextConnection().then(() => 'a new connection')
      assert.equal((await find()).total, 1)
      assert.equal(await Promise.race([connected, new Promise(setImmediate).then(() => 'none')]), 'none')
    })

    it('gives up a summary of blocks that a stalled server leaves unanswered, and reads again on a new connection', async () => {
      const server = new URL(TEST_DATABASE_URL)
      const proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) })
      const throughProxy = new URL(schema.url)
      throughProxy.hostname = '127.0.0.1'
      throughProxy.port = String(proxy.port)
      // A pool of two leaves reads by id, writes and the summaries one connection between them.
      const store = await PostgresStore.open({ ...options(throughProxy.toString()), queryTimeoutMs: 1000 })
      try {
        const { id } = await store.books.create('tester', dune)
        proxy.stall()
        // Nothing else asks meanwhile: the summaries' look for blocks, each second, takes the connection.
        await sleep(1500)
        // The stalled connection stays open and silent: only the store can give up on it.
        proxy.thaw()
        const read = () => store.books.get(id).catch((err: unknown) => err)
        const started = performance.now()
        let answer = await read()
        while (answer instanceof StoreUnavailableError && performance.now() - started < 10_000) {
          await sleep(100)
          answer = await read()
        }
        assert.equal((answer as { id?: number } | undefined)?.id, id)
      } finally {
        // Cut first: a look still waiting on a stalled connection would keep the store from closing.
        await proxy.close()
        await store.close()
      }
    })
  })
})

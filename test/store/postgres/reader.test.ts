import assert from 'node:assert/strict'
import { after, before, describe, it, type TestContext } from 'node:test'
import pg from 'pg'
import type { NewBook } from '../../../src/books/book.ts'
import type { FindQuery } from '../../../src/books/find.ts'
import { PostgresStore } from '../../../src/store/postgres/store.ts'
import type { Store } from '../../../src/store/store.ts'
import { storeEngines } from '../../helpers.ts'
import { createTestSchema } from '../../support/postgres.ts'
import { findPage } from '../../support/reads.ts'

const postgres = storeEngines.find((engine) => engine.name === 'postgres')!

/** What the store asks of the server for a statement to run in its connection's process alone. */
const ALONE = 'SET LOCAL max_parallel_workers_per_gather = 0'
/** What the store asks of the server for a find to read the whole table. */
const WHOLE_TABLE = 'SET LOCAL enable_bitmapscan = off'

const BOOKS = 50_000

/**
 * The catalogue: "lake" in every tenth title (10 %), "stone" in every 24th (4.2 %), spread evenly
 * over the table's pages; no title begins with either, so no walk through the top tier finds their
 * page and every match is ranked. Thirty titles begin with "dune": a walk finds their page.
 */
function book(i: number): NewBook {
  const word = i % 10 === 1 ? 'lake' : i % 24 === 0 ? 'stone' : 'book'
  return { title: i < 30 ? `Dune ${i}` : `The ${word} ${i}`, author: `Author ${i % 50}`, year: 2000 + (i % 20) }
}

/** How many books of the catalogue hold `word` in their title. */
const holding = (word: string) => Array.from({ length: BOOKS }, (_, i) => book(i)).filter(({ title }) => title.includes(word)).length

const byRelevance = (word: string, count: boolean): FindQuery => ({
  filter: { words: [word] },
  order: { relevance: true },
  limit: 20,
  count,
})

/** The statements that every connection sends from now until the test ends. */
function statementsSent(t: TestContext): string[] {
  const sent: string[] = []
  const query = pg.Client.prototype.query
  t.mock.method(pg.Client.prototype, 'query', function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as string | pg.QueryConfig
    sent.push(typeof config === 'string' ? config : config.text)
    return (query as (...given: unknown[]) => unknown).apply(this, args)
  } as typeof query)
  return sent
}

describe("a PostgreSQL store's finds by relevance", { skip: postgres.skip }, () => {
  let schema: Awaited<ReturnType<typeof createTestSchema>>
  let store: Store

  before(async () => {
    schema = await createTestSchema()
    store = await PostgresStore.open({ url: schema.url, poolSize: 8, connectTimeoutMs: 2000, queryTimeoutMs: 10_000 })
    for (let first = 0; first < BOOKS; first += 10_000) {
      await store.books.createMany(
        'tester',
        Array.from({ length: 10_000 }, (_, i) => book(first + i)),
      )
    }
  })
  after(async () => {
    await store.close()
    await schema.drop()
  })

  it('rank many matches beside their count, each in a process of its own; a page that a walk finds, as before', async (t) => {
    const sent = statementsSent(t)
    const many = await findPage(store, byRelevance('lake', true))
    assert.equal(many.total, holding('lake'))
    assert.equal(sent.filter((text) => text === ALONE).length, 2, 'the page and its count, each')

    sent.length = 0
    const few = await findPage(store, byRelevance('dune', true))
    assert.equal(few.total, holding('Dune'))
    assert.deepEqual(
      sent.filter((text) => text === ALONE),
      [],
    )

    t.mock.restoreAll()
    assert.deepEqual(many.found, (await findPage(store, byRelevance('lake', false))).found)
    assert.deepEqual(few.found, (await findPage(store, byRelevance('dune', false))).found)
  })

  it('rank many matches that a large share of the books hold by reading the whole table, others through the index', async (t) => {
    const sent = statementsSent(t)
    const dense = await findPage(store, byRelevance('lake', false))
    assert.equal(sent.filter((text) => text === WHOLE_TABLE).length, 1)

    sent.length = 0
    const sparse = await findPage(store, byRelevance('stone', false))
    assert.deepEqual(
      sent.filter((text) => text === WHOLE_TABLE),
      [],
    )

    t.mock.restoreAll()
    // The same books as through the index, in the same order.
    assert.deepEqual(dense.found, (await findPage(store, byRelevance('lake', true))).found)
    assert.equal(sparse.found.length, 20)
    assert.deepEqual(sparse.found, (await findPage(store, byRelevance('stone', true))).found)
  })
})

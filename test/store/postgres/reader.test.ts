import assert from 'node:assert/strict'
import { after, before, describe, it, type TestContext } from 'node:test'
import pg from 'pg'
import type { NewBook } from '../../../src/books/book.ts'
import type { FindQuery } from '../../../src/books/find.ts'
import { PostgresStore } from '../../../src/store/postgres/store.ts'
import { storeEngines } from '../../helpers.ts'
import { createTestSchema } from '../../support/postgres.ts'
import { findPage } from '../../support/reads.ts'

const postgres = storeEngines.find((engine) => engine.name === 'postgres')!

/** What the store asks of the server for a statement to run in its connection's process alone. */
const ALONE = 'SET LOCAL max_parallel_workers_per_gather = 0'

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
  /** A store whose finds have `poolSize / 4` connections, and as many turns. */
  const storeOf = async (t: TestContext, poolSize: number) => {
    const store = await PostgresStore.open({ url: schema.url, poolSize, connectTimeoutMs: 2000, queryTimeoutMs: 5000 })
    t.after(() => store.close())
    return store
  }

  before(async () => {
    schema = await createTestSchema()
    // No title begins with "river": no walk through the top tier finds a page, and all 2,500 are
    // ranked. Titles begin with "dune": a walk through the top tier finds its page.
    const rivers: NewBook[] = Array.from({ length: 2500 }, (_, i) => ({
      title: `The river ${i}`,
      author: `Author ${i % 50}`,
      year: 2000 + (i % 20),
    }))
    const dunes: NewBook[] = Array.from({ length: 30 }, (_, i) => ({ title: `Dune ${i}`, author: 'Frank Herbert', year: 1965 }))
    const store = await PostgresStore.open({ url: schema.url, poolSize: 4, connectTimeoutMs: 2000, queryTimeoutMs: 5000 })
    await store.books.createMany('tester', [...rivers, ...dunes])
    await store.close()
  })
  after(() => schema.drop())

  it('rank many matches beside their count, each in a process of its own; a page that a walk finds, as before', async (t) => {
    const store = await storeOf(t, 8)
    const sent = statementsSent(t)
    const many = await findPage(store, byRelevance('river', true))
    assert.equal(many.total, 2500)
    assert.equal(sent.filter((text) => text === ALONE).length, 2, 'the page and its count, each')

    sent.length = 0
    const few = await findPage(store, byRelevance('dune', true))
    assert.equal(few.total, 30)
    assert.deepEqual(
      sent.filter((text) => text === ALONE),
      [],
    )

    t.mock.restoreAll()
    assert.deepEqual(many.found, (await findPage(store, byRelevance('river', false))).found)
    assert.deepEqual(few.found, (await findPage(store, byRelevance('dune', false))).found)
  })

  it('rank many matches beside a count not asked for while a turn is free, and say no count', async (t) => {
    const store = await storeOf(t, 8)
    const sent = statementsSent(t)
    const page = await findPage(store, byRelevance('river', false))
    assert.equal(page.total, undefined)
    assert.equal(sent.filter((text) => text === ALONE).length, 2, 'the page and the count beside it, each')
    t.mock.restoreAll()
    assert.deepEqual(page, { found: (await findPage(store, byRelevance('river', true))).found })
  })

  it('rank many matches with the server’s workers when no other turn is free', async (t) => {
    // One connection for finds, and one turn, which the page holds.
    const store = await storeOf(t, 4)
    const sent = statementsSent(t)
    const page = await findPage(store, byRelevance('river', false))
    assert.equal(page.found.length, 20)
    assert.deepEqual(
      sent.filter((text) => text === ALONE),
      [],
    )
  })
})

import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
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

const byRelevance = (word: string): FindQuery => ({ filter: { words: [word] }, order: { relevance: true }, limit: 20, count: true })

describe("a PostgreSQL store's finds", { skip: postgres.skip }, () => {
  it('rank many matches beside their count, each in a process of its own; a page that a walk finds, as before', async (t) => {
    const schema = await createTestSchema()
    const store = await PostgresStore.open({ url: schema.url, poolSize: 8, connectTimeoutMs: 2000, queryTimeoutMs: 5000 })
    t.after(async () => {
      await store.close()
      await schema.drop()
    })
    // No title begins with "river": no walk through the top tier finds a page, and all 2,500 are
    // ranked. Titles begin with "dune": a walk through the top tier finds its page.
    const rivers: NewBook[] = Array.from({ length: 2500 }, (_, i) => ({
      title: `The river ${i}`,
      author: `Author ${i % 50}`,
      year: 2000 + (i % 20),
    }))
    const dunes: NewBook[] = Array.from({ length: 30 }, (_, i) => ({ title: `Dune ${i}`, author: 'Frank Herbert', year: 1965 }))
    await store.books.createMany('tester', [...rivers, ...dunes])
    const uncounted = (word: string) => findPage(store, { ...byRelevance(word), count: false })
    const sent: string[] = []
    const query = pg.Client.prototype.query
    t.mock.method(pg.Client.prototype, 'query', function (this: pg.Client, ...args: unknown[]) {
      const config = args[0] as string | pg.QueryConfig
      sent.push(typeof config === 'string' ? config : config.text)
      return (query as (...given: unknown[]) => unknown).apply(this, args)
    } as typeof query)

    const many = await findPage(store, byRelevance('river'))
    assert.equal(many.total, 2500)
    assert.equal(sent.filter((text) => text === ALONE).length, 2, 'the page and its count, each')

    sent.length = 0
    const few = await findPage(store, byRelevance('dune'))
    assert.equal(few.total, 30)
    assert.deepEqual(
      sent.filter((text) => text === ALONE),
      [],
    )

    t.mock.restoreAll()
    assert.deepEqual(many.found, (await uncounted('river')).found)
    assert.deepEqual(few.found, (await uncounted('dune')).found)
  })
})

import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { PostgresStore } from '../../../src/store/postgres/store.ts'
import { dune, storeEngines } from '../../helpers.ts'
import { createTestSchema } from '../../support/postgres.ts'
import { findPage } from '../../support/reads.ts'

const postgres = storeEngines.find((engine) => engine.name === 'postgres')!

// In a process of its own (npm test's --own-process): pg warns of a queue of statements once per process.
describe("a PostgreSQL store's new connections", { skip: postgres.skip }, () => {
  it('are lent out with no statement queued on them', async (t) => {
    const warnings: Error[] = []
    const heard = (warning: Error) => warnings.push(warning)
    process.on('warning', heard)
    const schema = await createTestSchema()
    const store = await PostgresStore.open({ url: schema.url, poolSize: 8, connectTimeoutMs: 2000, queryTimeoutMs: 5000 })
    t.after(async () => {
      process.off('warning', heard)
      await store.close()
      await schema.drop()
    })
    // Writes and reads at once, on as many new connections of both pools as they take.
    const created = await Promise.all(Array.from({ length: 8 }, () => store.books.create('tester', dune)))
    await Promise.all([
      ...created.map((book) => store.books.get(book.id)),
      ...Array.from({ length: 4 }, () =>
        findPage(store, { filter: { words: ['dune'] }, order: { relevance: true }, limit: 20, count: true }),
      ),
    ])
    // Warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual(
      warnings.map((warning) => warning.message),
      [],
    )
  })
})

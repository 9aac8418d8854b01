import { PostgresStore } from '../../src/store/postgres/store.ts'
import type { Store } from '../../src/store/store.ts'
import { atFileEnd } from './file-end.ts'
import { createTestSchema } from './postgres.ts'

const unclosed = new Set<Store>()

// Suites written for the in-memory SQLite store may not close what they open; an open pool would
// keep the test process alive and leave its schema behind.
atFileEnd(async () => {
  await Promise.all([...unclosed].map((store) => store.close()))
})

/**
 * A store on a fresh schema that is dropped when the store is closed. Its pool of two gives
 * writes one connection, so that transactions take turns; a larger one lets them overlap.
 */
export async function openTestPostgresStore({ poolSize = 2 }: { poolSize?: number } = {}): Promise<Store> {
  const schema = await createTestSchema()
  let store: PostgresStore
  try {
    store = await PostgresStore.open({ url: schema.url, poolSize, connectTimeoutMs: 2000, queryTimeoutMs: 4000 })
  } catch (err) {
    await schema.drop()
    throw err
  }
  // The store itself, so that whatever it holds reaches the tests; only closing does more.
  const close = store.close.bind(store)
  const testStore: Store = Object.assign(store, {
    close: async () => {
      if (!unclosed.delete(testStore)) return
      await close()
      await schema.drop()
    },
  })
  unclosed.add(testStore)
  return testStore
}

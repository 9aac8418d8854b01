import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import { once } from 'node:events'
import { after, before, describe, it } from 'node:test'
import { loadMigrations } from '../../../src/store/migrations.ts'
import { PostgresStore, type PostgresOptions } from '../../../src/store/postgres/store.ts'
import { StoreUnavailableError } from '../../../src/store/store.ts'
import { dune, storeEngines } from '../../helpers.ts'
import { adminQuery, createTestSchema, TEST_DATABASE_URL, type TestSchema } from '../../support/postgres.ts'
import { listById } from '../../support/reads.ts'

const postgres = storeEngines.find((engine) => engine.name === 'postgres')!

function options(url: string): PostgresOptions {
  return { url, poolSize: 2, connectTimeoutMs: 1000, queryTimeoutMs: 2000 }
}

/** A local port that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
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
  })
})

import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { after, before, describe, it, type TestContext } from 'node:test'
import { readMigrations, type Migration } from '../../src/store/migrations.ts'
import { migratePostgres } from '../../src/store/postgres/migrate.ts'
import { storeEngines } from '../helpers.ts'
import { adminQuery, createTestSchema, type TestSchema } from '../support/postgres.ts'

const postgres = storeEngines.find((engine) => engine.name === 'postgres')!

/** A folder of migration files, removed when the test ends. */
async function migrationFolder(t: TestContext, files: Record<string, string>): Promise<URL> {
  const dir = await mkdtemp(join(tmpdir(), 'migrations-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  for (const [name, sql] of Object.entries(files)) await writeFile(join(dir, name), sql)
  return pathToFileURL(`${dir}/`)
}

describe('migration files', () => {
  it('run in a transaction unless their first line opts out', async (t) => {
    const dir = await migrationFolder(t, {
      '001_table.sql': 'CREATE TABLE t (id integer);\n',
      '002_index.sql': '-- migrate: no-transaction\nCREATE INDEX CONCURRENTLY t_id ON t (id);\n',
      '003_later_marker.sql': 'SELECT 1;\n-- migrate: no-transaction\n',
      '004_other_comment.sql': '-- migrate: no-transactions\nSELECT 1;\n',
      '005_crlf.sql': '-- migrate: no-transaction\r\nSELECT 1;\r\n',
    })
    assert.deepEqual(
      readMigrations(dir).map(({ version, transaction }) => [version, transaction]),
      [
        [1, true],
        [2, false],
        [3, true],
        [4, true],
        [5, false],
      ],
    )
  })
})

describe('postgres migrations', { skip: postgres.skip }, () => {
  const table: Migration = { version: 1, name: 'table', sql: 'CREATE TABLE t (id integer)', transaction: true }
  const concurrentIndex = (transaction: boolean): Migration => ({
    version: 2,
    name: 'index',
    sql: 'CREATE INDEX CONCURRENTLY t_id ON t (id)',
    transaction,
  })
  let schema: TestSchema
  before(async () => {
    schema = await createTestSchema()
  })
  after(() => schema?.drop())

  async function state(name: string) {
    const recorded = await adminQuery(`SELECT version FROM ${name}.schema_migrations ORDER BY version`)
    const indexes = await adminQuery(
      `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = 't_id'`,
      [name],
    )
    return { recorded: recorded.rows.map((row) => row.version as number), indexes: indexes.rows }
  }

  it('runs a migration that opts out of the transaction on its own, and records it', async () => {
    await migratePostgres(schema.url, 2000, [table, concurrentIndex(false)])
    assert.deepEqual(await state(schema.name), { recorded: [1, 2], indexes: [{ valid: true }] })
  })

  it('cannot build an index concurrently inside the transaction, and records nothing it did not apply', async (t) => {
    const other = await createTestSchema()
    t.after(other.drop)
    await assert.rejects(migratePostgres(other.url, 2000, [table, concurrentIndex(true)]), /transaction block/)
    assert.deepEqual(await state(other.name), { recorded: [1], indexes: [] })
  })

  it('applies each migration once when instances migrate together', async (t) => {
    const other = await createTestSchema()
    t.after(other.drop)
    await Promise.all(Array.from({ length: 3 }, () => migratePostgres(other.url, 2000, [table, concurrentIndex(false)])))
    assert.deepEqual(await state(other.name), { recorded: [1, 2], indexes: [{ valid: true }] })
  })
})

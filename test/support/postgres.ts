import { randomBytes } from 'node:crypto'
import { setTimeout } from 'node:timers/promises'
import pg from 'pg'

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test'

/** Where the suite's global setup leaves its verdict for the test files: the reason, or empty when reachable. */
const VERDICT = 'TEST_POSTGRES_UNREACHABLE'

/**
 * Why the test database cannot be used, or undefined when it answers. Asked once per run by the
 * global setup; a test file reads that verdict instead of asking again while other files load
 * the machine, and asks itself only when run on its own.
 */
export async function postgresUnreachableReason(): Promise<string | undefined> {
  const verdict = process.env[VERDICT] ?? (await probePostgres())
  process.env[VERDICT] = verdict
  return verdict === '' ? undefined : verdict
}

/** A refused connection fails at once; the long timeout only keeps a busy server from counting as absent. */
async function probePostgres(): Promise<string> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 15_000 })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.query('SELECT 1')
    return ''
  } catch (err) {
    return `${redacted(TEST_DATABASE_URL)} is unreachable (${(err as Error).message})`
  } finally {
    await client.end()
  }
}

function redacted(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//')
}

let admin: pg.Pool | undefined

/** Runs one statement as the test database's owner, outside any test schema. */
export async function adminQuery(text: string, values?: unknown[]): Promise<pg.QueryResult> {
  if (admin === undefined) {
    admin = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2, allowExitOnIdle: true })
    admin.on('error', () => {})
  }
  return admin.query(text, values)
}

/** A session of its own as the test database's owner, for holding a transaction open. */
export async function connectAdmin(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
  client.on('error', () => {})
  await client.connect()
  return client
}

export interface TestSchema {
  name: string
  /** TEST_DATABASE_URL with this schema as the search path: what DB_URL is set to. */
  url: string
  drop(): Promise<void>
}

/** A new, empty schema in the test database. */
export async function createTestSchema(): Promise<TestSchema> {
  const name = `book_catalogue_test_${randomBytes(6).toString('hex')}`
  await adminQuery(`CREATE SCHEMA ${name}`)
  const url = new URL(TEST_DATABASE_URL)
  url.searchParams.set('options', `-c search_path=${name}`)
  return {
    name,
    url: url.toString(),
    drop: async () => {
      await adminQuery(`DROP SCHEMA IF EXISTS ${name} CASCADE`)
    },
  }
}

/**
 * Polls until `count` other sessions wait for the transaction open on `holder` to end; false after
 * `timeoutMs`. Only waiters on that one transaction count, whatever else runs on the server.
 */
export async function sessionsWaitingFor(holder: pg.Client, count: number, timeoutMs: number): Promise<boolean> {
  const { rows: held } = await holder.query(
    `SELECT transactionid::text AS xid FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'transactionid' AND granted`,
  )
  if (held.length === 0) throw new Error('the holder has no transaction that others could wait for')
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const { rows } = await adminQuery(
      `SELECT count(*)::int AS waiting FROM pg_locks WHERE locktype = 'transactionid' AND transactionid::text = $1 AND NOT granted`,
      [held[0].xid],
    )
    if (rows[0].waiting >= count) return true
    await setTimeout(100)
  }
  return false
}

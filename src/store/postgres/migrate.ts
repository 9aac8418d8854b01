import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { loadMigrations, type Migration } from '../migrations.ts'
import { fillSearchKeys } from './search-keys.ts'

/** How the service's sessions are named in pg_stat_activity. */
export const APPLICATION_NAME = 'book-catalogue'

/**
 * Migrating, or waiting for another instance that migrates, may take longer than a request
 * may; this bound still keeps a server that stalls half-way from holding start-up forever.
 */
const MIGRATION_TIMEOUT_MS = 60_000

/**
 * Work that SQL cannot do, run right after the migration of that name and recorded with it, in
 * its transaction: filling columns from the service's own code.
 */
const FOLLOW_UPS: Record<string, (client: pg.ClientBase) => Promise<void>> = {
  find_books: fillSearchKeys,
}

/** How often an instance asks again for the lock that another instance migrating holds. */
const LOCK_RETRY_MS = 100

// The key names the schema: deployments sharing a database do not wait on each other.
const LOCK_KEY = `hashtextextended('book-catalogue migrations ' || current_schema(), 0)`

/** Brings the schema at `url` up to date, once however many instances start together. */
export async function migratePostgres(
  url: string,
  connectTimeoutMs: number,
  migrations: Migration[] = loadMigrations('postgres'),
): Promise<void> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: connectTimeoutMs,
    query_timeout: MIGRATION_TIMEOUT_MS,
    statement_timeout: MIGRATION_TIMEOUT_MS,
    application_name: APPLICATION_NAME,
  })
  // A broken connection fails the running statement as well; unheard, this event would be thrown.
  client.on('error', () => {})
  try {
    await client.connect()
    await lockMigrations(client)
    await applyMigrations(client, migrations)
  } finally {
    // Ending the session releases the lock and rolls back a migration that failed half-way.
    await client.end()
  }
}

/**
 * Instances that start together queue here, so each migration runs once and the others then find
 * it recorded. They ask again and again rather than wait inside `pg_advisory_lock`: a waiting
 * statement holds a snapshot, which `CREATE INDEX CONCURRENTLY` in the instance that migrates
 * would wait for in turn, a deadlock.
 */
async function lockMigrations(client: pg.Client): Promise<void> {
  const giveUpAt = Date.now() + MIGRATION_TIMEOUT_MS
  for (;;) {
    const { rows } = await client.query<{ locked: boolean }>(`SELECT pg_try_advisory_lock(${LOCK_KEY}) AS locked`)
    if (rows[0]!.locked) return
    if (Date.now() >= giveUpAt) throw new Error(`Another instance held the migration lock for ${MIGRATION_TIMEOUT_MS} ms`)
    await sleep(LOCK_RETRY_MS)
  }
}

/**
 * Each migration commits with its follow-up and its record, or, marked `no-transaction`, runs
 * alone and is followed up and recorded after.
 */
async function applyMigrations(client: pg.Client, migrations: Migration[]): Promise<void> {
  await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`)
  const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations')
  const applied = new Set(rows.map((row) => row.version))
  const finish = async (migration: Migration) => {
    await FOLLOW_UPS[migration.name]?.(client)
    await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name])
  }
  for (const migration of migrations) {
    if (applied.has(migration.version)) continue
    if (!migration.transaction) {
      await client.query(migration.sql)
      await finish(migration)
      continue
    }
    await client.query('BEGIN')
    await client.query(migration.sql)
    await finish(migration)
    await client.query('COMMIT')
  }
}

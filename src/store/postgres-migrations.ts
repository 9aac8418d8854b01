import pg from 'pg'
import { loadMigrations } from './migrations.ts'
import { fillSearchKeys } from './postgres-search-keys.ts'

/** How the service's sessions are named in pg_stat_activity. */
export const APPLICATION_NAME = 'book-catalogue'

/**
 * Migrating, or waiting for another instance that migrates, may take longer than a request
 * may; this bound still keeps a server that stalls half-way from holding start-up forever.
 */
const MIGRATION_TIMEOUT_MS = 60_000

/**
 * Work that SQL cannot do, run right after the migration of that name, in its transaction:
 * filling columns from the service's own code.
 */
const FOLLOW_UPS: Record<string, (client: pg.ClientBase) => Promise<void>> = {
  find_books: fillSearchKeys,
}

/** Brings the schema at `url` up to date, once however many instances start together. */
export async function migratePostgres(url: string, connectTimeoutMs: number): Promise<void> {
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
    await applyMigrations(client)
  } finally {
    // Ending the session also rolls back a migration that failed half-way.
    await client.end()
  }
}

async function applyMigrations(client: pg.Client): Promise<void> {
  await client.query('BEGIN')
  // Instances that start together queue here, so each migration runs once and the others then
  // find it recorded. The key names the schema: deployments sharing a database do not wait on
  // each other.
  await client.query(`SELECT pg_advisory_xact_lock(hashtextextended('book-catalogue migrations ' || current_schema(), 0))`)
  await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`)
  const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations')
  const applied = new Set(rows.map((row) => row.version))
  for (const migration of loadMigrations('postgres')) {
    if (applied.has(migration.version)) continue
    await client.query(migration.sql)
    await FOLLOW_UPS[migration.name]?.(client)
    await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name])
  }
  await client.query('COMMIT')
}

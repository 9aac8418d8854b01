import type { QueryResult } from 'pg'
import { loadMigrations } from './migrations.ts'

/** Runs one statement on the connection that migrates. */
export type RunStatement = (text: string, values?: unknown[]) => Promise<QueryResult>

/**
 * Applies the migrations the database lacks, in one transaction on one connection. The caller
 * ends that connection when this fails, which rolls the transaction back.
 */
export async function migratePostgres(run: RunStatement): Promise<void> {
  await run('BEGIN')
  // Instances that start together queue here, so each migration runs once and the others then
  // find it recorded. The key names the schema: deployments sharing a database do not wait on
  // each other.
  await run(`SELECT pg_advisory_xact_lock(hashtextextended('book-catalogue migrations ' || current_schema(), 0))`)
  await run(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`)
  const { rows } = await run('SELECT version FROM schema_migrations')
  const applied = new Set(rows.map((row) => row.version as number))
  for (const migration of loadMigrations('postgres')) {
    if (applied.has(migration.version)) continue
    await run(migration.sql)
    await run('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name])
  }
  await run('COMMIT')
}

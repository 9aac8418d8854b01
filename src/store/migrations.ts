import { readdirSync, readFileSync } from 'node:fs'

export interface Migration {
  version: number
  name: string
  sql: string
  /**
   * False when the file's first line is `-- migrate: no-transaction`: the migration then runs on
   * its own, outside any transaction, as PostgreSQL's `CREATE INDEX CONCURRENTLY` must.
   */
  transaction: boolean
}

const NO_TRANSACTION = /^-- migrate: no-transaction[ \t]*(\r?\n|$)/

const MIGRATIONS_ROOT = new URL('../../migrations/', import.meta.url)

/** The engine's migrations, ordered by version. */
export function loadMigrations(engine: 'sqlite' | 'postgres'): Migration[] {
  return readMigrations(new URL(`${engine}/`, MIGRATIONS_ROOT))
}

/** The migrations in `dir`, ordered by version, from files named `NNN_name.sql`. */
export function readMigrations(dir: URL): Migration[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .map((file) => {
      const match = /^(\d+)_(.+)\.sql$/.exec(file)
      if (!match) throw new Error(`Migration file name must look like 001_name.sql: ${file}`)
      const sql = readFileSync(new URL(file, dir), 'utf8')
      return { version: Number(match[1]), name: match[2]!, sql, transaction: !NO_TRANSACTION.test(sql) }
    })
    .sort((a, b) => a.version - b.version)
}

import { readdirSync, readFileSync } from 'node:fs'

export interface Migration {
  version: number
  name: string
  sql: string
}

const MIGRATIONS_ROOT = new URL('../../migrations/', import.meta.url)

/** The engine's migrations, ordered by version, from files named `NNN_name.sql`. */
export function loadMigrations(engine: 'sqlite' | 'postgres'): Migration[] {
  const dir = new URL(`${engine}/`, MIGRATIONS_ROOT)
  return readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .map((file) => {
      const match = /^(\d+)_(.+)\.sql$/.exec(file)
      if (!match) throw new Error(`Migration file name must look like 001_name.sql: ${file}`)
      return { version: Number(match[1]), name: match[2]!, sql: readFileSync(new URL(file, dir), 'utf8') }
    })
    .sort((a, b) => a.version - b.version)
}

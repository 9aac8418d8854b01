import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import pg from 'pg'

const run = promisify(execFile)
const SERVER = { host: '127.0.0.1', port: '5432', user: 'postgres' }

/** A fresh, empty database on the local PostgreSQL server, or the reason there is none. */
export async function createDatabase(name: string): Promise<{ url: string } | { skip: string }> {
  try {
    await run('createdb', ['-h', SERVER.host, '-p', SERVER.port, '-U', SERVER.user, name], { timeout: 10_000 })
  } catch (err) {
    return { skip: `could not create a database on ${SERVER.host}:${SERVER.port} (${(err as Error).message.split('\n')[0]})` }
  }
  return { url: `postgres://${SERVER.user}@${SERVER.host}:${SERVER.port}/${name}` }
}

export async function dropDatabase(name: string): Promise<void> {
  await run('dropdb', ['-h', SERVER.host, '-p', SERVER.port, '-U', SERVER.user, '--if-exists', '--force', name], {
    timeout: 10_000,
  }).catch(() => undefined)
}

/**
 * The server's settings that decide how fast a find that reads much of the books table runs, as the
 * sessions of the database at `url` see them: whether the table fits in the shared buffers, and
 * how many parallel workers a statement may start (docs/postgresql.md).
 */
export async function serverSettings(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ name: string; setting: string }>(
      `SELECT name, current_setting(name) AS setting
       FROM unnest(ARRAY['server_version', 'shared_buffers', 'max_parallel_workers_per_gather']) AS name`,
    )
    return rows.map(({ name, setting }) => `${name} ${setting}`).join(', ')
  } finally {
    await client.end()
  }
}

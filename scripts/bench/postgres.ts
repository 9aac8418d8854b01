import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

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

import assert from 'node:assert/strict'
import { copyFileSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { before, describe, it } from 'node:test'
import { loadMigrations } from '../../src/store/migrations.ts'
import { call, login, serviceEnv, startService } from '../support/service.ts'
import { runStoreCommand, storeFingerprint } from '../support/store-commands.ts'
import { temporaryDirectory } from '../support/temporary.ts'

const GIVE_UP = { timeout: 120_000 }
const NEWEST = loadMigrations('sqlite').at(-1)!.version

function oneLine(text: string): string {
  const lines = text.trim().split('\n')
  assert.equal(lines.length, 1, text)
  return lines[0]!
}

async function books(service: { url: string }, token: string): Promise<unknown[]> {
  return (await call(service, 'GET', '/books', { token })).body.data
}

describe('npm run restore', () => {
  /** A stopped store with books, and a backup taken of it. */
  let dir: string
  let storePath: string
  let dbUrl: string
  let backupPath: string

  before(async () => {
    dir = temporaryDirectory('books-restore-')
    storePath = join(dir, 'books.db')
    dbUrl = `sqlite:${storePath}`
    backupPath = join(dir, 'backup.db')
    const service = await startService(serviceEnv(dbUrl))
    try {
      const token = await login(service)
      for (const title of ['Dune', 'Emma', 'Ulysses'])
        await call(service, 'POST', '/book', { token, body: { title, author: 'A', year: 1 } })
      const run = await runStoreCommand('backup', [backupPath], { DB_URL: dbUrl })
      assert.equal(run.code, 0, run.stderr)
    } finally {
      await service.stop()
    }
  })

  it('puts a backup back whole, books and every other table, while writes made since are gone', GIVE_UP, async () => {
    const storeDir = temporaryDirectory('books-restore-')
    const store = `sqlite:${join(storeDir, 'books.db')}`
    let service = await startService(serviceEnv(store))
    let token = await login(service)
    const dune = await call(service, 'POST', '/book', {
      token,
      body: { title: 'Dune', author: 'Frank Herbert', year: 1965 },
      headers: { 'idempotency-key': 'first-dune' },
    })
    assert.equal(dune.status, 201)
    const taken = join(storeDir, 'taken.db')
    assert.equal((await runStoreCommand('backup', [taken], { DB_URL: store })).code, 0)
    const atBackup = await books(service, token)
    await call(service, 'DELETE', `/book/${dune.body.data.id}`, { token })
    await call(service, 'POST', '/book', { token, body: { title: 'Later', author: 'B', year: 2 } })
    await service.stop()

    const from = temporaryDirectory('books-restore-from-')
    copyFileSync(taken, join(from, 'taken.db'))
    const run = await runStoreCommand('restore', ['taken.db'], { DB_URL: store }, { npm: true, cwd: from })
    assert.equal(run.code, 0, run.stderr)
    assert.match(
      run.stdout.trim().split('\n').at(-1)!,
      new RegExp(`^restored ${join(from, 'taken.db')} into ${join(storeDir, 'books.db')}: [\\d.]+ MiB in [\\d.]+ s; start the service$`),
    )

    service = await startService(serviceEnv(store))
    try {
      token = await login(service)
      assert.deepEqual(await books(service, token), atBackup)
      // Other tables come back with the books: the key of the first write still answers with it.
      const replayed = await call(service, 'POST', '/book', {
        token,
        body: { title: 'Dune', author: 'Frank Herbert', year: 1965 },
        headers: { 'idempotency-key': 'first-dune' },
      })
      assert.equal(replayed.headers.get('idempotent-replayed'), 'true')
      assert.equal(replayed.body.data.id, dune.body.data.id)
    } finally {
      await service.stop()
    }
  })

  it('into a folder that does not exist yet creates it, readable by this user only', GIVE_UP, async () => {
    const storeDir = join(temporaryDirectory('books-restore-'), 'data')
    const run = await runStoreCommand('restore', [backupPath], { DB_URL: `sqlite:${join(storeDir, 'books.db')}` })
    assert.equal(run.code, 0, run.stderr)
    assert.equal(statSync(storeDir).mode & 0o777, 0o700)
    assert.equal(statSync(join(storeDir, 'books.db')).mode & 0o777, 0o600)
    const service = await startService(serviceEnv(`sqlite:${join(storeDir, 'books.db')}`))
    try {
      assert.equal((await books(service, await login(service))).length, 3)
    } finally {
      await service.stop()
    }
  })

  it('is refused while a service has the store open: one line, exit code 1, the store untouched', GIVE_UP, async () => {
    const service = await startService(serviceEnv(dbUrl))
    try {
      const token = await login(service)
      await call(service, 'POST', '/book', { token, body: { title: 'Kept', author: 'C', year: 3 } })
      const before = await books(service, token)
      const run = await runStoreCommand('restore', [backupPath], { DB_URL: dbUrl })
      assert.equal(run.code, 1)
      assert.equal(oneLine(run.stderr), `a service has ${storePath} open: stop it first; nothing was restored`)
      assert.deepEqual(await books(service, token), before)
    } finally {
      await service.stop()
    }
  })

  /** Files that are not a backup of this service, made in `folder`, and what the refusal says. */
  const strangers: [string, (folder: string) => string, (path: string) => RegExp][] = [
    [
      'a text file',
      (folder) => write(join(folder, 'notes.txt'), 'title,author,year\n'),
      (path) => new RegExp(`^${path} is not a backup of this service: not an SQLite database; nothing was restored$`),
    ],
    [
      'an empty file',
      (folder) => write(join(folder, 'empty.db'), ''),
      (path) => new RegExp(`^${path} is not a backup of this service: it has no schema_migrations table; nothing was restored$`),
    ],
    [
      'the database of another program',
      (folder) => database(join(folder, 'other.db'), 'CREATE TABLE notes (text TEXT)'),
      (path) => new RegExp(`^${path} is not a backup of this service: it has no schema_migrations table`),
    ],
    [
      'a database whose migrations are not this service’s',
      (folder) =>
        database(
          join(folder, 'other.db'),
          "CREATE TABLE schema_migrations (version INTEGER, name TEXT); INSERT INTO schema_migrations VALUES (1, 'create_users')",
        ),
      (path) => new RegExp(`^${path} is not a backup of this service: its migration 1 "create_users" is not one of this service's`),
    ],
    ['a folder', (folder) => folder, (path) => new RegExp(`^${path} is not a backup of this service: it is not a file`)],
    [
      'a path where there is nothing',
      (folder) => join(folder, 'missing.db'),
      (path) => new RegExp(`^there is no file at ${path}: nothing was restored$`),
    ],
  ]
  for (const [name, make, message] of strangers) {
    it(`of ${name} is refused: one line, exit code 1, the store untouched`, GIVE_UP, async () => {
      const path = make(temporaryDirectory('books-stranger-'))
      const before = storeFingerprint(storePath)
      const run = await runStoreCommand('restore', [path], { DB_URL: dbUrl })
      assert.equal(run.code, 1)
      assert.match(oneLine(run.stderr), message(path))
      assert.equal(storeFingerprint(storePath), before)
    })
  }

  it('of a backup of a newer schema is refused: one line, exit code 1, the store untouched', GIVE_UP, async () => {
    const newer = join(temporaryDirectory('books-newer-'), 'newer.db')
    copyFileSync(backupPath, newer)
    const db = new DatabaseSync(newer)
    db.prepare('INSERT INTO schema_migrations (version, name) VALUES (?, ?)').run(NEWEST + 1, 'from_the_future')
    db.close()
    const before = storeFingerprint(storePath)
    const run = await runStoreCommand('restore', [newer], { DB_URL: dbUrl })
    assert.equal(run.code, 1)
    assert.equal(
      oneLine(run.stderr),
      `${newer} has schema version ${NEWEST + 1}, newer than this service's ${NEWEST}: restore it with the version of the service that made it; nothing was restored`,
    )
    assert.equal(storeFingerprint(storePath), before)
  })

  it('of a damaged backup is refused: one line, exit code 1, the store untouched', GIVE_UP, async () => {
    const damaged = join(temporaryDirectory('books-damaged-'), 'damaged.db')
    copyFileSync(backupPath, damaged)
    truncateSync(damaged, Math.floor(statSync(damaged).size / 2))
    const before = storeFingerprint(storePath)
    const run = await runStoreCommand('restore', [damaged], { DB_URL: dbUrl })
    assert.equal(run.code, 1)
    assert.match(oneLine(run.stderr), new RegExp(`^${damaged} is damaged \\(.*\\); nothing was restored$`))
    assert.equal(storeFingerprint(storePath), before)
  })

  it('of the store onto itself is refused', GIVE_UP, async () => {
    const before = storeFingerprint(storePath)
    const run = await runStoreCommand('restore', [storePath], { DB_URL: dbUrl })
    assert.equal(run.code, 1)
    assert.equal(oneLine(run.stderr), `${storePath} is the store itself: nothing was restored`)
    assert.equal(storeFingerprint(storePath), before)
  })

  it('with a PostgreSQL DB_URL says to use pg_restore', GIVE_UP, async () => {
    const run = await runStoreCommand('restore', [backupPath], { DB_URL: 'postgres://books@127.0.0.1:1/books' })
    assert.equal(run.code, 1)
    assert.match(oneLine(run.stderr), /^DB_URL names a PostgreSQL database: restore it with pg_restore, as docs\/postgresql\.md shows/)
  })
})

function write(path: string, content: string): string {
  writeFileSync(path, content)
  return path
}

function database(path: string, sql: string): string {
  const db = new DatabaseSync(path)
  db.exec(sql)
  db.close()
  return path
}

import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { describe, it } from 'node:test'
import { skipWithoutReadOnlyMount } from '../support/read-only.ts'
import { call, login, serviceEnv, startService } from '../support/service.ts'
import { runStoreCommand } from '../support/store-commands.ts'
import { temporaryDirectory } from '../support/temporary.ts'

const GIVE_UP = { timeout: 120_000 }

function oneLine(text: string): string {
  const lines = text.trim().split('\n')
  assert.equal(lines.length, 1, text)
  return lines[0]!
}

/** A store the service has created, with nothing running on it. */
async function stoppedStore(): Promise<{ dir: string; dbUrl: string }> {
  const dir = temporaryDirectory('books-backup-')
  const dbUrl = `sqlite:${join(dir, 'books.db')}`
  const service = await startService(serviceEnv(dbUrl))
  await service.stop()
  return { dir, dbUrl }
}

describe('npm run backup', () => {
  it(
    'copies the store while the service runs and writes go on: the copy is whole and holds every write answered before it began',
    GIVE_UP,
    async () => {
      const dir = temporaryDirectory('books-backup-')
      const dbUrl = `sqlite:${join(dir, 'books.db')}`
      const service = await startService(serviceEnv(dbUrl))
      try {
        const token = await login(service)
        const answered: { id: number; title: string }[] = []
        const write = async (title: string) => {
          const res = await call(service, 'POST', '/book', { token, body: { title, author: 'Backed Up', year: 2000 } })
          assert.equal(res.status, 201)
          return { id: res.body.data.id as number, title }
        }
        for (let i = 0; i < 200; i++) answered.push(await write(`Before ${i}`))

        // Writes go on throughout the backup, from another folder than the install, as an operator's would.
        let writing = true
        const during = (async () => {
          for (let i = 0; writing; i++) await write(`During ${i}`)
        })()
        const from = temporaryDirectory('books-backup-from-')
        const run = await runStoreCommand('backup', ['copy.db'], { DB_URL: dbUrl }, { npm: true, cwd: from })
        writing = false
        await during

        assert.equal(run.code, 0, run.stderr)
        const copyPath = join(from, 'copy.db')
        assert.match(
          run.stdout.trim().split('\n').at(-1)!,
          new RegExp(`^backed up ${join(dir, 'books.db')} to ${copyPath}: [\\d.]+ MiB in [\\d.]+ s$`),
        )
        assert.deepEqual(readdirSync(from), ['copy.db'], 'nothing but the copy is left in its folder')
        assert.equal(statSync(copyPath).mode & 0o777, 0o600)

        const copy = new DatabaseSync(copyPath, { readOnly: true })
        try {
          assert.deepEqual(
            copy
              .prepare('PRAGMA integrity_check')
              .all()
              .map((row) => ({ ...row })),
            [{ integrity_check: 'ok' }],
          )
          assert.equal((copy.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode, 'delete')
          const found = copy
            .prepare('SELECT id, title FROM books ORDER BY id')
            .all()
            .map((row) => ({ ...row }))
          assert.deepEqual(found.slice(0, answered.length), answered)
        } finally {
          copy.close()
        }
      } finally {
        await service.stop()
      }
    },
  )

  it('to a path that exists: one line, exit code 1, and the file as it was', GIVE_UP, async () => {
    const { dir, dbUrl } = await stoppedStore()
    const target = join(dir, 'existing.db')
    writeFileSync(target, 'keep me')
    const run = await runStoreCommand('backup', [target], { DB_URL: dbUrl })
    assert.equal(run.code, 1)
    assert.equal(run.stdout, '')
    assert.equal(oneLine(run.stderr), `${target} exists: give a path that does not, nothing was overwritten`)
    assert.equal(readFileSync(target, 'utf8'), 'keep me')
  })

  it(
    'to a folder that is not writable: one line, exit code 1, nothing written',
    { ...GIVE_UP, skip: skipWithoutReadOnlyMount() },
    async () => {
      const { dbUrl } = await stoppedStore()
      const folder = temporaryDirectory('books-read-only-')
      const run = await runStoreCommand('backup', [join(folder, 'copy.db')], { DB_URL: dbUrl }, { readOnlyFolder: folder })
      assert.equal(run.code, 1)
      assert.match(oneLine(run.stderr), new RegExp(`^cannot write in ${folder}: EROFS: read-only file system, .*; nothing was copied$`))
      assert.deepEqual(readdirSync(folder), [])
    },
  )

  it('to a folder that does not exist: one line, exit code 1', GIVE_UP, async () => {
    const { dir, dbUrl } = await stoppedStore()
    const run = await runStoreCommand('backup', [join(dir, 'missing', 'copy.db')], { DB_URL: dbUrl })
    assert.equal(run.code, 1)
    assert.match(oneLine(run.stderr), new RegExp(`^cannot write in ${join(dir, 'missing')}: ENOENT: .*; nothing was copied$`))
  })

  it('without a store at DB_URL: one line, exit code 1, nothing written', GIVE_UP, async () => {
    const dir = temporaryDirectory('books-backup-')
    const run = await runStoreCommand('backup', [join(dir, 'copy.db')], { DB_URL: `sqlite:${join(dir, 'none.db')}` })
    assert.equal(run.code, 1)
    assert.equal(oneLine(run.stderr), `there is no store at ${join(dir, 'none.db')}: nothing was copied`)
    assert.deepEqual(readdirSync(dir), [])
  })

  const refusals: [string, Record<string, string>, string[], RegExp][] = [
    [
      'a PostgreSQL DB_URL says to use pg_dump',
      { DB_URL: 'postgres://books@127.0.0.1:1/books' },
      ['copy.db'],
      /^DB_URL names a PostgreSQL database: back it up with pg_dump, as docs\/postgresql\.md shows/,
    ],
    [
      'sqlite::memory: has nothing to back up',
      { DB_URL: 'sqlite::memory:' },
      ['copy.db'],
      /^DB_URL is sqlite::memory:, .*nothing to back up$/,
    ],
    ['an unknown DB_URL names the accepted forms', { DB_URL: 'mysql://books' }, ['copy.db'], /^DB_URL must be one of sqlite:PATH/],
    ['no PATH says how to run it', { DB_URL: 'sqlite:books.db' }, [], /^usage: npm run backup -- PATH$/],
    ['two PATHs say how to run it', { DB_URL: 'sqlite:books.db' }, ['a.db', 'b.db'], /^usage: npm run backup -- PATH$/],
  ]
  for (const [name, env, args, message] of refusals) {
    it(`${name}: one line, exit code 1`, GIVE_UP, async () => {
      const cwd = temporaryDirectory('books-backup-')
      const run = await runStoreCommand('backup', args, env, { cwd })
      assert.equal(run.code, 1)
      assert.match(oneLine(run.stderr), message)
      assert.equal(existsSync(join(cwd, 'copy.db')), false)
    })
  }
})

import assert from 'node:assert/strict'
import { existsSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { describe, test } from 'node:test'
import { loadMigrations } from '../src/store/migrations.ts'
import { call, login, runToExit, startService } from './support/service.ts'
import { temporaryDirectory } from './support/temporary.ts'

const credentials = { AUTH_USERNAME: 'librarian', AUTH_PASSWORD: 'a long passphrase' }
const productionEnv = { NODE_ENV: 'production', SECRET_TOKEN: 'hG4tW9qZ2vL7nB1xK8cR5mJ3sD6fY0pA', ...credentials }

function tempDir() {
  return temporaryDirectory('books-main-')
}

describe('the service as npm start runs it', () => {
  test('walks the whole interface, and keeps the data across a restart', async () => {
    const dbUrl = `sqlite:${join(tempDir(), 'books.db')}`
    const env = { DB_URL: dbUrl, SECRET_TOKEN: 's'.repeat(32), ...credentials }
    let service = await startService(env)
    let id: number
    try {
      const token = await login(service, credentials.AUTH_USERNAME, credentials.AUTH_PASSWORD)
      const created = await call(service, 'POST', '/book', { token, body: { title: 'Dune', author: 'Frank Herbert', year: 1965 } })
      assert.equal(created.status, 201)
      id = created.body.data.id
      const kept = await call(service, 'POST', '/book', { token, body: { title: 'Emma', author: 'Jane Austen', year: 1815 } })
      assert.deepEqual((await call(service, 'GET', `/book/${id}`, { token })).body.data, {
        id,
        title: 'Dune',
        author: 'Frank Herbert',
        year: 1965,
      })
      assert.equal((await call(service, 'GET', '/books', { token })).body.data.length, 2)
      const updated = await call(service, 'PUT', `/book/${id}`, { token, body: { year: 1966 } })
      assert.deepEqual([updated.status, updated.body.message, updated.body.data.year], [200, 'Book updated successfully', 1966])
      assert.deepEqual((await call(service, 'DELETE', `/book/${id}`, { token })).body, {
        status: 200,
        message: 'Book deleted successfully',
        data: null,
      })
      assert.equal((await call(service, 'GET', `/book/${id}`, { token })).status, 404)
      assert.equal((await service.stop()).code, 0)

      service = await startService(env)
      // The same secret across the restart: the token issued before still opens the routes.
      const after = await call(service, 'GET', '/books', { token })
      assert.deepEqual(after.body.data, [kept.body.data])
    } finally {
      await service.stop()
    }
  })

  test('prints the address of the catalogue page, where / leads', async (t) => {
    const service = await startService({ DB_URL: 'sqlite::memory:', SECRET_TOKEN: 's'.repeat(32), ...credentials })
    t.after(() => service.stop())
    const line = await service.waitForLine((entry) => /^catalogue page at /.test(entry.msg ?? ''))
    assert.equal(line.msg, `catalogue page at ${service.url}/app/`)
    const res = await fetch(`${service.url}/`, { redirect: 'manual' })
    assert.equal(res.status, 302)
    assert.equal(new URL(res.headers.get('location')!, service.url).href, `${service.url}/app/`)
  })

  test('a write answered 2xx survives a kill -9 right after the answer', async () => {
    const dbUrl = `sqlite:${join(tempDir(), 'books.db')}`
    const env = { DB_URL: dbUrl, SECRET_TOKEN: 's'.repeat(32), ...credentials }
    let service = await startService(env)
    try {
      const token = await login(service, credentials.AUTH_USERNAME, credentials.AUTH_PASSWORD)
      const created = await call(service, 'POST', '/book', { token, body: { title: 'Kept', author: 'A', year: 1 } })
      assert.equal(created.status, 201)
      await service.stop('SIGKILL')
      service = await startService(env)
      const res = await call(service, 'GET', `/book/${created.body.data.id}`, { token })
      assert.equal(res.status, 200)
    } finally {
      await service.stop()
    }
  })

  test('first run with no configuration: ./data/books.db, migrated, admin with a password printed once', async () => {
    const cwd = tempDir()
    const service = await startService({}, { cwd })
    try {
      const output = service.output()
      assert.match(output, /SECRET_TOKEN is not set/)
      const password = /generated password \\"([^\\"]+)\\"/.exec(output)?.[1]
      assert.ok(password, output)
      assert.equal(output.split(password).length - 1, 1)
      const token = await login(service, 'admin', password)
      assert.equal((await call(service, 'GET', '/books', { token })).status, 200)
      assert.ok(existsSync(join(cwd, 'data', 'books.db')))
      const db = new DatabaseSync(join(cwd, 'data', 'books.db'), { readOnly: true })
      assert.deepEqual(
        db
          .prepare('SELECT version, name FROM schema_migrations')
          .all()
          .map((row) => ({ ...row })),
        loadMigrations('sqlite').map(({ version, name }) => ({ version, name })),
      )
      assert.equal((db.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode, 'wal')
      db.close()
    } finally {
      await service.stop()
    }
  })

  test('the listening address is logged, with the port PORT=0 picked', async () => {
    const service = await startService({ DB_URL: 'sqlite::memory:' })
    try {
      assert.match(service.url, /^http:\/\/127\.0\.0\.1:[1-9]\d*$/)
      assert.equal((await fetch(service.url + '/books')).status, 401)
    } finally {
      await service.stop()
    }
  })

  test('without HOST, listens on 127.0.0.1 only, and says so', async () => {
    const service = await startService({ DB_URL: 'sqlite::memory:', HOST: '' })
    try {
      assert.match(service.url, /^http:\/\/127\.0\.0\.1:/)
      const said = await service.waitForLine((line) => /^listening on /.test(line.msg ?? ''))
      assert.equal(said.msg, 'listening on 127.0.0.1 only: other machines cannot connect (HOST=0.0.0.0 lets them)')
      assert.ok(!service.lines.some((line) => /^HOST=/.test(line.msg ?? '')))
    } finally {
      await service.stop()
    }
  })

  test('HOST=0.0.0.0 with a generated password: the log says other machines can connect, and warns', async () => {
    const service = await startService({ DB_URL: 'sqlite::memory:', HOST: '0.0.0.0' })
    try {
      const said = await service.waitForLine((line) => /^listening on /.test(line.msg ?? ''))
      assert.equal(said.msg, 'listening on 0.0.0.0: other machines can connect')
      const warning = service.lines.find((line) => /^HOST=0\.0\.0\.0 /.test(line.msg ?? ''))
      assert.equal(warning?.level, 40)
      assert.match(warning.msg!, /generated one: set AUTH_PASSWORD/)
    } finally {
      await service.stop()
    }
  })

  test('.env in the working directory is read; the environment wins over it', async () => {
    const cwd = tempDir()
    writeFileSync(join(cwd, '.env'), 'DB_URL=sqlite::memory:\nAUTH_USERNAME=from-file\nAUTH_PASSWORD=file-password\n')
    const service = await startService({ AUTH_PASSWORD: 'env-password' }, { cwd })
    try {
      await login(service, 'from-file', 'env-password')
      const refused = await call(service, 'POST', '/token', { body: { username: 'from-file', password: 'file-password' } })
      assert.equal(refused.status, 401)
    } finally {
      await service.stop()
    }
  })

  test('production logs carry no secret, password or token', async () => {
    const service = await startService({ ...productionEnv, DB_URL: 'sqlite::memory:' })
    try {
      const token = await login(service, credentials.AUTH_USERNAME, credentials.AUTH_PASSWORD)
      await call(service, 'GET', '/books', { token })
      await call(service, 'POST', '/token', { body: { username: credentials.AUTH_USERNAME, password: 'wrong guess' } })
      await service.stop()
      const output = service.output()
      for (const secret of [productionEnv.SECRET_TOKEN, credentials.AUTH_PASSWORD, 'wrong guess', token]) {
        assert.ok(!output.includes(secret), `log contains ${secret.slice(0, 12)}…`)
      }
    } finally {
      await service.stop()
    }
  })

  const refusals: Array<[string, Record<string, string>, RegExp]> = [
    ['SECRET_TOKEN missing in production', { ...productionEnv, SECRET_TOKEN: '' }, /SECRET_TOKEN/],
    ['SECRET_TOKEN of 31 bytes in production', { ...productionEnv, SECRET_TOKEN: 'x'.repeat(31) }, /SECRET_TOKEN/],
    ['AUTH_USERNAME missing in production', { ...productionEnv, AUTH_USERNAME: '' }, /AUTH_USERNAME/],
    ['AUTH_PASSWORD missing in production', { ...productionEnv, AUTH_PASSWORD: '' }, /AUTH_PASSWORD/],
    ['an unknown DB_URL scheme', { DB_URL: 'mysql://root@localhost/books' }, /DB_URL.*sqlite:PATH/],
    // Even root may not make a folder in /sys: a data folder that cannot be written, as on a read-only file system.
    [
      'a data folder that cannot be created',
      { DB_URL: 'sqlite:/sys/books-data/books.db' },
      /^Store unavailable at start-up: cannot create \/sys\/books-data\/books\.db: EPERM/,
    ],
  ]
  for (const workers of ['1', '2']) {
    test(
      `refuses to start on a port another process listens on, with WORKERS=${workers}: exit code 1 and one line saying why`,
      { timeout: 30_000 },
      async (t) => {
        const holder = createServer()
        await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve))
        t.after(() => holder.close())
        const { port } = holder.address() as AddressInfo
        const env = {
          ...productionEnv,
          DB_URL: `sqlite:${join(tempDir(), 'books.db')}`,
          HOST: '127.0.0.1',
          PORT: String(port),
          WORKERS: workers,
        }
        const { code, output } = await runToExit(env, { cwd: tempDir() })
        assert.equal(code, 1)
        assert.deepEqual(output.trim().split('\n'), [`Cannot listen on 127.0.0.1:${port}: address already in use (EADDRINUSE)`])
      },
    )
  }

  for (const [name, env, pattern] of refusals) {
    test(`refuses to start with ${name}: exit code 1 and one line saying why`, async () => {
      const { code, output } = await runToExit(env, { cwd: tempDir() })
      assert.equal(code, 1)
      const lines = output.trim().split('\n')
      assert.equal(lines.length, 1, output)
      assert.match(lines[0]!, pattern)
    })
  }
})

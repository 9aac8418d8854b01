import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { loadMigrations } from '../src/store/migrations.ts'
import { storeEngines } from './helpers.ts'
import { adminQuery, connectAdmin, createTestSchema, sessionsWaitingFor } from './support/postgres.ts'
import { serviceEnv, spawnService } from './support/service.ts'
import { startSlowLogin, tryToConnect } from './support/slow-request.ts'
import { droppedWhenSuiteEnds } from './support/temporary.ts'

const postgres = storeEngines.find((engine) => engine.name === 'postgres')!

/** What one client saw of one request: the status, or the socket's error code. */
type Outcome = { status: number } | { error: string }

/** One GET on a connection of its own, as a client that does not reuse connections sends it. */
function getOnce(port: number, path: string): Promise<Outcome> {
  return new Promise((resolve) => {
    request({ host: '127.0.0.1', port, path, agent: new Agent({ keepAlive: false }) }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode! }))
      res.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }))
    })
      .on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }))
      .end()
  })
}

/**
 * Each test gives up after this: long enough for a busy machine, and a bound for one that hangs.
 * Per test, not per suite, so that the suite's length does not depend on how many tests it has.
 */
const GIVE_UP = { timeout: 120_000 }

describe('graceful shutdown', () => {
  const dropAtEnd = droppedWhenSuiteEnds()
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`on ${signal}, stops listening, finishes the request in flight, closes the store and exits 0`, GIVE_UP, async () => {
      const service = spawnService(serviceEnv('sqlite:books.db'))
      const port = await service.port()
      const login = await startSlowLogin(port)

      service.child.kill(signal)
      await service.waitForLine((line) => line.msg === 'stopped listening: finishing requests in flight')
      assert.equal(await tryToConnect(port), 'ECONNREFUSED')
      assert.equal(service.child.exitCode, null, 'exited with a request in flight')

      const answer = await login.finish()
      assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/)
      assert.match(answer, /\r\nConnection: close\r\n/i)
      assert.match(answer, /"message":"Token generated successfully"/)

      assert.deepEqual(await service.exited, { code: 0, signal: null })
      // SQLite removes the write-ahead log when the last connection closes cleanly.
      assert.equal(existsSync(join(service.dir, 'books.db-wal')), false)
      assert.ok(service.lines.some((line) => line.msg === 'stopped'))
    })
  }

  it('does not cut requests short when signalled again while draining', GIVE_UP, async () => {
    const service = spawnService(serviceEnv('sqlite:books.db'))
    const port = await service.port()
    const login = await startSlowLogin(port)

    service.child.kill('SIGTERM')
    await service.waitForLine((line) => line.msg === 'stopped listening: finishing requests in flight')
    service.child.kill('SIGTERM')
    await service.waitForLine((line) => line.msg === 'already shutting down: signal ignored')
    service.child.kill('SIGINT')
    await service.waitForLine((line) => line.msg === 'already shutting down: signal ignored' && line.signal === 'SIGINT')

    assert.match(await login.finish(), /^HTTP\/1\.1 200 OK\r\n/)
    assert.deepEqual(await service.exited, { code: 0, signal: null })
  })

  it('cuts requests still in flight when the grace period is over, and exits 1', GIVE_UP, async () => {
    const service = spawnService(serviceEnv('sqlite:books.db', { SHUTDOWN_GRACE_MS: '300' }))
    const port = await service.port()
    const login = await startSlowLogin(port)
    const closed = new Promise((resolve) => login.socket.once('close', resolve))

    service.child.kill('SIGTERM')
    assert.deepEqual(await service.exited, { code: 1, signal: null })
    await closed
    assert.ok(service.lines.some((line) => line.msg === 'grace period over: closing the connections still open'))
  })

  for (const workers of ['1', '2']) {
    it(
      `serves or cleanly refuses every one of 100 requests sent over 100 ms with SIGTERM 30 ms in (WORKERS=${workers})`,
      GIVE_UP,
      async () => {
        // A hundred connections from one address: more than one address's share, which is not under test here.
        const service = spawnService(
          serviceEnv('sqlite:books.db', { SHUTDOWN_DELAY_MS: '2000', WORKERS: workers, MAX_CONNECTIONS_PER_ADDRESS: '1000' }),
        )
        const port = await service.port()
        await service.waitForLine(
          () => service.lines.filter((line) => /^Server listening at /.test(line.msg ?? '')).length === Number(workers),
        )

        const outcomes = await Promise.all([
          ...Array.from({ length: 100 }, (_, i) => sleep(i).then(() => getOnce(port, '/healthz'))),
          sleep(30).then(() => void service.child.kill('SIGTERM')),
        ])
        assert.deepEqual(await service.exited, { code: 0, signal: null })

        const answered = outcomes.filter((outcome): outcome is Outcome => outcome !== undefined)
        // Refused before any byte was exchanged is the one clean way not to serve: a client can safely try elsewhere.
        const failed = answered.filter((outcome) => ('error' in outcome ? outcome.error !== 'ECONNREFUSED' : outcome.status !== 200))
        assert.deepEqual(failed, [])
      },
    )
  }

  for (const workers of ['1', '2']) {
    it(
      `on SIGTERM while migrating, lets the migrations finish, never listens, and exits 0 (WORKERS=${workers})`,
      { ...GIVE_UP, skip: postgres.skip },
      async (t) => {
        const schema = await createTestSchema()
        dropAtEnd(schema)
        // While this transaction holds the name schema_migrations, the service's migrations wait for it.
        const gate = await connectAdmin()
        t.after(() => gate.end())
        await gate.query('BEGIN')
        await gate.query(`CREATE TABLE ${schema.name}.schema_migrations (version integer)`)

        const service = spawnService(serviceEnv(schema.url, { WORKERS: workers }))
        assert.ok(await sessionsWaitingFor(gate, 1, 60_000), 'the service never reached its migrations')
        service.child.kill('SIGTERM')
        await service.waitForLine((line) => line.msg === 'stop requested during start-up: stopping once the store is ready')
        await gate.query('ROLLBACK')

        assert.deepEqual(await service.exited, { code: 0, signal: null })
        assert.ok(service.lines.some((line) => /^stopped during start-up, before /.test(line.msg ?? '')))
        assert.ok(!service.lines.some((line) => /^Server listening at /.test(line.msg ?? '')))
        const { rows } = await adminQuery(`SELECT version, name FROM ${schema.name}.schema_migrations ORDER BY version`)
        assert.deepEqual(
          rows,
          loadMigrations('postgres').map(({ version, name }) => ({ version, name })),
        )
      },
    )
  }
})

import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { storeEngines } from './helpers.ts'
import { createTestSchema } from './support/postgres.ts'
import { skipWithoutReadOnlyMount } from './support/read-only.ts'
import { serviceEnv, spawnNpmStart, type LogLine, type ServiceProcess } from './support/service.ts'
import { startSlowLogin, tryToConnect } from './support/slow-request.ts'
import { droppedWhenSuiteEnds, temporaryDirectory } from './support/temporary.ts'

const GIVE_UP = { timeout: 120_000 }
const INSTANCES = 4
const postgres = storeEngines.find((engine) => engine.name === 'postgres')!

const isListening = (line: LogLine) => /^Server listening at /.test(line.msg ?? '')

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Every process that wrote to the service's log: the service itself, or its primary and workers. */
function loggingPids(service: ServiceProcess): number[] {
  return [...new Set(service.lines.flatMap((line) => (typeof line.pid === 'number' ? [line.pid] : [])))]
}

/** The port `service` listens on; fails with its output when it exits first. */
async function listening(service: ServiceProcess): Promise<number> {
  const failed = service.exited.then((exit) => {
    throw new Error(`npm start exited (${JSON.stringify(exit)}) before listening:\n${service.output()}`)
  })
  return Promise.race([service.port(), failed])
}

function sqliteEnv(extra: Record<string, string> = {}) {
  return serviceEnv(`sqlite:${join(temporaryDirectory('books-npm-start-'), 'books.db')}`, extra)
}

describe('npm start', () => {
  const dropAtEnd = droppedWhenSuiteEnds()
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(
      `${signal} to npm drains the service: the request in flight is answered, npm exits 0, the port is free and no process is left`,
      GIVE_UP,
      async () => {
        const service = spawnNpmStart(sqliteEnv())
        const port = await service.port()
        const login = await startSlowLogin(port)

        service.child.kill(signal)
        await service.waitForLine((line) => line.msg === 'stopped listening: finishing requests in flight')
        const answer = await login.finish()
        assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/)
        assert.match(answer, /"message":"Token generated successfully"/)

        assert.deepEqual(await service.exited, { code: 0, signal: null })
        assert.equal(await tryToConnect(port), 'ECONNREFUSED')
        assert.deepEqual(loggingPids(service).filter(isRunning), [])
      },
    )
  }

  it('with WORKERS=2, SIGTERM to npm drains every worker and leaves no process behind', GIVE_UP, async () => {
    const service = spawnNpmStart(sqliteEnv({ WORKERS: '2' }))
    const port = await service.port()
    await service.waitForLine(() => service.lines.filter(isListening).length === 2)

    service.child.kill('SIGTERM')
    assert.deepEqual(await service.exited, { code: 0, signal: null })
    assert.ok(service.lines.some((line) => line.msg === 'all workers stopped'))
    assert.equal(await tryToConnect(port), 'ECONNREFUSED')
    const pids = loggingPids(service)
    assert.equal(pids.length, 3, 'the primary and two workers logged')
    assert.deepEqual(pids.filter(isRunning), [])
  })

  it(
    `${INSTANCES} instances started at once from one read-only install, on one PostgreSQL database, all come up and serve the page`,
    { ...GIVE_UP, skip: postgres.skip || skipWithoutReadOnlyMount() },
    async (t) => {
      const schema = await createTestSchema()
      dropAtEnd(schema)
      const instances = Array.from({ length: INSTANCES }, () => spawnNpmStart(serviceEnv(schema.url), { readOnlyInstall: true }))
      t.after(() => Promise.all(instances.map((instance) => instance.stop())))

      const ports = await Promise.all(instances.map(listening))
      assert.equal(new Set(ports).size, INSTANCES)
      for (const port of ports) {
        const page = await fetch(`http://127.0.0.1:${port}/app/`)
        assert.equal(page.status, 200)
        assert.match(await page.text(), /<script type="module" src="\/app\/main-[A-Z0-9]{8}\.js">/)
      }
    },
  )
})

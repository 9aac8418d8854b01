import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { PostgresChangeSignals } from '../../../src/store/postgres/change-signals.ts'
import { PostgresStore } from '../../../src/store/postgres/store.ts'
import { dune, storeEngines } from '../../helpers.ts'
import { createTestSchema, TEST_DATABASE_URL } from '../../support/postgres.ts'
import { startTcpProxy } from '../../support/tcp-proxy.ts'

const postgres = storeEngines.find((engine) => engine.name === 'postgres')!

/** Settles as `promise` does, or fails once `ms` have passed. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  const timer = new AbortController()
  const timeout = sleep(ms, undefined, { signal: timer.signal }).then(() => assert.fail(`${what}: nothing within ${ms} ms`))
  try {
    return await Promise.race([promise, timeout])
  } finally {
    timer.abort()
  }
}

describe('postgres change signals', { skip: postgres.skip }, () => {
  it('listen again when the connection goes silent, and hear the commits after it, one question at a time', async (t) => {
    // pg warns once a statement is sent while another waits for its answer on the same connection,
    // once per process: the file runs in a process of its own (npm test's --own-process).
    const warnings: string[] = []
    const heard = (warning: Error) => warnings.push(warning.message)
    process.on('warning', heard)
    t.after(() => process.off('warning', heard))
    const schema = await createTestSchema()
    const server = new URL(TEST_DATABASE_URL)
    const proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) })
    const throughProxy = new URL(schema.url)
    throughProxy.hostname = '127.0.0.1'
    throughProxy.port = String(proxy.port)
    const writing = await PostgresStore.open({ url: schema.url, poolSize: 2, connectTimeoutMs: 2000, queryTimeoutMs: 4000 })
    const signals = new PostgresChangeSignals({ url: throughProxy.toString(), connectTimeoutMs: 500, checkMs: 200 })
    let wake = () => {}
    const nextSignal = () => new Promise<void>((resolve) => (wake = resolve))
    const stop = await signals.listen(
      () => wake(),
      () => {},
    )
    t.after(async () => {
      await proxy.close()
      await stop()
      await writing.close()
      await schema.drop()
    })

    let signalled = nextSignal()
    await writing.books.create('ada', dune)
    await within(signalled, 5000, 'a commit before the stall')

    // The listening connection stays open and silent: only the listener can give up on it.
    proxy.stall()
    proxy.thaw()
    signalled = nextSignal()
    await within(signalled, 5000, 'word that the listener is back')
    signalled = nextSignal()
    await writing.books.create('ada', dune)
    await within(signalled, 5000, 'a commit after the stall')
    assert.deepEqual(warnings, [])
  })
})

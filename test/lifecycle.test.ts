import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import { Agent, request } from 'node:http'
import { describe, it, type TestContext } from 'node:test'
import { drain, Lifecycle, type Clock } from '../src/lifecycle.ts'
import { buildTestApp, listenOnLoopback } from './helpers.ts'
import { startSlowLogin, tryToConnect } from './support/slow-request.ts'

/** A clock whose waits end only when the test says so. */
function manualClock() {
  const pending: Array<{ ms: number; end: () => void }> = []
  const added = new EventEmitter()
  const clock: Clock = {
    wait: (ms) =>
      new Promise<void>((resolve) => {
        pending.push({ ms, end: resolve })
        added.emit('wait')
      }),
  }
  return {
    clock,
    /** The next wait the lifecycle starts, or the oldest one already started and not yet ended. */
    async nextWait(): Promise<{ ms: number; end: () => void }> {
      while (pending.length === 0) await new Promise((resolve) => added.once('wait', resolve))
      return pending.shift()!
    },
  }
}

interface Answer {
  status: number
  connection: string | undefined
  retryAfter: string | undefined
  body: unknown
}

/** A GET over `agent`, which keeps connections open unless the server closes them. */
function get(port: number, path: string, agent: Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          connection: res.headers.connection,
          retryAfter: res.headers['retry-after'],
          body: JSON.parse(text),
        }),
      )
    })
      .on('error', reject)
      .end()
  })
}

async function drainingService(t: TestContext, delayMs: number) {
  const { clock, nextWait } = manualClock()
  const lifecycle = new Lifecycle({ shutdownDelayMs: delayMs, shutdownGraceMs: 10_000 }, clock)
  const app = await buildTestApp({}, { lifecycle })
  const port = await listenOnLoopback(app)
  const agent = new Agent({ keepAlive: true })
  t.after(async () => {
    agent.destroy()
    await app.close()
  })
  const drained = drain(app, lifecycle)
  return { lifecycle, app, port, agent, drained, nextWait }
}

describe('draining', () => {
  it('is not ready from the stop on, and keeps serving through the delay with Connection: close', async (t) => {
    const { lifecycle, port, agent, drained, nextWait } = await drainingService(t, 2000)
    const before = await get(port, '/readyz', agent)
    assert.equal(before.status, 200)
    assert.equal(before.connection, 'keep-alive')

    lifecycle.requestStop('SIGTERM')
    const delay = await nextWait()
    assert.equal(delay.ms, 2000)

    const ready = await get(port, '/readyz', agent)
    assert.deepEqual([ready.status, ready.connection, ready.retryAfter], [503, 'close', '1'])
    assert.deepEqual(ready.body, { status: 503, message: 'Service unavailable', data: null })
    // A new connection during the delay is accepted and served, and closed after its answer.
    const served = await get(port, '/healthz', new Agent({ keepAlive: true }))
    assert.deepEqual([served.status, served.connection], [200, 'close'])
    assert.equal(await tryToConnect(port), 'connected')

    delay.end()
    const grace = await nextWait()
    assert.equal(grace.ms, 10_000)
    assert.equal(await tryToConnect(port), 'ECONNREFUSED')
    assert.equal(await drained, 0)
  })

  it('finishes a request in flight after it stops listening, even when signalled again', async (t) => {
    const { lifecycle, port, drained, nextWait } = await drainingService(t, 0)
    const login = await startSlowLogin(port)

    lifecycle.requestStop('SIGTERM')
    const grace = await nextWait()
    assert.equal(await tryToConnect(port), 'ECONNREFUSED')
    lifecycle.requestStop('SIGTERM')
    lifecycle.requestStop('SIGINT')

    const answer = await login.finish()
    assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/)
    assert.match(answer, /\r\nconnection: close\r\n/i)
    assert.equal(await drained, 0)
    grace.end()
  })

  it('cuts the requests still in flight when the grace period ends, and says so with 1', async (t) => {
    const { lifecycle, port, drained, nextWait } = await drainingService(t, 0)
    const login = await startSlowLogin(port)
    const closed = new Promise((resolve) => login.socket.once('close', resolve))

    lifecycle.requestStop('SIGINT')
    const grace = await nextWait()
    grace.end()
    await closed
    assert.equal(await drained, 1)
  })
})

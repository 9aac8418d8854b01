import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { describe, it, type TestContext } from 'node:test'
import { setTimeout } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { DEFAULT_LIMITS } from '../../../src/config.ts'
import { SqliteStore } from '../../../src/store/sqlite/store.ts'
import { buildTestApp, issueToken, listenOnLoopback, TEST_PASSWORD, TEST_USERNAME } from '../../helpers.ts'
import { parseResponse, sendRaw } from '../../raw-http.ts'

const SLOW_LOGIN_HEAD = 'POST /token HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n{'

/** A connection from `localAddress` that sends the head of a login with a long body, then nothing more. */
function holder(port: number, localAddress: string): { socket: Socket; closed: Promise<Buffer> } {
  const socket = connect({ port, host: '127.0.0.1', localAddress }, () => socket.write(SLOW_LOGIN_HEAD))
  const chunks: Buffer[] = []
  socket.on('data', (chunk: Buffer) => chunks.push(chunk))
  socket.on('error', () => {})
  return { socket, closed: new Promise((resolve) => socket.once('close', () => resolve(Buffer.concat(chunks)))) }
}

/** A service that wants 1,000 bytes a second of a body once 300 ms have passed, listening on the loopback address. */
async function listenWithBodyRate(t: TestContext): Promise<{ app: FastifyInstance; port: number }> {
  const app = await buildTestApp({ limits: { ...DEFAULT_LIMITS, minBodyBytesPerSecond: 1000, bodyRateGraceMs: 300 } })
  t.after(() => app.close())
  return { app, port: await listenOnLoopback(app) }
}

describe('one client cannot take every connection', () => {
  it('closes the connections of an address beyond its share while an honest client keeps being served', { timeout: 60_000 }, async (t) => {
    const limits = { ...DEFAULT_LIMITS, maxConnections: 20, maxConnectionsPerAddress: 5 }
    const app = await buildTestApp({ limits })
    t.after(() => app.close())
    const port = await listenOnLoopback(app)

    const attack = Array.from({ length: 30 }, () => holder(port, '127.0.0.2'))
    t.after(() => attack.forEach(({ socket }) => socket.destroy()))
    // The server refuses the surplus as it arrives: 25 closed, and the attacker's share still open.
    let closedCount = 0
    const isClosed = attack.map(() => false)
    await new Promise<void>((resolve) =>
      attack.forEach(({ closed }, i) => {
        void closed.then(() => {
          isClosed[i] = true
          if (++closedCount === 25) resolve()
        })
      }),
    )
    assert.equal(isClosed.filter((closed) => !closed).length, 5)

    for (let i = 0; i < 3; i++) {
      const res = parseResponse(await sendRaw(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'))
      assert.equal(res.status, 200)
    }
    const login = await fetch(`http://127.0.0.1:${port}/token`, {
      method: 'POST',
      body: JSON.stringify({ username: TEST_USERNAME, password: TEST_PASSWORD }),
    })
    assert.equal(login.status, 200)
    // Served while the attacker still held its share, not after its connections timed out.
    assert.equal(isClosed.filter((closed) => !closed).length, 5)
  })

  it('answers a body that trickles below the minimum rate with 408 and closes the connection', async (t) => {
    const { port } = await listenWithBodyRate(t)
    const res = parseResponse(await sendRaw(port, SLOW_LOGIN_HEAD))
    assert.equal(res.status, 408)
    assert.equal(res.headers.connection, 'close')
    assert.equal(res.headers['x-content-type-options'], 'nosniff')
    assert.deepEqual(JSON.parse(res.body.toString()), { status: 408, message: 'Request timeout', data: null })
  })

  it('answers an import that trickles below the minimum rate with 408 too, though its route reads the body as a stream', async (t) => {
    const { app, port } = await listenWithBodyRate(t)
    const head = `POST /books/import HTTP/1.1\r\nHost: x\r\nAuthorization: ${await issueToken(app)}\r\nContent-Type: text/csv\r\nContent-Length: 60000\r\n\r\ntitle,author,year\n`
    const res = parseResponse(await sendRaw(port, head))
    assert.equal(res.status, 408)
    assert.equal(res.headers.connection, 'close')
    assert.deepEqual(JSON.parse(res.body.toString()), { status: 408, message: 'Request timeout', data: null })
  })

  it('answers an import whose body arrived whole, however long the service takes before reading it', async (t) => {
    const limits = { ...DEFAULT_LIMITS, minBodyBytesPerSecond: 1000, bodyRateGraceMs: 50 }
    const body = 'title,author,year\nDune,Frank Herbert,1965\n'
    // Long past the point where the body, judged by its rate, would be late (the grace, then its
    // length at 1,000 bytes a second), with time for the check, every 50 ms here, to come often.
    const holdMs = limits.bodyRateGraceMs + body.length + 8 * limits.bodyRateGraceMs
    const store = new SqliteStore({ path: ':memory:' })
    const keys = store.idempotencyKeys
    // The route reads the body only once the store has claimed its key: a store that takes long.
    Object.assign(store, {
      idempotencyKeys: { ...keys, claim: (...args: Parameters<typeof keys.claim>) => setTimeout(holdMs).then(() => keys.claim(...args)) },
    })
    const app = await buildTestApp({ limits }, { store })
    t.after(() => app.close())
    const port = await listenOnLoopback(app)
    const head = `POST /books/import HTTP/1.1\r\nHost: x\r\nAuthorization: ${await issueToken(app)}\r\nContent-Type: text/csv\r\nIdempotency-Key: k\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`
    const res = parseResponse(await sendRaw(port, head + body))
    assert.equal(res.status, 201, res.body.toString())
    assert.deepEqual(JSON.parse(res.body.toString()).data, { imported: 1, ids: [1] })
  })

  it('lets a body through that arrives past the grace period but above the minimum rate', async (t) => {
    const { port } = await listenWithBodyRate(t)
    // 1,500 bytes over about 750 ms: 2,000 bytes a second.
    const body = JSON.stringify({ username: TEST_USERNAME, password: TEST_PASSWORD }).padEnd(1500, ' ')
    const socket = connect({ port, host: '127.0.0.1' })
    t.after(() => socket.destroy())
    const chunks: Buffer[] = []
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    const ended = new Promise((resolve) => socket.once('end', resolve))
    socket.write(
      `POST /token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
    )
    for (let sent = 0; sent < body.length; sent += 75) {
      await setTimeout(37.5)
      socket.write(body.slice(sent, sent + 75))
    }
    await ended
    assert.equal(parseResponse(Buffer.concat(chunks)).status, 200)
  })

  it('lets a body that keeps up with the minimum rate through', async (t) => {
    const limits = { ...DEFAULT_LIMITS, minBodyBytesPerSecond: 1000, bodyRateGraceMs: 300 }
    const app = await buildTestApp({ limits })
    t.after(() => app.close())
    const res = await app.inject({ method: 'POST', url: '/token', payload: { username: TEST_USERNAME, password: TEST_PASSWORD } })
    assert.equal(res.statusCode, 200)
  })
})

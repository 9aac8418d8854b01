import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { describe, it } from 'node:test'
import { DEFAULT_LIMITS, type ConnectionLimits } from '../../../src/config.ts'
import { buildTestApp, issueToken, listenOnLoopback } from '../../helpers.ts'
import { parseResponse } from '../../raw-http.ts'
import { watchConnections } from '../../support/connections.ts'

const SHORT: ConnectionLimits = {
  headersTimeoutMs: 500,
  requestTimeoutMs: 1000,
  keepAliveTimeoutMs: 300,
  maxConnections: 100,
  maxConnectionsPerAddress: 100,
  minBodyBytesPerSecond: 0,
  bodyRateGraceMs: 0,
}
/**
 * Timeouts far longer than any test here takes: a connection closed before them was closed by
 * the one short limit a test sets, however slow the machine.
 */
const LONG_MS = 60_000

interface Trickler {
  socket: Socket
  /** Resolves with what the server sent and the milliseconds it took to close the socket. */
  closed: Promise<{ received: Buffer; afterMs: number }>
  stop(): void
}

/** Opens a connection that sends `head` and then one byte of `drip` every `everyMs`, forever. */
function trickle(port: number, head: string, drip: string, everyMs: number): Trickler {
  const socket = connect({ port, host: '127.0.0.1' })
  const started = Date.now()
  const chunks: Buffer[] = []
  socket.on('data', (chunk: Buffer) => chunks.push(chunk))
  socket.on('error', () => {})
  let timer: NodeJS.Timeout | undefined
  socket.once('connect', () => {
    if (head !== '') socket.write(head)
    let at = 0
    timer = setInterval(() => {
      if (!socket.destroyed && socket.writable) socket.write(drip[at++ % drip.length]!)
    }, everyMs)
  })
  const closed = new Promise<{ received: Buffer; afterMs: number }>((resolve) =>
    socket.once('close', () => {
      clearInterval(timer)
      resolve({ received: Buffer.concat(chunks), afterMs: Date.now() - started })
    }),
  )
  return { socket, closed, stop: () => socket.destroy() }
}

/** A limit that does not work leaves a client connected forever: this timeout fails the test then. */
const GIVE_UP = { timeout: 60_000 }

describe('slow and stuck clients', () => {
  it('cuts a client that trickles its headers with 408 while others are served', GIVE_UP, async (t) => {
    // Long enough that ten answers come first on a loaded machine; 500 ms was not, beside a busy core.
    const limits = { ...SHORT, headersTimeoutMs: 3000, requestTimeoutMs: LONG_MS }
    const app = await buildTestApp({ limits })
    t.after(() => app.close())
    const port = await listenOnLoopback(app)
    const token = await issueToken(app)
    const slow = trickle(port, 'GET /books HTTP/1.1\r\nHost: x\r\nX-Slow: ', 'abcdefgh', 50)

    await Promise.all(
      Array.from({ length: 10 }, async () => {
        const res = await fetch(`http://127.0.0.1:${port}/books`, { headers: { authorization: token } })
        assert.equal(res.status, 200)
        await res.arrayBuffer()
      }),
    )
    assert.equal(slow.socket.destroyed, false, 'the others were served while the slow client was still connected')

    const { received, afterMs } = await slow.closed
    assert.ok(afterMs >= limits.headersTimeoutMs, `closed after ${afterMs} ms`)
    const answer = parseResponse(received)
    assert.equal(answer.status, 408)
    assert.deepEqual(JSON.parse(answer.body.toString()), { status: 408, message: 'Request timeout', data: null })
  })

  it('cuts a client that trickles its body once the request timeout passes', GIVE_UP, async (t) => {
    const app = await buildTestApp({ limits: SHORT })
    t.after(() => app.close())
    const port = await listenOnLoopback(app)
    const token = await issueToken(app)
    const head = `POST /book HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nContent-Length: 10000\r\n\r\n`
    const slow = trickle(port, head, '{"title":"', 50)
    const { received, afterMs } = await slow.closed
    assert.ok(afterMs >= SHORT.requestTimeoutMs, `closed after ${afterMs} ms`)
    assert.equal(parseResponse(received).status, 408)
  })

  it('closes a connection that never sends a byte', GIVE_UP, async (t) => {
    const app = await buildTestApp({ limits: SHORT })
    t.after(() => app.close())
    const port = await listenOnLoopback(app)
    const silent = trickle(port, '', '', LONG_MS)
    const { received, afterMs } = await silent.closed
    assert.ok(afterMs >= SHORT.headersTimeoutMs, `closed after ${afterMs} ms`)
    assert.equal(parseResponse(received).status, 408)
  })

  it('closes an idle kept-alive connection after the keep-alive timeout', GIVE_UP, async (t) => {
    // Long request timeouts, so only the keep-alive timeout can close it before them.
    const limits = { ...DEFAULT_LIMITS, headersTimeoutMs: LONG_MS, requestTimeoutMs: LONG_MS, keepAliveTimeoutMs: 300, maxConnections: 100 }
    const app = await buildTestApp({ limits })
    t.after(() => app.close())
    const port = await listenOnLoopback(app)
    const idle = trickle(port, 'GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n', '', LONG_MS)
    const { received, afterMs } = await idle.closed
    assert.equal(parseResponse(received).status, 404)
    assert.ok(afterMs >= limits.keepAliveTimeoutMs && afterMs < LONG_MS, `closed after ${afterMs} ms`)
  })

  it('closes connections beyond the limit and serves again once others leave', GIVE_UP, async (t) => {
    const limits = { ...DEFAULT_LIMITS, maxConnections: 5 }
    const app = await buildTestApp({ limits })
    t.after(() => app.close())
    const connections = watchConnections(app)
    const port = await listenOnLoopback(app)
    const held = connections.reach(5)
    const holders = Array.from({ length: 5 }, () => trickle(port, 'GET /books HTTP/1.1\r\nHost: x\r\nX-Hold: ', 'a', 1000))
    await held
    const extra = trickle(port, 'GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', '', LONG_MS)
    const { received, afterMs } = await extra.closed
    assert.equal(received.length, 0)
    // Closed on arrival, not by the headers timeout.
    assert.ok(afterMs < limits.headersTimeoutMs, `closed after ${afterMs} ms`)

    const released = connections.reach(0)
    for (const holder of holders) holder.stop()
    await released
    const res = await fetch(`http://127.0.0.1:${port}/nowhere`)
    assert.equal(res.status, 404)
    await res.arrayBuffer()
  })
})

import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { DEFAULT_LIMITS, type ConnectionLimits } from '../../src/config.ts'
import { buildTestApp, issueToken, listenOnLoopback } from '../helpers.ts'
import { parseResponse } from '../raw-http.ts'

const SHORT: ConnectionLimits = {
  headersTimeoutMs: 500,
  requestTimeoutMs: 1000,
  keepAliveTimeoutMs: 300,
  maxConnections: 100,
  maxConnectionsPerAddress: 100,
  minBodyBytesPerSecond: 0,
  bodyRateGraceMs: 0,
}

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

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = Date.now()
  const result = await work()
  return [result, Date.now() - started]
}

describe('slow and stuck clients', () => {
  it('cuts a client that trickles its headers with 408 while others are served', async (t) => {
    const app = await buildTestApp({ limits: SHORT })
    t.after(() => app.close())
    const port = await listenOnLoopback(app)
    const token = await issueToken(app)
    const slow = trickle(port, 'GET /books HTTP/1.1\r\nHost: x\r\nX-Slow: ', 'abcdefgh', 50)

    // While the slow client holds its connection, ordinary requests are answered promptly.
    for (let i = 0; i < 10; i++) {
      const [res, ms] = await timed(() => fetch(`http://127.0.0.1:${port}/books`, { headers: { authorization: token } }))
      assert.equal(res.status, 200)
      await res.arrayBuffer()
      assert.ok(ms < 1000, `request ${i} took ${ms} ms`)
    }
    assert.equal(slow.socket.destroyed, false, 'the others were served while the slow client was still connected')

    const { received, afterMs } = await slow.closed
    assert.ok(afterMs >= SHORT.headersTimeoutMs && afterMs < SHORT.headersTimeoutMs + 1500, `closed after ${afterMs} ms`)
    const answer = parseResponse(received)
    assert.equal(answer.status, 408)
    assert.deepEqual(JSON.parse(answer.body.toString()), { status: 408, message: 'Request timeout', data: null })
  })

  it('cuts a client that trickles its body once the request timeout passes', async (t) => {
    const app = await buildTestApp({ limits: SHORT })
    t.after(() => app.close())
    const port = await listenOnLoopback(app)
    const token = await issueToken(app)
    const head = `POST /book HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nContent-Length: 10000\r\n\r\n`
    const slow = trickle(port, head, '{"title":"', 50)
    const { received, afterMs } = await slow.closed
    assert.ok(afterMs >= SHORT.requestTimeoutMs && afterMs < SHORT.requestTimeoutMs + 1500, `closed after ${afterMs} ms`)
    assert.equal(parseResponse(received).status, 408)
  })

  it('closes a connection that never sends a byte', async (t) => {
    const app = await buildTestApp({ limits: SHORT })
    t.after(() => app.close())
    const port = await listenOnLoopback(app)
    const silent = trickle(port, '', '', 60_000)
    const { afterMs } = await silent.closed
    assert.ok(afterMs < SHORT.requestTimeoutMs + 1500, `closed after ${afterMs} ms`)
  })

  it('closes an idle kept-alive connection after the keep-alive timeout', async (t) => {
    // Long request timeouts, so only the keep-alive timeout (plus Node's one-second grace) can close it.
    const limits = { ...DEFAULT_LIMITS, headersTimeoutMs: 4000, requestTimeoutMs: 8000, keepAliveTimeoutMs: 300, maxConnections: 100 }
    const app = await buildTestApp({ limits })
    t.after(() => app.close())
    const port = await listenOnLoopback(app)
    const idle = trickle(port, 'GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n', '', 60_000)
    const { received, afterMs } = await idle.closed
    assert.equal(parseResponse(received).status, 404)
    assert.ok(afterMs >= limits.keepAliveTimeoutMs && afterMs < 2500, `closed after ${afterMs} ms`)
  })

  it('closes connections beyond the limit and serves again once others leave', async (t) => {
    const limits = { ...DEFAULT_LIMITS, maxConnections: 5 }
    const app = await buildTestApp({ limits })
    t.after(() => app.close())
    const port = await listenOnLoopback(app)
    const holders = Array.from({ length: 5 }, () => trickle(port, 'GET /books HTTP/1.1\r\nHost: x\r\nX-Hold: ', 'a', 1000))
    await sleep(200)
    const extra = trickle(port, 'GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', '', 60_000)
    const { received, afterMs } = await extra.closed
    assert.equal(received.length, 0)
    assert.ok(afterMs < 1000, `closed after ${afterMs} ms`)

    for (const holder of holders) holder.stop()
    await Promise.all(holders.map((holder) => holder.closed))
    await sleep(100)
    const res = await fetch(`http://127.0.0.1:${port}/nowhere`)
    assert.equal(res.status, 404)
    await res.arrayBuffer()
  })
})

import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { test } from 'node:test'
import { DEFAULT_LIMITS } from '../../../src/config.ts'
import { buildTestApp, listenOnLoopback } from '../../helpers.ts'
import { serviceEnv, startService } from '../../support/service.ts'

/** The stated bound: however many readers stall on the 4.3 MB docs script, together they add less than this. */
const RSS_BOUND_BYTES = 64 * 1024 * 1024
const READERS = 150
const SCRIPT_REQUEST = 'GET /docs/js/scalar.js HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: identity\r\n\r\n'

function rssOf(pid: number): number {
  const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return Number(kib![1]) * 1024
}

/** A reader that asks for the uncompressed script, takes the first bytes, then never reads again. */
function stalledReader(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' }, () => socket.write(SCRIPT_REQUEST))
    socket.once('error', reject)
    socket.once('data', () => {
      socket.pause()
      socket.removeListener('error', reject)
      socket.on('error', () => {})
      resolve(socket)
    })
  })
}

test(
  `${READERS} readers that stop reading the docs script add less than 64 MiB to the process`,
  { skip: process.platform !== 'linux' && 'reads /proc' },
  async (t) => {
    // One address holding this many connections: above its share, which is not what this test is about.
    const service = await startService(serviceEnv('sqlite::memory:', { MAX_CONNECTIONS_PER_ADDRESS: String(READERS + 10) }))
    t.after(() => service.stop())
    const port = Number(new URL(service.url).port)
    const pid = service.child.pid!
    // The script is compressed once, on first use: that one-time cost is no reader's.
    await (await fetch(`${service.url}/docs/js/scalar.js`)).arrayBuffer()
    const before = rssOf(pid)

    const readers = await Promise.all(Array.from({ length: READERS }, () => stalledReader(port)))
    t.after(() => readers.forEach((socket) => socket.destroy()))
    // Answered while they stall, so the process has done its writing to them by then.
    assert.equal((await fetch(`${service.url}/healthz`)).status, 200)
    const grown = rssOf(pid) - before
    assert.ok(grown < RSS_BOUND_BYTES, `${READERS} stalled readers grew RSS by ${(grown / 2 ** 20).toFixed(1)} MiB`)
  },
)

test('a reader that stops reading is cut within twice REQUEST_TIMEOUT_MS of the last byte handed to it', async (t) => {
  const requestTimeoutMs = 2000
  const app = await buildTestApp({ limits: { ...DEFAULT_LIMITS, requestTimeoutMs, headersTimeoutMs: 500 } })
  t.after(() => app.close())
  await app.inject({ method: 'GET', url: '/docs/js/scalar.js' })
  const port = await listenOnLoopback(app)
  // The client cannot see the close while it does not read: the server's side of the socket can.
  // The kernel's buffers take bytes for a while after the client stops: the clock starts at the last of them.
  const stalledFor = new Promise<number>((resolve) => {
    app.server.once('connection', (socket) => {
      let written = 0
      let lastProgress = performance.now()
      const watch = setInterval(() => {
        if (socket.bytesWritten === written) return
        written = socket.bytesWritten
        lastProgress = performance.now()
      }, 20)
      socket.once('close', () => {
        clearInterval(watch)
        resolve(performance.now() - lastProgress)
      })
    })
  })
  // A machine too busy to run this process in time delays the server's timer by as much.
  const delay = monitorEventLoopDelay({ resolution: 20 })
  delay.enable()
  const reader = await stalledReader(port)
  t.after(() => reader.destroy())
  const after = await stalledFor
  delay.disable()
  const lateMs = delay.max / 1e6
  const cut = `cut ${Math.round(after)} ms after the last byte, the event loop late by up to ${Math.round(lateMs)} ms`
  assert.ok(after >= requestTimeoutMs - 100, cut)
  // The kernel keeps draining what it was handed for a while; the timeout counts from its last write.
  assert.ok(after < 2 * requestTimeoutMs + 500 + lateMs, cut)
})

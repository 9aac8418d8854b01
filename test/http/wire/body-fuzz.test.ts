import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { test } from 'node:test'
import { setTimeout } from 'node:timers/promises'
import fc from 'fast-check'
import { DEFAULT_LIMITS } from '../../../src/config.ts'
import { buildTestApp, dune, issueToken, listenOnLoopback, storeEngines, TEST_PASSWORD, TEST_USERNAME, withToken } from '../../helpers.ts'
import { parseResponse } from '../../raw-http.ts'

/** Wants 1,000 bytes a second once 200 ms have passed; a whole body within 2 s. */
const LIMITS = { ...DEFAULT_LIMITS, minBodyBytesPerSecond: 1000, bodyRateGraceMs: 200, requestTimeoutMs: 2000, headersTimeoutMs: 1000 }

/** Every route that reads a body, with a body it would take. */
const ROUTES = [
  {
    head: 'POST /token',
    body: JSON.stringify({ username: TEST_USERNAME, password: TEST_PASSWORD }),
    token: false,
    type: 'application/json',
  },
  { head: 'POST /book', body: JSON.stringify(dune), token: true, type: 'application/json' },
  { head: 'PUT /book/1', body: JSON.stringify({ year: 1966 }), token: true, type: 'application/json' },
  { head: 'POST /book/1/revert', body: JSON.stringify({ seq: 1 }), token: true, type: 'application/json' },
  { head: 'POST /book/1/restore', body: '{}', token: true, type: 'application/json' },
  {
    head: 'POST /users',
    body: JSON.stringify({ username: 'ada', password: 'a quiet harbour at dawn', role: 'reader' }),
    token: true,
    type: 'application/json',
  },
  { head: 'PUT /user/ada', body: JSON.stringify({ role: 'editor' }), token: true, type: 'application/json' },
  { head: 'POST /keys', body: JSON.stringify({ name: 'k', role: 'reader' }), token: true, type: 'application/json' },
  { head: 'POST /books/import', body: 'title,author,year\nDune,Frank Herbert,1965\n', token: true, type: 'text/csv' },
]

/** How a client sends its body: all of it, slowly, a part and then nothing, a part and then leaving, or far more than it says. */
const behaviour = fc.record({
  route: fc.nat(ROUTES.length - 1),
  kind: fc.constantFrom('whole', 'trickle', 'partial', 'leave', 'over', 'chunked garbage', 'huge length'),
  cut: fc.double({ min: 0, max: 1, noNaN: true }),
  key: fc.boolean(),
  // A type no route reads: an import answers 415 before reading its body.
  plainText: fc.boolean(),
})

// On both engines: each reads an import its own way (PostgreSQL stores it as it reads it).
for (const engine of storeEngines)
  test(
    `no body, however it arrives or does not, ends the process or hangs its request (${engine.name}, seeded)`,
    { skip: engine.skip, timeout: 180_000 },
    async (t) => {
      const app = await buildTestApp({ limits: LIMITS }, { store: await engine.open() })
      t.after(() => app.close())
      const port = await listenOnLoopback(app)
      const token = await issueToken(app)
      await app.inject(withToken(token, { method: 'POST', url: '/book', payload: dune }))
      const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31)

      await fc.assert(
        fc.asyncProperty(behaviour, async ({ route: n, kind, cut, key, plainText }) => {
          const route = ROUTES[n]!
          const body = Buffer.from(route.body)
          const declared = kind === 'huge length' ? 1_000_000_000 : kind === 'over' ? Math.max(1, Math.floor(body.length / 2)) : body.length
          const head =
            `${route.head} HTTP/1.1\r\nHost: x\r\nContent-Type: ${plainText ? 'text/plain' : route.type}\r\n` +
            (route.token ? `Authorization: ${token}\r\n` : '') +
            (key ? `Idempotency-Key: fuzz-${Math.random()}\r\n` : '') +
            (kind === 'chunked garbage' ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${declared}\r\n`) +
            'Connection: close\r\n\r\n'
          const socket = connect({ port, host: '127.0.0.1' })
          const chunks: Buffer[] = []
          socket.on('data', (chunk: Buffer) => chunks.push(chunk))
          socket.on('error', () => {})
          const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
          socket.write(head)
          const part = body.subarray(0, Math.floor(body.length * cut))
          if (kind === 'whole' || kind === 'over' || kind === 'huge length')
            socket.write(kind === 'over' ? Buffer.concat([body, body]) : body)
          else if (kind === 'chunked garbage') socket.write(`zz\r\n${part.toString('latin1')}\r\n`)
          else if (kind === 'trickle') {
            for (const byte of part.subarray(0, 8)) {
              socket.write(Buffer.from([byte]))
              await setTimeout(40)
            }
          } else socket.write(part)
          if (kind === 'leave') {
            await setTimeout(20)
            socket.destroy()
          }
          // Every request that keeps its connection is answered within the request timeout, and closed.
          const answered = await Promise.race([closed.then(() => true), setTimeout(LIMITS.requestTimeoutMs + 1500, false)])
          socket.destroy()
          if (kind !== 'leave') {
            assert.ok(answered, `${kind} ${route.head}: still open`)
            if (chunks.length > 0) {
              const answer = parseResponse(Buffer.concat(chunks))
              const envelope = JSON.parse(answer.body.toString()) as { status: number }
              assert.equal(envelope.status, answer.status, `${kind} ${route.head}`)
            }
          }
          // The service lives on and answers others.
          const res = await app.inject(withToken(token, { method: 'GET', url: '/book/1' }))
          assert.equal(res.statusCode, 200)
        }),
        { seed, numRuns: 30 },
      )
    },
  )

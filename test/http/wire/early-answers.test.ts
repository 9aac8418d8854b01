import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { describe, it, type TestContext } from 'node:test'
import { setTimeout } from 'node:timers/promises'
import { DEFAULT_LIMITS } from '../../../src/config.ts'
import { buildTestApp, dune, issueToken, listenOnLoopback, withToken } from '../../helpers.ts'
import { parseResponse } from '../../raw-http.ts'

/** Wants 1,000 bytes a second of a body once 200 ms have passed: a body left unsent fails that soon. */
const LIMITS = { ...DEFAULT_LIMITS, minBodyBytesPerSecond: 1000, bodyRateGraceMs: 200 }

async function listen(t: TestContext) {
  const app = await buildTestApp({ limits: LIMITS })
  t.after(() => app.close())
  return { app, port: await listenOnLoopback(app), token: await issueToken(app) }
}

/**
 * Sends `head` and the start of a body that it says is far longer, and leaves the socket open: the
 * answer that comes before the body, and whether the server closed the connection after it.
 */
async function answerBeforeBody(port: number, head: string, start = '123456789012345678') {
  const socket = connect({ port, host: '127.0.0.1' })
  const chunks: Buffer[] = []
  socket.on('data', (chunk: Buffer) => chunks.push(chunk))
  socket.on('error', () => {})
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  socket.write(`${head}Content-Length: 1000000\r\n\r\n${start}`)
  await Promise.race([closed, setTimeout(5000)])
  socket.destroy()
  return parseResponse(Buffer.concat(chunks))
}

/** Long enough for the body-rate check to have run several times over every body above. */
const afterTheRateCheck = () => setTimeout(LIMITS.bodyRateGraceMs + 1000)

describe('answers given before the body arrived', { concurrency: true }, () => {
  const cases: { name: string; status: number; head: (token: string) => string }[] = [
    {
      name: 'an import of an unsupported media type (415)',
      status: 415,
      head: (token) => `POST /books/import HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nContent-Type: text/plain\r\n`,
    },
    {
      name: 'an import without a token (401)',
      status: 401,
      head: () => 'POST /books/import HTTP/1.1\r\nHost: x\r\nContent-Type: text/csv\r\n',
    },
    {
      name: 'an import from a page of another site (403)',
      status: 403,
      head: (token) => `POST /books/import HTTP/1.1\r\nHost: x\r\nOrigin: https://evil.example\r\nAuthorization: ${token}\r\n`,
    },
    {
      name: 'an import over 32 MiB by its Content-Length (413)',
      status: 413,
      head: (token) => `POST /books/import HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nContent-Length: 40000000\r\nX-Ignored: `,
    },
    {
      name: 'a book without a token (401)',
      status: 401,
      head: () => 'POST /book HTTP/1.1\r\nHost: x\r\n',
    },
    {
      name: 'a book over 64 KiB by its Content-Length (413)',
      status: 413,
      head: (token) => `POST /book HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\n`,
    },
    {
      name: 'an update of a book that does not exist (404)',
      status: 404,
      head: (token) => `PUT /book/999 HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\n`,
    },
    {
      name: 'a change stream without a token (401)',
      status: 401,
      head: () => 'GET /books/changes HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n',
    },
    {
      name: 'a change stream resumed after a Last-Event-ID that is not a seq (400)',
      status: 400,
      head: (token) =>
        `GET /books/changes HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nLast-Event-ID: x\r\nAuthorization: ${token}\r\n`,
    },
    {
      name: 'a login from a page of another site (403)',
      status: 403,
      head: () => 'POST /token HTTP/1.1\r\nHost: x\r\nOrigin: https://evil.example\r\n',
    },
  ]
  for (const { name, status, head } of cases) {
    it(`${name}: the process lives on, and the connection is closed`, async (t) => {
      const { app, port, token } = await listen(t)
      const answer = await answerBeforeBody(port, head(token))
      assert.equal(answer.status, status)
      assert.equal(answer.headers.connection, 'close')
      await afterTheRateCheck()
      const res = await app.inject(withToken(token, { method: 'GET', url: '/books' }))
      assert.equal(res.statusCode, 200)
    })
  }

  for (const [status, message] of [
    [409, 'a retried import whose first request is still running (409)'],
    [422, 'a retried import with another body (422)'],
  ] as const) {
    it(`${message}: the process lives on, and the connection is closed`, async (t) => {
      const { app, port, token } = await listen(t)
      const key = `key-${status}`
      if (status === 422) {
        const first = await app.inject(
          withToken(token, {
            method: 'POST',
            url: '/books/import',
            headers: { 'content-type': 'text/csv', 'idempotency-key': key },
            payload: 'title,author,year\nDune,Frank Herbert,1965\n',
          }),
        )
        assert.equal(first.statusCode, 201)
      }
      const head = `POST /books/import HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nContent-Type: text/csv\r\nIdempotency-Key: ${key}\r\n`
      // The first request holds the key while its body trickles in.
      const holder = status === 409 ? connect({ port, host: '127.0.0.1' }) : undefined
      t.after(() => holder?.destroy())
      holder?.on('error', () => {})
      holder?.write(`${head}Content-Length: 1000000\r\n\r\ntitle,author,year\n`)
      if (holder) await setTimeout(100)
      // A 422 reads the body to compare it: one that never comes fails as too slow, or as a different body.
      const answer = await answerBeforeBody(port, head, 'title,author,year\nOther,Author,1\n')
      assert.ok([status, 408].includes(answer.status), `answered ${answer.status}`)
      assert.equal(answer.headers.connection, 'close')
      await afterTheRateCheck()
      const res = await app.inject(withToken(token, { method: 'POST', url: '/book', payload: dune }))
      assert.equal(res.statusCode, 201)
    })
  }
})

import assert from 'node:assert/strict'
import { readdir, readlink } from 'node:fs/promises'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { describe, test } from 'node:test'
import { setTimeout } from 'node:timers/promises'
import { DEFAULT_LIMITS } from '../../src/config.ts'
import { buildTestApp, issueToken, listenOnLoopback, storeEngines, withToken } from '../helpers.ts'

/** Import files this process holds open: each a spool of an import under way. */
async function openSpools(): Promise<number> {
  const fds = await readdir('/proc/self/fd')
  const targets = await Promise.all(fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')))
  return targets.filter((target) => target.startsWith(tmpdir()) && target.includes('book-import-')).length
}

async function until(condition: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const giveUpAt = Date.now() + timeoutMs
  while (Date.now() < giveUpAt) {
    if (await condition()) return true
    await setTimeout(50)
  }
  return condition()
}

const ROW = 'A title of some length,An author of some length,1999\n'

for (const engine of storeEngines) {
  describe(`imports abandoned by their clients on ${engine.name}`, { skip: engine.skip }, () => {
    test('each frees its spool file and its Idempotency-Key at once, wherever the client left', { timeout: 90_000 }, async (t) => {
      const app = await buildTestApp({}, { store: await engine.open() })
      t.after(() => app.close())
      const port = await listenOnLoopback(app)
      const token = await issueToken(app)
      const declared = 32 * 1024 * 1024 - 100
      // Some clients leave mid-header-row, some mid-body, some just short of the end.
      const sent = [10, 1000, 100_000, 1_000_000]
      await Promise.all(
        sent.map(async (bytes, n) => {
          const socket = connect({ port, host: '127.0.0.1' })
          socket.on('error', () => {})
          socket.write(
            `POST /books/import HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nContent-Type: text/csv\r\n` +
              `Idempotency-Key: abandoned-${n}\r\nContent-Length: ${declared}\r\n\r\n`,
          )
          let body = `title,author,year\n${ROW.repeat(Math.ceil(bytes / ROW.length))}`.slice(0, bytes)
          while (body.length > 0) {
            if (!socket.write(body.slice(0, 65536))) await new Promise((resolve) => socket.once('drain', resolve))
            body = body.slice(65536)
          }
          await setTimeout(200)
          socket.destroy()
        }),
      )
      // A client's leaving is seen once the server has read what it sent before it left: on a loaded
      // machine that may take seconds, and the promise is "within the request timeout".
      const within = DEFAULT_LIMITS.requestTimeoutMs
      assert.ok(await until(async () => (await openSpools()) === 0, within), `every spool file is closed: ${await openSpools()} open`)
      // Each key is free again: a retry stores its books instead of waiting for the abandoned request.
      // The key goes as the request's answer is sent, after its spool file is closed: on a loaded
      // machine a retry right after the spools close may still find it held (409, which stores nothing).
      for (let n = 0; n < sent.length; n++) {
        const retried = () =>
          app.inject(
            withToken(token, {
              method: 'POST',
              url: '/books/import',
              headers: { 'content-type': 'text/csv', 'idempotency-key': `abandoned-${n}` },
              payload: `title,author,year\n${ROW}`,
            }),
          )
        let retry!: Awaited<ReturnType<typeof retried>>
        assert.ok(await until(async () => (retry = await retried()).statusCode !== 409, within), `key ${n} is still held`)
        assert.equal(retry.statusCode, 201, retry.body)
      }
      const books = await app.inject(withToken(token, { method: 'GET', url: '/books?count=true&limit=1' }))
      assert.equal(books.headers['x-total-count'], String(sent.length))
    })
  })
}

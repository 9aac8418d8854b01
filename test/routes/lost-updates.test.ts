import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { buildTestApp, dune, issueToken, listenOnLoopback, storeEngines } from '../helpers.ts'

interface Answer {
  status: number
  message: string
  data: { id: number; title: string; author: string; year: number }
}

const CLIENTS = 10
const INCREMENTS_EACH = 10

for (const engine of storeEngines) {
  describe(`lost updates (${engine.name})`, { skip: engine.skip }, () => {
    async function start(t: { after(fn: () => unknown): void }) {
      const app = await buildTestApp({}, { store: await engine.open() })
      t.after(() => app.close())
      const port = await listenOnLoopback(app)
      const token = await issueToken(app)
      const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
        const res = await fetch(`http://127.0.0.1:${port}${path}`, {
          method,
          headers: { authorization: token, 'content-type': 'application/json', ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
        })
        return { status: res.status, etag: res.headers.get('etag'), body: (await res.json()) as Answer }
      }
      return call
    }

    it('ten clients incrementing one year with If-Match and retrying on 412 lose no increment', async (t) => {
      const call = await start(t)
      const created = await call('POST', '/book', { ...dune, year: 1000 })
      const path = `/book/${created.body.data.id}`
      let conflicts = 0

      async function client() {
        for (let done = 0; done < INCREMENTS_EACH;) {
          const read = await call('GET', path)
          assert.equal(read.status, 200)
          assert.match(read.etag ?? '', /^"\d+"$/)
          const write = await call('PUT', path, { year: read.body.data.year + 1 }, { 'if-match': read.etag! })
          if (write.status === 412) {
            conflicts++
            assert.deepEqual(write.body, { status: 412, message: 'Precondition failed', data: null })
            continue
          }
          assert.equal(write.status, 200)
          done++
        }
      }

      await Promise.all(Array.from({ length: CLIENTS }, client))
      const final = await call('GET', path)
      assert.equal(final.body.data.year, 1000 + CLIENTS * INCREMENTS_EACH)
      assert.equal(final.etag, `"${1 + CLIENTS * INCREMENTS_EACH}"`)
      // Without contention the test would prove nothing about lost updates.
      assert.ok(conflicts > 0, 'the clients never collided')
    })

    it('a stale If-Match gets 412 and changes nothing', async (t) => {
      const call = await start(t)
      const created = await call('POST', '/book', dune)
      const path = `/book/${created.body.data.id}`
      const stale = created.etag!
      const first = await call('PUT', path, { title: 'Dune Messiah' }, { 'if-match': stale })
      assert.equal(first.status, 200)
      assert.notEqual(first.etag, stale)

      for (const [body, ifMatch] of [
        [{ title: 'Children of Dune', year: 1976 }, stale],
        [{}, stale],
        [{ year: 1 }, `W/${first.etag}`],
        [{ year: 1 }, '"999"'],
        [{ year: 1 }, 'not-a-tag'],
      ] as const) {
        const res = await call('PUT', path, body, { 'if-match': ifMatch })
        assert.equal(res.status, 412, `If-Match ${ifMatch}`)
        assert.deepEqual(res.body, { status: 412, message: 'Precondition failed', data: null })
      }

      const now = await call('GET', path)
      assert.deepEqual(now.body.data, { ...first.body.data })
      assert.equal(now.body.data.title, 'Dune Messiah')
      assert.equal(now.etag, first.etag)

      const listed = await call('PUT', path, { year: 1966 }, { 'if-match': `"999", ${first.etag}` })
      assert.equal(listed.status, 200)
      assert.equal(listed.body.data.year, 1966)
    })
  })
}

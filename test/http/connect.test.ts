import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildTestApp, listenOnLoopback } from '../helpers.ts'
import { parseResponse, sendRaw } from '../raw-http.ts'

describe('CONNECT', () => {
  it('is refused with the envelope and its socket does not outlive the client', async (t) => {
    const app = await buildTestApp()
    t.after(() => app.close())
    const port = await listenOnLoopback(app)
    const request = `CONNECT /book HTTP/1.1\r\nHost: x\r\nContent-Length: 70000\r\n\r\n${'x'.repeat(70_000)}`
    const res = parseResponse(await sendRaw(port, request))
    assert.equal(res.status, 400)
    assert.deepEqual(JSON.parse(res.body.toString()), { status: 400, message: 'Bad request', data: null })

    const open = () =>
      new Promise<number>((resolve, reject) => app.server.getConnections((err, count) => (err ? reject(err) : resolve(count))))
    for (let waited = 0; (await open()) > 0; waited += 50) {
      assert.ok(waited < 1000, 'the server still holds the socket of a client that has gone')
      await sleep(50)
    }
  })
})

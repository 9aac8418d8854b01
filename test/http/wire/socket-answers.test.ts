import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { buildTestApp, listenOnLoopback } from '../../helpers.ts'
import { parseResponse, sendRaw } from '../../raw-http.ts'
import { watchConnections } from '../../support/connections.ts'

describe('CONNECT', () => {
  it('is refused with the envelope and its socket does not outlive the client', { timeout: 10_000 }, async (t) => {
    const app = await buildTestApp()
    t.after(() => app.close())
    const connections = watchConnections(app)
    const port = await listenOnLoopback(app)
    const request = `CONNECT /book HTTP/1.1\r\nHost: x\r\nContent-Length: 70000\r\n\r\n${'x'.repeat(70_000)}`
    const res = parseResponse(await sendRaw(port, request))
    assert.equal(res.status, 400)
    assert.deepEqual(JSON.parse(res.body.toString()), { status: 400, message: 'Bad request', data: null })
    // A socket the server kept would keep this waiting until the test's timeout fails it.
    await connections.reach(0)
  })
})

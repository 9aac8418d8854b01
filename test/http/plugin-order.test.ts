import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import Fastify, { type FastifyInstance } from 'fastify'
import { crossOrigin } from '../../src/http/plugins/cors.ts'
import { errorEnvelope } from '../../src/http/errors/error-handler.ts'
import { securityHeaders } from '../../src/http/plugins/security-headers.ts'
import { createMetrics } from '../../src/observability/metrics.ts'
import { createRequestTracing } from '../../src/observability/request-tracing.ts'

function bareApp(t: TestContext): FastifyInstance {
  const app = Fastify()
  t.after(() => app.close())
  return app
}

const tracing = () => createRequestTracing(createMetrics({ processMetrics: false })).plugin

describe('cross-cutting plugins declare what must come before them', () => {
  for (const [name, register] of [
    ['cross-origin', (app: FastifyInstance) => app.register(crossOrigin, { origins: ['https://example.org'] })],
    ['error-envelope', (app: FastifyInstance) => app.register(errorEnvelope)],
  ] as const) {
    it(`${name} refuses to load before the request tracing and the security headers`, async (t) => {
      const app = bareApp(t)
      await app.register(securityHeaders)
      await assert.rejects(async () => {
        await register(app)
      }, /request-tracing/)
    })

    it(`${name} loads after them, whatever their own order`, async (t) => {
      const app = bareApp(t)
      await app.register(securityHeaders)
      await app.register(tracing())
      await register(app)
      await app.ready()
      assert.ok(app.hasPlugin(name))
    })
  }

  it('the request tracing and the security headers apply to the whole app, not a scope', async (t) => {
    const app = bareApp(t)
    await app.register(tracing())
    await app.register(securityHeaders)
    app.get('/', async () => 'ok')
    const res = await app.inject({ method: 'GET', url: '/' })
    assert.equal(res.headers['x-content-type-options'], 'nosniff')
    assert.ok(res.headers['x-request-id'])
  })
})

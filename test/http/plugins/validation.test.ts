import assert from 'node:assert/strict'
import { it, type TestContext } from 'node:test'
import Fastify from 'fastify'
import { partValidators } from '../../../src/http/plugins/validation.ts'

/** An app that validates as the service does: `year` in the body and in the query as `schema` says. */
async function app(t: TestContext, year: { type: string; minimum?: number }) {
  const app = Fastify({ schemaController: partValidators })
  t.after(() => app.close())
  const schema = { type: 'object', properties: { year } }
  app.post('/book', { schema: { body: schema, querystring: schema } }, async (request) => ({ body: request.body, query: request.query }))
  await app.ready()
  return app
}

it('checks bodies as sent and coerces the query string', async (t) => {
  const checking = await app(t, { type: 'integer' })
  const sent = await checking.inject({ method: 'POST', url: '/book?year=1965', payload: { year: 1965 } })
  assert.deepEqual(sent.json(), { body: { year: 1965 }, query: { year: 1965 } })
  assert.equal((await checking.inject({ method: 'POST', url: '/book', payload: { year: '1965' } })).statusCode, 400)
})

it('validates by its own schemas in an app built after another in the same process', async (t) => {
  const statuses = []
  for (const year of [{ type: 'integer' }, { type: 'integer', minimum: 2000 }, { type: 'string' }, { type: 'integer' }]) {
    const checking = await app(t, year)
    statuses.push((await checking.inject({ method: 'POST', url: '/book', payload: { year: 1965 } })).statusCode)
    statuses.push((await checking.inject({ method: 'POST', url: '/book?year=1965', payload: {} })).statusCode)
  }
  assert.deepEqual(statuses, [200, 200, 400, 400, 400, 200, 200, 200])
})

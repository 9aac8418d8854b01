import assert from 'node:assert/strict'
import { it, type TestContext } from 'node:test'
import Fastify from 'fastify'
import { lazySerializers } from '../../../src/http/plugins/serializers.ts'

/** An app whose answers are serialized as the service's are, with a schema for 200 and a broken one for 418. */
async function app(t: TestContext, answered: Record<string, { type: string }> = { id: { type: 'integer' }, title: { type: 'string' } }) {
  const app = Fastify({ schemaController: { compilersFactory: { buildSerializer: lazySerializers } } })
  t.after(() => app.close())
  const response = {
    200: { type: 'object', properties: answered },
    418: { type: 'object', properties: { broken: { $ref: '#/definitions/nowhere' } } },
  }
  app.get('/book', { schema: { response } }, async (request, reply) =>
    reply.code(request.query && 'teapot' in (request.query as object) ? 418 : 200).send({ id: 7, title: 'Dune', secret: 'x' }),
  )
  await app.ready()
  return app
}

it('serializes each answer by its schema, building the serializer on the first answer that needs it', async (t) => {
  // A serializer built at start-up would have failed `ready` on the broken schema.
  const started = await app(t)
  for (let i = 0; i < 2; i++) {
    const answer = await started.inject({ method: 'GET', url: '/book' })
    assert.equal(answer.statusCode, 200)
    assert.equal(answer.body, '{"id":7,"title":"Dune"}')
  }
  const broken = await started.inject({ method: 'GET', url: '/book?teapot' })
  assert.equal(broken.statusCode, 500)
})

it('serializes by its own schemas in an app built after another in the same process', async (t) => {
  const answers = []
  for (const answered of [
    { id: { type: 'integer' } },
    { title: { type: 'string' } },
    { id: { type: 'string' } },
    { id: { type: 'integer' } },
  ] as Record<string, { type: string }>[]) {
    answers.push((await (await app(t, answered)).inject({ method: 'GET', url: '/book' })).body)
  }
  assert.deepEqual(answers, ['{"id":7}', '{"title":"Dune"}', '{"id":"7"}', '{"id":7}'])
})

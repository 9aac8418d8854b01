import { readFileSync } from 'node:fs'
import swagger from '@fastify/swagger'
import type { FastifyInstance } from 'fastify'
import { withNamedComponents } from './components.ts'

export const OPENAPI_PATH = '/openapi.json'

const DESCRIPTION = `Book records over JSON with short-lived tokens.

Every answer of the book interface, success or failure, is the envelope \`{"status", "message", "data"}\`:
\`status\` repeats the HTTP status, \`message\` is one of the fixed texts listed per answer, and
\`data\` is the payload or \`null\`. Every answer carries an \`X-Request-Id\` header (the client's own,
when it sends a short plain one), which the log line of that request also carries.

Answers any route may give: 404 \`Not found\` (no such path), 405 \`Method not allowed\` (with \`Allow\`),
408 \`Request timeout\`, 431 \`Request header fields too large\`.`

const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }

/**
 * Collects the schema of every route registered after it, on the root instance so that
 * it sees them all, and serves the document built from the same schemas that validate.
 */
export async function serveOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Book catalogue',
        version,
        description: DESCRIPTION,
      },
      servers: [{ url: '/', description: 'This service' }],
      tags: [
        { name: 'Tokens', description: 'Obtaining the token that the book operations require' },
        { name: 'Books', description: 'Create, list, read, update and delete books' },
        { name: 'Operations', description: 'Health, readiness and metrics for operators; no token needed' },
      ],
      components: {
        securitySchemes: {
          token: {
            type: 'apiKey',
            in: 'header',
            name: 'Authorization',
            description: 'The token from `POST /token`, as it is (`Bearer <token>` is accepted too).',
          },
        },
      },
    },
  })
  app.get(OPENAPI_PATH, { schema: { hide: true } }, (_request, reply) => {
    reply.type('application/json; charset=utf-8').send(openApiDocument(app))
  })
}

/** The envelope every answer of the book interface has, whatever its `data`. */
const ENVELOPE = {
  type: 'object',
  description:
    'Every answer of the book interface: `status` repeats the HTTP status, `message` is a fixed text, `data` the payload or `null`',
  required: ['status', 'message', 'data'],
  properties: { status: { type: 'integer' }, message: { type: 'string' }, data: {} },
}

/** The OpenAPI document of every route of `app`, with its named components; `npm run openapi` writes it to openapi.json. */
export function openApiDocument(app: FastifyInstance): object {
  const document = withNamedComponents(app.swagger()) as { components: { schemas: Record<string, unknown> } }
  document.components.schemas = { Envelope: ENVELOPE, ...document.components.schemas }
  return document
}

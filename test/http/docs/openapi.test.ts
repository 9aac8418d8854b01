import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { NewBook } from '../../../src/schemas.ts'
import { currentDocument } from '../../../scripts/openapi.ts'
import { buildTestApp, dune, issueToken, withToken } from '../../helpers.ts'

const run = promisify(execFile)
const REDOCLY = new URL('../../../node_modules/@redocly/cli/bin/cli.js', import.meta.url).pathname
const REDOCLY_CONFIG = new URL('redocly.yaml', import.meta.url).pathname

interface Operation {
  operationId: string
  security?: Record<string, string[]>[]
  requestBody?: { content: Record<string, { schema: unknown }> }
  responses: Record<string, { description: string; content?: Record<string, { examples?: Record<string, { value: unknown }> }> }>
}
type Document = {
  openapi: string
  paths: Record<string, Record<string, Operation>>
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> }
}

/** A schema of the document, with a reference to a named component followed. */
function resolved(document: Document, schema: unknown): any {
  const ref = (schema as { $ref?: string } | undefined)?.$ref
  return ref === undefined ? schema : document.components.schemas[ref.slice('#/components/schemas/'.length)]
}

const BOOK_OPERATIONS = ['issueToken', 'createBook', 'listBooks', 'getBook', 'updateBook', 'deleteBook', 'importBooks']

/** Every (status, message) pair the examples of an operation show. */
function documentedMessages(operation: Operation): string[] {
  return Object.entries(operation.responses).flatMap(([status, response]) =>
    Object.values(response.content?.['application/json']?.examples ?? {}).map(
      (example) => `${status} ${(example.value as { message: string }).message}`,
    ),
  )
}

describe('GET /openapi.json', () => {
  let app: FastifyInstance
  let doc: Document
  let body: string
  const operations = new Map<string, Operation>()

  before(async () => {
    app = await buildTestApp()
    const res = await app.inject({ method: 'GET', url: '/openapi.json' })
    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^application\/json/)
    body = res.body
    doc = res.json()
    for (const methods of Object.values(doc.paths)) for (const op of Object.values(methods)) operations.set(op.operationId, op)
  })
  after(() => app.close())

  it('is the document that npm run openapi writes to openapi.json, with named components', async () => {
    assert.equal(
      `${JSON.stringify(JSON.parse(body), null, 2)}\n`,
      await readFile(new URL('../../../openapi.json', import.meta.url), 'utf8'),
    )
    assert.equal(await currentDocument(), `${JSON.stringify(JSON.parse(body), null, 2)}\n`)
    for (const name of [
      'Envelope',
      'Book',
      'NewBook',
      'BookChanges',
      'InvalidInput',
      'TokenRefused',
      'BookNotFound',
      'PreconditionFailed',
      'ServiceUnavailable',
    ]) {
      assert.ok(doc.components.schemas[name], name)
    }
    const notFound = operations.get('getBook')!.responses['404']!.content!['application/json'] as { schema: unknown }
    assert.deepEqual(notFound.schema, { $ref: '#/components/schemas/BookNotFound' })
  })

  it('is OpenAPI 3.1 with every route of the service and nothing else', () => {
    assert.equal(doc.openapi, '3.1.0')
    assert.deepEqual(Object.fromEntries(Object.entries(doc.paths).map(([path, methods]) => [path, Object.keys(methods).sort()])), {
      '/token': ['post'],
      '/book': ['post'],
      '/books': ['get'],
      '/book/{id}': ['delete', 'get', 'put'],
      '/books/import': ['post'],
      '/books/export': ['get'],
      '/book/{id}/history': ['get'],
      '/books/trash': ['get'],
      '/book/{id}/restore': ['post'],
      '/book/{id}/revert': ['post'],
      '/books/trash/{id}': ['delete'],
      '/books/changes': ['get'],
      '/token/refresh': ['post'],
      '/users': ['get', 'post'],
      '/user/{username}': ['delete', 'get', 'put'],
      '/keys': ['get', 'post'],
      '/key/{id}': ['delete'],
      '/healthz': ['get'],
      '/readyz': ['get'],
      '/metrics': ['get'],
    })
  })

  it('describes the token scheme and requires it on the book operations only', () => {
    assert.deepEqual(doc.components.securitySchemes.token, {
      type: 'apiKey',
      in: 'header',
      name: 'Authorization',
      description: 'The token from `POST /token`, as it is (`Bearer <token>` is accepted too).',
    })
    for (const id of ['createBook', 'listBooks', 'getBook', 'updateBook', 'deleteBook', 'importBooks', 'exportBooks']) {
      assert.deepEqual(operations.get(id)?.security, [{ token: [] }], id)
    }
    for (const id of ['issueToken', 'health', 'readiness', 'metrics']) assert.deepEqual(operations.get(id)?.security, [], id)
  })

  it('documents the headers that matter to clients', () => {
    const headersOf = (id: string, status: string) =>
      Object.keys((operations.get(id)!.responses[status] as { headers?: object }).headers ?? {})
    assert.deepEqual(headersOf('createBook', '201'), ['Location', 'ETag', 'Idempotent-Replayed'])
    for (const id of ['createBook', 'importBooks']) {
      const { parameters } = operations.get(id) as unknown as { parameters: { in: string; name: string }[] }
      assert.ok(
        parameters.some((parameter) => parameter.in === 'header' && parameter.name === 'idempotency-key'),
        id,
      )
    }
    assert.deepEqual(headersOf('getBook', '200'), ['ETag'])
    assert.deepEqual(headersOf('updateBook', '200'), ['ETag'])
    assert.deepEqual(headersOf('listBooks', '200'), ['Link', 'X-Total-Count', 'X-Change-Seq'])
    assert.deepEqual(headersOf('exportBooks', '200'), ['X-Change-Seq'])
    assert.deepEqual(headersOf('listChanges', '200'), ['Link'])
    assert.deepEqual(headersOf('readiness', '503'), ['Retry-After'])
    assert.deepEqual(headersOf('deleteBook', '503'), ['Retry-After'])
    const parameters = (operations.get('updateBook') as unknown as { parameters: { in: string; name: string }[] }).parameters
    assert.ok(parameters.some((parameter) => parameter.in === 'header' && parameter.name === 'if-match'))
  })

  it('documents every parameter of the list with a description and an example', () => {
    const parameters = (
      operations.get('listBooks') as unknown as { parameters: { in: string; name: string; description?: string; example?: unknown }[] }
    ).parameters
    assert.deepEqual(
      parameters.map((parameter) => `${parameter.in} ${parameter.name}`),
      ['q', 'title', 'author', 'year', 'year_from', 'year_to', 'sort', 'count', 'limit', 'after', 'cursor'].map((name) => `query ${name}`),
    )
    for (const parameter of parameters) {
      assert.ok(parameter.description, parameter.name)
      assert.equal(typeof parameter.example, 'string', parameter.name)
    }
  })

  it('documents the request bodies with the schemas that validate them', () => {
    const media = operations.get('createBook')?.requestBody?.content['application/json'] as { schema: unknown; example: unknown }
    // The examples of a schema become the examples of its media type.
    const { 'x-component': name, ...schema } = JSON.parse(JSON.stringify(NewBook))
    assert.deepEqual(media.schema, { $ref: `#/components/schemas/${name}` })
    assert.deepEqual(resolved(doc, media.schema), schema)
    const { examples } = schema
    assert.deepEqual(media.example, examples[0])
  })

  it('shows every status and message of the interface, in the envelope, with examples', () => {
    const expected: Record<string, string[]> = {
      issueToken: [
        '200 Token generated successfully',
        '400 Invalid request payload',
        '401 Invalid credentials',
        '500 Could not generate token',
        '503 Service unavailable',
      ],
      createBook: [
        '201 Book created successfully',
        '400 Invalid input',
        '401 Authorization token required',
        '401 Invalid token',
        '409 Request with this idempotency key is in progress',
        '422 Idempotency key reused with a different request',
      ],
      importBooks: [
        '201 Books imported successfully',
        '400 Invalid input',
        '401 Invalid token',
        '409 Request with this idempotency key is in progress',
        '413 Payload too large',
        '422 Idempotency key reused with a different request',
      ],
      listBooks: ['200 Books retrieved successfully', '401 Authorization token required', '401 Invalid token'],
      getBook: ['200 Book retrieved successfully', '404 Book not found', '401 Invalid token'],
      updateBook: ['200 Book updated successfully', '400 Invalid input', '404 Book not found', '412 Precondition failed'],
      deleteBook: ['200 Book deleted successfully', '404 Book not found', '401 Authorization token required'],
      readiness: ['200 OK', '503 Service unavailable'],
    }
    for (const [id, messages] of Object.entries(expected)) {
      const shown = documentedMessages(operations.get(id)!)
      for (const message of messages) assert.ok(shown.includes(message), `${id}: ${message} in ${shown.join(', ')}`)
    }
    for (const id of BOOK_OPERATIONS) {
      for (const [status, response] of Object.entries(operations.get(id)!.responses)) {
        const media = response.content?.['application/json'] as { schema?: { required: string[] } } | undefined
        const schema = resolved(doc, media?.schema)
        assert.deepEqual(schema?.required, ['status', 'message', 'data'], `${id} ${status}`)
        assert.notEqual(response.description, 'Default Response', `${id} ${status}`)
      }
    }
  })

  it('documents the answers the service actually gives', async () => {
    const token = await issueToken(app)
    const created = (await app.inject(withToken(token, { method: 'POST', url: '/book', payload: dune }))).json()
    const cases: [string, InjectOptions][] = [
      ['issueToken', { method: 'POST', url: '/token', payload: { username: 'nobody', password: 'x' } }],
      ['issueToken', { method: 'POST', url: '/token', payload: '[]' }],
      ['createBook', { method: 'POST', url: '/book', payload: { title: '' } }],
      ['createBook', { method: 'POST', url: '/book', headers: { authorization: 'nonsense' }, payload: dune }],
      ['listBooks', { method: 'GET', url: '/books?limit=0' }],
      ['listBooks', { method: 'GET', url: '/books', headers: { authorization: '' } }],
      ['getBook', { method: 'GET', url: `/book/${created.data.id}` }],
      ['getBook', { method: 'GET', url: '/book/999999' }],
      ['updateBook', { method: 'PUT', url: `/book/${created.data.id}`, payload: { year: 'x' } }],
      ['updateBook', { method: 'PUT', url: `/book/${created.data.id}`, headers: { 'if-match': '"999"' }, payload: {} }],
      ['updateBook', { method: 'PUT', url: `/book/${created.data.id}`, payload: { year: 1966 } }],
      ['deleteBook', { method: 'DELETE', url: `/book/${created.data.id}` }],
      ['deleteBook', { method: 'DELETE', url: `/book/${created.data.id}` }],
      ['importBooks', { method: 'POST', url: '/books/import', payload: 'title,author,year\nDune,Frank Herbert,1965\n' }],
      ['importBooks', { method: 'POST', url: '/books/import', payload: 'title,author\n' }],
      ['importBooks', { method: 'POST', url: '/books/import', payload: 'x', headers: { 'content-type': 'text/plain' } }],
      ['exportBooks', { method: 'GET', url: '/books/export?format=pdf' }],
      ['listChanges', { method: 'GET', url: '/books/changes?since=latest' }],
      ['listChanges', { method: 'GET', url: '/books/changes?since=x' }],
      ['listChanges', { method: 'GET', url: '/books/changes', headers: { authorization: '' } }],
    ]
    for (const [id, request] of cases) {
      const res = await app.inject(withToken(token, request))
      const { status, message } = res.json<{ status: number; message: string }>()
      assert.equal(status, res.statusCode)
      assert.ok(documentedMessages(operations.get(id)!).includes(`${status} ${message}`), `${id} answered ${status} ${message}`)
    }
  })

  it('passes the OpenAPI linter without an error', { timeout: 60_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'openapi-'))
    const file = join(dir, 'openapi.json')
    await writeFile(file, body)
    try {
      const { stdout } = await run(process.execPath, [REDOCLY, 'lint', '--config', REDOCLY_CONFIG, '--format', 'json', file], {
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      }).catch((err: { stdout?: string; stderr?: string }) => {
        assert.fail(`redocly lint failed:\n${err.stdout ?? ''}\n${err.stderr ?? ''}`)
      })
      const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: { message: string }[] }
      assert.equal(report.totals.errors, 0, report.problems.map((problem) => problem.message).join('\n'))
      assert.equal(report.totals.warnings, 0, report.problems.map((problem) => problem.message).join('\n'))
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

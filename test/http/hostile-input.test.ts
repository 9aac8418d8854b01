import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import type { Book, StoredBook } from '../../src/books/book.ts'
import { buildTestApp, issueToken, listenOnLoopback, storeEngines } from '../helpers.ts'
import { parseResponse, sendRaw } from '../raw-http.ts'
import { testSeed } from '../support/seed.ts'
import { listById } from '../support/reads.ts'

/** FUZZ_RUNS=n runs more or fewer cases; FUZZ_SHRINK=1 shrinks a failure to a minimal request; TEST_SEED=n repeats a run. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 1500)
/** Books present before the run; the plausible writes aim at only half of them. */
const SEEDED = 40
const NOT_ENVELOPE = /^\/(openapi\.json|docs|metrics|app)?(?=[/?#]|$)/

// --- what a hostile client sends -------------------------------------------------------------

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit))
const controlChar = fc.integer({ min: 0, max: 0x1f }).map((code) => String.fromCharCode(code))
const nastyText = fc
  .array(
    fc.oneof(
      fc.string({ unit: 'binary', maxLength: 8 }),
      loneSurrogate,
      controlChar,
      fc.constantFrom(' ', '\u0000', '\u2028', '\uFEFF', '\u{1F4DA}'),
    ),
    { maxLength: 6 },
  )
  .map((parts) => parts.join(''))
const hugeNumber = fc.constantFrom('1e400', '-1e400', '9007199254740993', '1e-400', '-0', '0.5', '1e3', '99999999999999999999999', '2020.0')

const id = fc.oneof(
  fc.integer({ min: 1, max: SEEDED + 5 }).map(String),
  fc.constantFrom(
    '0',
    '-1',
    '01',
    '1.5',
    '1e3',
    'abc',
    '%20',
    '%31',
    '9007199254740991',
    '9007199254740992',
    '99999999999999999999',
    '%00',
    '%ZZ',
    '%C0%AF',
    '%ED%A0%80',
    '1%2F2',
    '..',
    '',
  ),
  fc.string({ unit: 'binary-ascii', maxLength: 12 }).map(encodeURIComponent),
)
const query = fc.oneof(
  fc.constant(''),
  fc
    .tuple(
      fc.constantFrom('limit', 'after', 'x', '__proto__', 'limit[]'),
      fc.oneof(fc.constantFrom('0', '1', '1000', '1001', '-1', '', 'a', '1e3', '%00'), fc.nat().map(String)),
    )
    .map(([key, value]) => `?${key}=${value}`),
  fc.constant('?limit=1&limit=2&after=1&after=x'),
)
const path = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom('/books', '/book', '/token'), query).map(([p, q]) => p + q) },
  { weight: 4, arbitrary: fc.tuple(fc.constant('/book/'), id, query).map(([p, i, q]) => p + i + q) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom(
          '/',
          '/books/',
          '/book/',
          '//books',
          '/BOOKS',
          '/books/../token',
          '/healthz',
          '/readyz',
          '/metrics',
          '/openapi.json',
          '/docs',
          '/books/',
          '/book//',
        ),
        query,
      )
      .map(([p, q]) => p + q),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 20 }).map((s) => `/${encodeURIComponent(s)}`) },
  { weight: 1, arbitrary: fc.constantFrom('*', 'http://localhost/books', '/book/1#frag', '/%', '/book/%ff', '/\u00e9', '/book/\u00ff') },
)
const method = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE') },
  { weight: 2, arbitrary: fc.constantFrom('HEAD', 'OPTIONS', 'PATCH', 'TRACE', 'QUERY', 'CONNECT', 'PROPFIND', 'SEARCH') },
  { weight: 1, arbitrary: fc.constantFrom('get', 'FOO', 'G-T', '') },
)

const validText = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).filter((text) => text.trim() !== '')
const validBook = fc.record({ title: validText, author: validText, year: fc.integer({ min: -9999, max: 9999 }) }, { requiredKeys: [] })
const objectBody = fc.record(
  {
    title: fc.oneof(nastyText, fc.constantFrom('Dune', ' ', '', 'x'.repeat(501)), fc.jsonValue({ maxDepth: 1 })),
    author: fc.oneof(nastyText, fc.constant('Herbert'), fc.jsonValue({ maxDepth: 1 })),
    year: fc.oneof(fc.integer({ min: -10_001, max: 10_001 }), fc.jsonValue({ maxDepth: 1 })),
    id: fc.oneof(fc.nat(), fc.constant(1)),
    username: fc.oneof(nastyText, fc.constant('librarian')),
    password: nastyText,
  },
  { requiredKeys: [] },
)
const body = fc.oneof(
  { weight: 4, arbitrary: validBook.map((value) => JSON.stringify(value)) },
  { weight: 4, arbitrary: objectBody.map((value) => JSON.stringify(value)) },
  { weight: 2, arbitrary: fc.json({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.tuple(objectBody, hugeNumber).map(([value, n]) => JSON.stringify(value).replace(/^\{/, `{"year":${n},`)) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.json(), fc.nat(), fc.string({ unit: 'binary-ascii', maxLength: 3 }))
      .map(([json, at, junk]) => json.slice(0, at % (json.length + 1)) + junk),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 20_000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 1, max: 5_000 })
      .map((depth) => `{"title":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)},"author":"a","year":1}`),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '{"__proto__":{"title":"polluted","admin":true},"title":"T","author":"A","year":1}',
      '{"constructor":{"prototype":{"admin":true}},"title":"T","author":"A","year":1}',
      '{"title":"T","author":"A","year":1,"__proto__":null}',
      '{"title":"\\ud800","author":"A","year":1}',
      '{"title":"\\u0000","author":"A","year":1}',
      '{"title":"T","title":"U","author":"A","year":1}',
      'null',
      '[]',
      '"string"',
      '1',
      'true',
      '',
      ' ',
      '{',
      '}',
      '{"title":}',
      '\ufeff{"title":"T","author":"A","year":1}',
    ),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      Buffer.from([0x7b, 0x22, 0x74, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]),
      Buffer.from('{"title":"\xff"}', 'latin1'),
    ),
  },
  { weight: 1, arbitrary: fc.constant('x'.repeat(70_000)) },
)
const contentType = fc.option(
  fc.oneof(
    fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'application/json; charset=latin1',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
      '*/*',
      '',
      ';;;',
      'application/json\u00ff',
    ),
    fc.string({ unit: 'grapheme-ascii', maxLength: 30 }),
  ),
  { nil: undefined },
)
// Control characters in a header make the parser refuse the whole request, so they come rarely.
const headerValue = fc.oneof(
  { weight: 5, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 20 }) },
)
const extraHeaders = fc.oneof(
  { weight: 2, arbitrary: fc.constant<Array<[string, string]>>([]) },
  {
    weight: 1,
    arbitrary: fc.array(
      fc.tuple(
        fc.oneof(
          fc.constantFrom(
            'If-Match',
            'Accept',
            'Accept-Encoding',
            'X-Forwarded-For',
            'Origin',
            'Expect',
            'Range',
            'Cookie',
            'Transfer-Encoding',
            'X-HTTP-Method-Override',
            'Content-Encoding',
          ),
          fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,15}$/),
        ),
        headerValue,
      ),
      { minLength: 1, maxLength: 3 },
    ),
  },
)

interface HostileRequest {
  method: string
  path: string
  auth: 'none' | 'valid' | 'bearer' | 'garbage'
  garbageAuth: string
  contentType: string | undefined
  headers: Array<[string, string]>
  body: string | Buffer | undefined
}

const anyRequest: fc.Arbitrary<HostileRequest> = fc.record({
  method,
  path,
  auth: fc.constantFrom('none', 'valid', 'valid', 'bearer', 'garbage'),
  garbageAuth: headerValue,
  contentType,
  headers: extraHeaders,
  body: fc.option(body, { nil: undefined, freq: 4 }),
})

/** A request a real client might send, so that writes happen and hostile ones run beside them. */
const plausibleRequest: fc.Arbitrary<HostileRequest> = fc
  .record({
    route: fc.constantFrom('POST /book', 'GET /books', 'GET /book/', 'PUT /book/', 'DELETE /book/'),
    id: fc.oneof(fc.integer({ min: 1, max: SEEDED / 2 }), fc.integer({ min: SEEDED + 1, max: SEEDED + 40 })),
    contentType,
    headers: extraHeaders,
    body: fc.oneof({ weight: 3, arbitrary: validBook.map((value) => JSON.stringify(value)) }, { weight: 1, arbitrary: body }),
  })
  .map(({ route, id, contentType, headers, body }) => {
    const [verb, target] = route.split(' ') as [string, string]
    return {
      method: verb,
      path: target.endsWith('/') ? `${target}${id}` : target,
      auth: 'valid' as const,
      garbageAuth: '',
      contentType,
      headers,
      body: verb === 'POST' || verb === 'PUT' ? body : undefined,
    }
  })

const hostileRequest = fc.oneof({ weight: 2, arbitrary: anyRequest }, { weight: 1, arbitrary: plausibleRequest })

function encode(request: HostileRequest, token: string): Buffer {
  const headers: string[] = ['Host: localhost']
  if (request.auth === 'valid') headers.push(`Authorization: ${token}`)
  if (request.auth === 'bearer') headers.push(`Authorization: Bearer ${token}`)
  if (request.auth === 'garbage') headers.push(`Authorization: ${request.garbageAuth}`)
  if (request.contentType !== undefined) headers.push(`Content-Type: ${request.contentType}`)
  for (const [name, value] of request.headers) headers.push(`${name}: ${value}`)
  const payload = request.body === undefined ? Buffer.alloc(0) : Buffer.from(request.body)
  headers.push('Connection: close', `Content-Length: ${payload.length}`)
  return Buffer.concat([Buffer.from(`${request.method} ${request.path} HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n`, 'latin1'), payload])
}

/** The book id a PUT or DELETE path names, the way the router decodes it. */
function targetId(path: string): number | undefined {
  try {
    const match = /^\/book\/([^/?#]*)/.exec(path)
    return match ? Number(decodeURIComponent(match[1]!)) : undefined
  } catch {
    return undefined
  }
}

function assertStorable(book: Book) {
  for (const text of [book.title, book.author]) {
    assert.equal(typeof text, 'string')
    assert.ok(text.isWellFormed(), `lone surrogate stored: ${JSON.stringify(text)}`)
    assert.ok(!text.includes('\u0000'), 'NUL stored')
    assert.ok(text.trim().length > 0 && text.length <= 500, `bad length stored: ${JSON.stringify(text)}`)
  }
  assert.ok(Number.isInteger(book.year) && book.year >= -9999 && book.year <= 9999, `bad year stored: ${book.year}`)
}

for (const engine of storeEngines) {
  describe(`hostile input (${engine.name})`, { skip: engine.skip }, () => {
    it(`answers ${RUNS} random requests with the envelope, never 5xx, and touches only what valid requests change`, async (t) => {
      const seed = testSeed(t)
      const store = await engine.open()
      const app = await buildTestApp({}, { store })
      t.after(() => app.close())
      const port = await listenOnLoopback(app)
      const token = await issueToken(app)

      const seeded = new Map<number, StoredBook>()
      for (let i = 0; i < SEEDED; i++) {
        const book = await store.books.create('tester', { title: `Seed ${i} \u00e9\u{1F4D6}`, author: `Author ${i}`, year: 1900 + i })
        seeded.set(book.id, book)
      }
      const touched = new Set<number>()
      const statuses = new Map<string, number>()

      await fc.assert(
        fc.asyncProperty(hostileRequest, async (request) => {
          const raw = await sendRaw(port, encode(request, token))
          assert.ok(raw.length > 0, 'the server closed the connection without an answer')
          const res = parseResponse(raw, request.method === 'HEAD')
          const key = `${request.method} ${res.status}`
          statuses.set(key, (statuses.get(key) ?? 0) + 1)
          assert.ok(res.status < 500, `answered ${res.status}`)
          assert.equal(res.headers['x-content-type-options'], 'nosniff')
          const authorized = request.auth === 'valid' || request.auth === 'bearer'
          if (res.status < 300 && /^\/book/.test(request.path)) assert.ok(authorized, `${res.status} without a token`)
          if (res.status >= 200 && res.status < 300 && (request.method === 'PUT' || request.method === 'DELETE')) {
            const target = targetId(request.path)
            assert.ok(target !== undefined && Number.isSafeInteger(target), `2xx ${request.method} on ${request.path}`)
            touched.add(target)
          }
          // HEAD answers carry no body; the API document, its reference page (and the redirect to
          // it), the catalogue page (and `/`, which leads there) and the metrics are not the envelope.
          // Their errors are.
          if (request.method === 'HEAD' || (res.status < 400 && NOT_ENVELOPE.test(request.path))) return
          assert.equal(res.headers['content-type'], 'application/json; charset=utf-8')
          const answer = JSON.parse(res.body.toString('utf8'))
          assert.deepEqual(Object.keys(answer).sort(), ['data', 'message', 'status'])
          assert.equal(answer.status, res.status)
          assert.equal(typeof answer.message, 'string')
          if (res.status >= 400) assert.equal(answer.data, null)
        }),
        // fast-check names the seed and the path to the failing case in its failure message.
        { numRuns: RUNS, seed, endOnFailure: process.env.FUZZ_SHRINK === undefined },
      )

      // The process is up and still serves.
      const health = await fetch(`http://127.0.0.1:${port}/books`, { headers: { authorization: token } })
      assert.equal(health.status, 200)
      await health.arrayBuffer()

      const untouched = [...seeded.keys()].filter((bookId) => !touched.has(bookId))
      assert.ok(untouched.length >= 5, `only ${untouched.length} seeded books left untouched: the check proves little`)
      for (const bookId of untouched) {
        const stored = await store.books.get(bookId)
        assert.ok(stored !== undefined, `book ${bookId} vanished`)
        // As plain objects: SQLite's rows have no prototype, and a book made by create has one.
        assert.deepEqual({ ...stored }, seeded.get(bookId), `book ${bookId} changed`)
      }
      for (const book of await listById(store, 0, 100_000)) assertStorable(book)
      assert.equal(({} as Record<string, unknown>).admin, undefined, 'Object.prototype polluted')
      t.diagnostic(`answers: ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`)
    })
  })
}

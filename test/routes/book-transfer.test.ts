import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { Readable } from 'node:stream'
import { describe, test, type TestContext } from 'node:test'
import { setTimeout } from 'node:timers/promises'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { DEFAULT_LIMITS } from '../../src/config.ts'
import { assertEnvelope, buildTestApp, dune, issueToken, listenOnLoopback, storeEngines, storeWith, withToken } from '../helpers.ts'

const emma = { title: 'Emma', author: 'Jane Austen', year: 1815 }
const garcia = { title: 'Cien años de soledad', author: 'Gabriel García Márquez', year: 1967 }

/**
 * Sends an import of 1,001 rows over a connection of its own, all but its last row at once: the
 * rest goes when `sendTheRest` is called, and `answer` is what came back when the service closed it.
 */
function importInTwo(t: TestContext, port: number, token: string) {
  const head = 'title,author,year\n' + 'Dune,Frank Herbert,1965\n'.repeat(1000)
  const tail = 'Emma,Jane Austen,1815\n'
  const socket = connect(port, '127.0.0.1')
  t.after(() => socket.destroy())
  const answer = new Promise<string>((resolve) => {
    let text = ''
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()))
    socket.on('end', () => resolve(text))
  })
  socket.write(
    `POST /books/import HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nContent-Type: text/csv\r\nConnection: close\r\n` +
      `Content-Length: ${Buffer.byteLength(head + tail)}\r\n\r\n${head}`,
  )
  return { sendTheRest: () => socket.write(tail), answer }
}

for (const engine of storeEngines) {
  describe(`import and export on ${engine.name}`, { skip: engine.skip }, () => {
    async function service(t: TestContext) {
      const app: FastifyInstance = await buildTestApp({}, { store: await engine.open() })
      t.after(() => app.close())
      const token = await issueToken(app)
      const call = (options: InjectOptions) => app.inject(withToken(token, options))
      const importBody = (payload: InjectOptions['payload'], contentType?: string, headers: Record<string, string> = {}) =>
        call({
          method: 'POST',
          url: '/books/import',
          payload,
          headers: { ...(contentType === undefined ? {} : { 'content-type': contentType }), ...headers },
        })
      const stored = async () =>
        (await call({ method: 'GET', url: '/books' })).json().data.map(({ title, author, year }: typeof dune) => ({ title, author, year }))
      return { app, call, importBody, stored }
    }

    test('a CSV import stores every book and answers their new ids in row order', async (t) => {
      const { call, importBody, stored } = await service(t)
      const csv = 'year,title,author,notes\r\n1965,Dune,Frank Herbert,first\r\n1815,Emma,Jane Austen,\r\n'
      const res = await importBody(csv, 'text/csv')
      const data = assertEnvelope(res, 201, 'Books imported successfully')
      assert.equal(data.imported, 2)
      assert.equal(data.ids.length, 2)
      assert.ok(data.ids[0] < data.ids[1])
      assert.deepEqual((await call({ method: 'GET', url: `/book/${data.ids[1]}` })).json().data, { id: data.ids[1], ...emma })
      assert.deepEqual(await stored(), [dune, emma])
    })

    test('NDJSON and JSON arrays import the same way', async (t) => {
      const { importBody, stored } = await service(t)
      const ndjson = `${JSON.stringify(dune)}\n${JSON.stringify(emma)}\n`
      assert.equal(assertEnvelope(await importBody(ndjson, 'application/x-ndjson'), 201, 'Books imported successfully').imported, 2)
      assert.equal(
        assertEnvelope(await importBody(JSON.stringify([garcia]), 'application/json'), 201, 'Books imported successfully').imported,
        1,
      )
      assert.deepEqual(await stored(), [dune, emma, garcia])
    })

    test('without a Content-Type, or with the one curl --data-binary sends, the body decides its format', async (t) => {
      const { importBody, stored } = await service(t)
      const csv = 'title,author,year\nDune,Frank Herbert,1965\n'
      assertEnvelope(await importBody(csv, 'application/x-www-form-urlencoded'), 201, 'Books imported successfully')
      assertEnvelope(await importBody(JSON.stringify([emma])), 201, 'Books imported successfully')
      assertEnvelope(
        await importBody(`${JSON.stringify(garcia)}\n`, 'application/x-www-form-urlencoded'),
        201,
        'Books imported successfully',
      )
      assert.deepEqual(await stored(), [dune, emma, garcia])
    })

    test('any other Content-Type is 415, telling which header to send', async (t) => {
      const { importBody, stored } = await service(t)
      for (const type of ['text/plain', 'application/xml', 'text/plain; charset=utf-8', ';;;']) {
        const res = await importBody('title,author,year\nDune,Frank Herbert,1965\n', type)
        assertEnvelope(
          res,
          415,
          'Unsupported Content-Type: send Content-Type: text/csv, text/tab-separated-values, application/x-ndjson or application/json',
        )
      }
      assert.deepEqual(await stored(), [])
    })

    test('one invalid row stores nothing: 400 Invalid input with the rows and messages', async (t) => {
      const { importBody, stored } = await service(t)
      const csv = 'title,author,year\nDune,Frank Herbert,1965\n   ,Nobody,2000\nEmma,Jane Austen,18.15\n'
      const data = assertEnvelope(await importBody(csv, 'text/csv'), 400, 'Invalid input')
      assert.deepEqual(data, {
        errors: [
          { row: 2, message: 'title is missing' },
          { row: 3, message: 'year must be an integer from -9999 to 9999' },
        ],
      })
      assert.deepEqual(await stored(), [])
    })

    test('a file refused by its last row stores nothing, though its earlier rows filled statements of their own', async (t) => {
      const { importBody, stored } = await service(t)
      const csv = `title,author,year\n${'Dune,Frank Herbert,1965\n'.repeat(1200)}Emma,Jane Austen,18.15\n`
      const data = assertEnvelope(await importBody(csv, 'text/csv'), 400, 'Invalid input')
      assert.deepEqual(data, { errors: [{ row: 1201, message: 'year must be an integer from -9999 to 9999' }] })
      assert.deepEqual(await stored(), [])
    })

    test("a body sent slowly holds no transaction: the import's opens once the whole body has arrived", { timeout: 30_000 }, async (t) => {
      const store = await engine.open()
      let opened: number | undefined
      const watched = storeWith(store, {
        transaction: (work) => {
          opened ??= performance.now()
          return store.transaction(work)
        },
      })
      const app = await buildTestApp({}, { store: watched })
      t.after(() => app.close())
      const [port, token] = [await listenOnLoopback(app), await issueToken(app)]
      // Only the import's transaction counts, not one that starting or signing in may have used.
      opened = undefined
      const { sendTheRest, answer } = importInTwo(t, port, token)
      await setTimeout(300)
      const lastSent = performance.now()
      sendTheRest()
      assert.match(await answer, /^HTTP\/1\.1 201 /)
      assert.ok(opened !== undefined && opened >= lastSent, `the transaction opened ${lastSent - (opened ?? NaN)} ms before the body's end`)
    })

    test('an import that takes longer to store than the idle timeout of a connection still gets its answer', async (t) => {
      const store = await engine.open()
      let slow = false
      const slowed = storeWith(store, {
        transaction: async (work) => {
          if (slow) await setTimeout(1500)
          return store.transaction(work)
        },
      })
      const limits = { ...DEFAULT_LIMITS, requestTimeoutMs: 500, headersTimeoutMs: 400 }
      const app = await buildTestApp({ limits }, { store: slowed })
      t.after(() => app.close())
      const [port, token] = [await listenOnLoopback(app), await issueToken(app)]
      slow = true
      const answer = await fetch(`http://127.0.0.1:${port}/books/import`, {
        method: 'POST',
        headers: { authorization: token, 'content-type': 'text/csv' },
        body: 'title,author,year\nDune,Frank Herbert,1965\n',
      })
      assert.equal(answer.status, 201)
      assert.equal(((await answer.json()) as { data: { imported: number } }).data.imported, 1)
    })

    test('each kind of bad body is 400 naming the problem, and stores nothing', async (t) => {
      const { importBody, stored } = await service(t)
      const cases: [string, InjectOptions['payload'], string, RegExp][] = [
        ['unbalanced quotes', 'title,author,year\n"Dune,Frank Herbert,1965\n', 'text/csv', /never closed/],
        ['wrong column count', 'title,author,year\nDune,1965\n', 'text/csv', /has 2 fields where the header has 3/],
        ['header without year', 'title,author\nDune,Frank Herbert\n', 'text/csv', /no "year" column/],
        [
          'invalid UTF-8',
          Buffer.from([...Buffer.from('title,author,year\nD'), 0xff, ...Buffer.from(',A,1\n')]),
          'text/csv',
          /not valid UTF-8/,
        ],
        ['broken NDJSON line', `${JSON.stringify(dune)}\n{"title":\n`, 'application/x-ndjson', /not valid JSON/],
        ['JSON that is not an array', JSON.stringify(dune), 'application/json', /not a JSON array/],
        ['empty body', '', 'text/csv', /empty/],
        ['empty body, no type', '', 'application/x-www-form-urlencoded', /empty/],
        ['header row only', 'title,author,year\n', 'text/csv', /no books/],
      ]
      for (const [name, payload, type, message] of cases) {
        const data = assertEnvelope(await importBody(payload, type), 400, 'Invalid input')
        assert.equal(data.errors.length, 1, name)
        assert.match(data.errors[0].message, message, name)
      }
      assert.deepEqual(await stored(), [])
    })

    test('no token: 401 before the body is read', async (t) => {
      const { app } = await service(t)
      const res = await app.inject({ method: 'POST', url: '/books/import', payload: 'x', headers: { 'content-type': 'text/plain' } })
      assertEnvelope(res, 401, 'Authorization token required')
    })

    test('over 100,000 rows is 413 Payload too large, and stores nothing', async (t) => {
      const { importBody, stored } = await service(t)
      const csv = `title,author,year\n${'T,A,1\n'.repeat(100_001)}`
      assertEnvelope(await importBody(csv, 'text/csv'), 413, 'Payload too large')
      assert.deepEqual(await stored(), [])
    })

    test('over 32 MiB is 413 Payload too large, whether announced or found while streaming', async (t) => {
      const { importBody, stored } = await service(t)
      const big = Buffer.alloc(32 * 1024 * 1024 + 1, 'a')
      assertEnvelope(await importBody(big, 'text/csv'), 413, 'Payload too large')
      // No Content-Length: the limit is found while the body streams in.
      // White space inside a JSON array is cheap to read, so only the byte limit can stop it.
      const spaces = Buffer.alloc(1024 * 1024, ' ')
      const unannounced = Readable.from(
        (function* () {
          yield Buffer.from('[')
          for (let i = 0; i < 33; i++) yield spaces
        })(),
      )
      assertEnvelope(await importBody(unannounced, 'application/json', { 'transfer-encoding': 'chunked' }), 413, 'Payload too large')
      assert.deepEqual(await stored(), [])
    })

    test('other requests are answered while an import streams in', { timeout: 30_000 }, async (t) => {
      const { app, call } = await service(t)
      const { sendTheRest, answer } = importInTwo(t, await listenOnLoopback(app), await issueToken(app))
      // The import has half its body and waits for the rest: a read and a write go through meanwhile.
      const read = await call({ method: 'GET', url: '/books' })
      assert.equal(read.statusCode, 200)
      assert.equal((await call({ method: 'POST', url: '/book', payload: emma })).statusCode, 201)
      sendTheRest()
      assert.match(await answer, /^HTTP\/1\.1 201 /)
    })

    test('100,000 rows import in one request, and a metric counts them', async (t) => {
      const { app, importBody } = await service(t)
      const csv = `title,author,year\n${Array.from({ length: 100_000 }, (_, i) => `Title ${i},Author ${i},${i % 9999}`).join('\n')}\n`
      const data = assertEnvelope(await importBody(csv, 'text/csv'), 201, 'Books imported successfully')
      assert.equal(data.imported, 100_000)
      assert.deepEqual(
        data.ids,
        [...data.ids].sort((a: number, b: number) => a - b),
      )
      const metrics = await app.inject({ method: 'GET', url: '/metrics' })
      assert.match(metrics.body, /^books_imported_total 100000$/m)
    })

    test('GET /books/export writes every book as a CSV file, in id order', async (t) => {
      const { call, importBody } = await service(t)
      const { ids } = assertEnvelope(
        await importBody(JSON.stringify([dune, { ...emma, title: '=cmd|calc' }, garcia]), 'application/json'),
        201,
        'Books imported successfully',
      )
      const res = await call({ method: 'GET', url: '/books/export?format=csv' })
      assert.equal(res.statusCode, 200)
      assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8')
      assert.equal(res.headers['content-disposition'], 'attachment; filename="books.csv"')
      assert.equal(
        res.rawPayload.toString('utf8'),
        `\uFEFFid,title,author,year\r\n${ids[0]},Dune,Frank Herbert,1965\r\n${ids[1]},'=cmd|calc,Jane Austen,1815\r\n${ids[2]},Cien años de soledad,Gabriel García Márquez,1967\r\n`,
      )
    })

    test('GET /books/export?format=ndjson writes one book per line', async (t) => {
      const { call, importBody } = await service(t)
      const { ids } = assertEnvelope(await importBody(JSON.stringify([dune, emma]), 'application/json'), 201, 'Books imported successfully')
      const res = await call({ method: 'GET', url: '/books/export?format=ndjson' })
      assert.equal(res.statusCode, 200)
      assert.equal(res.headers['content-type'], 'application/x-ndjson; charset=utf-8')
      assert.equal(res.headers['content-disposition'], 'attachment; filename="books.ndjson"')
      assert.deepEqual(
        res.body
          .trimEnd()
          .split('\n')
          .map((line) => JSON.parse(line)),
        [
          { id: ids[0], ...dune },
          { id: ids[1], ...emma },
        ],
      )
    })

    test('GET /books/export takes the filters, search and sort of GET /books, and counts with count=true', async (t) => {
      const { call, importBody } = await service(t)
      assertEnvelope(await importBody(JSON.stringify([dune, emma, garcia]), 'application/json'), 201, 'Books imported successfully')
      const titles = async (params: string) => {
        const res = await call({ method: 'GET', url: `/books/export?format=ndjson&${params}` })
        assert.equal(res.statusCode, 200, params)
        return {
          titles: res.body
            .trimEnd()
            .split('\n')
            .filter((line) => line !== '')
            .map((line) => JSON.parse(line).title as string),
          total: res.headers['x-total-count'],
        }
      }
      assert.deepEqual(await titles('author=garcia'), { titles: ['Cien años de soledad'], total: undefined })
      assert.deepEqual(await titles('year_from=1900&sort=-year'), { titles: ['Cien años de soledad', 'Dune'], total: undefined })
      assert.deepEqual(await titles('q=emm&count=true'), { titles: [emma.title], total: '1' })
      assert.deepEqual(await titles('sort=title'), { titles: [garcia.title, dune.title, emma.title].sort(), total: undefined })
    })

    test('an export refuses the parameters of paging and any invalid filter with 400 Invalid input', async (t) => {
      const { call } = await service(t)
      for (const params of ['limit=10', 'cursor=abc', 'year_from=2000&year_to=1999', 'sort=pages', 'q=harry&after=3']) {
        assertEnvelope(await call({ method: 'GET', url: `/books/export?format=csv&${params}` }), 400, 'Invalid input')
      }
    })

    test('an unknown export format is 400 Invalid input', async (t) => {
      const { call } = await service(t)
      assertEnvelope(await call({ method: 'GET', url: '/books/export?format=xlsx' }), 400, 'Invalid input')
    })

    test('export, then import into an empty service, gives the same books (both formats)', async (t) => {
      const source = await service(t)
      const books = Array.from({ length: 2500 }, (_, i) => ({
        title: ['=SUM(A1)', '-dash', "'quoted", 'Line\r\nbreak, "quotes"', 'Ünïcödé 📚'][i % 5] + ` ${i}`,
        author: ['@mention', '\ttab', '+plus', 'García'][i % 4]!,
        year: (i % 19999) - 9999,
      }))
      assertEnvelope(await source.importBody(JSON.stringify(books), 'application/json'), 201, 'Books imported successfully')
      for (const format of ['csv', 'ndjson']) {
        const file = await source.call({ method: 'GET', url: `/books/export?format=${format}` })
        const target = await service(t)
        assertEnvelope(await target.importBody(file.rawPayload, String(file.headers['content-type'])), 201, 'Books imported successfully')
        assert.deepEqual(await target.stored(), books, format)
      }
    })
  })
}

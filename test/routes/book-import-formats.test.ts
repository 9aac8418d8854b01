import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { describe, test, type TestContext } from 'node:test'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { fixtureBytes, KNOWN_FORMAT_FIXTURES, utf16, windows1252 } from '../formats/fixtures/known-formats.ts'
import { assertEnvelope, buildTestApp, issueToken, storeEngines, withToken } from '../helpers.ts'

const FIXTURES = new URL('../formats/fixtures/', import.meta.url)

/** A `curl` command of docs/api.md that posts a file to the import, and the answer printed under it. */
interface DocumentedImport {
  command: string
  url: string
  contentType: string
  file: string
  answer: { status: number; message: string; data: Record<string, unknown> }
}

/** Every import command of docs/api.md whose file is one of the fixtures, as a reader would paste it. */
function documentedImports(): DocumentedImport[] {
  const docs = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8')
  const blocks = docs.split('```').filter((_, at) => at % 2 === 1)
  return blocks.flatMap((block) => {
    const lines = block.split('\n')
    return lines.flatMap((command, at) => {
      const file = /--data-binary @(\S+)/.exec(command)?.[1]
      if (!command.startsWith('$ curl') || !command.includes('/books/import') || file === undefined) return []
      if (!existsSync(new URL(file, FIXTURES))) return []
      const url = new URL(/"?(http:\/\/localhost:8080\/books\/import[^"\s]*)"?/.exec(command)![1]!)
      const answer = lines
        .slice(at + 1)
        .join('\n')
        .split(/\n\n|\n\$/)[0]!
      return [
        {
          command,
          url: `${url.pathname}${url.search}`,
          contentType: /-H 'Content-Type: ([^']+)'/.exec(command)![1]!,
          file,
          answer: JSON.parse(answer),
        },
      ]
    })
  })
}

for (const engine of storeEngines) {
  describe(`importing other catalogues' files on ${engine.name}`, { skip: engine.skip }, () => {
    async function service(t: TestContext) {
      const app: FastifyInstance = await buildTestApp({}, { store: await engine.open() })
      t.after(() => app.close())
      const token = await issueToken(app)
      const call = (options: InjectOptions) => app.inject(withToken(token, options))
      const importBody = (payload: InjectOptions['payload'], contentType: string, query = '') =>
        call({ method: 'POST', url: `/books/import${query}`, payload, headers: { 'content-type': contentType } })
      const stored = async () =>
        (await call({ method: 'GET', url: '/books' }))
          .json()
          .data.map(({ title, author, year }: Record<string, unknown>) => ({ title, author, year }))
      return { call, importBody, stored }
    }

    test('every import command of docs/api.md answers as shown, and stores the books of its file', async (t) => {
      const commands = documentedImports()
      // Each known format has its command.
      assert.deepEqual(
        KNOWN_FORMAT_FIXTURES.filter(({ file }) => !commands.some((command) => command.file === file)).map(({ file }) => file),
        [],
      )
      for (const { command, url, contentType, file, answer } of commands) {
        const { importBody, stored } = await service(t)
        const res = await importBody(fixtureBytes(file), contentType, url.slice('/books/import'.length))
        const body = res.json()
        // Ids are the store's to give: the same number of them, ascending.
        if (Array.isArray(answer.data.ids)) {
          assert.equal(body.data.ids.length, answer.data.ids.length, command)
          assert.deepEqual(
            body.data.ids,
            [...body.data.ids].sort((a: number, b: number) => a - b),
          )
          answer.data.ids = body.data.ids
        }
        assert.deepEqual(body, answer, command)
        const fixture = KNOWN_FORMAT_FIXTURES.find((known) => known.file === file)!
        assert.deepEqual(await stored(), answer.status === 201 ? fixture.books : [], command)
      }
    })

    test('a dry run answers what the import would store, and stores nothing', async (t) => {
      const { importBody, stored } = await service(t)
      const csv = 'title,author,year\nDune,Frank Herbert,1965\n,Nobody,2000\nEmma,Jane Austen,\n'
      for (const query of ['?dry_run=true', '?dry_run=true&invalid=skip']) {
        assertEnvelope(await importBody(csv, 'text/csv', query), 200, 'Import checked successfully', {
          importable: 1,
          errors: [
            { row: 2, message: 'title is missing' },
            { row: 3, message: 'year is missing' },
          ],
          duplicates: [],
          preview: [{ title: 'Dune', author: 'Frank Herbert', year: 1965 }],
        })
      }
      const many = `title,author,year\n${Array.from({ length: 30 }, (_, n) => `Book ${n},A,${n}`).join('\n')}\n`
      const checked = assertEnvelope(await importBody(many, 'text/csv', '?dry_run=true'), 200, 'Import checked successfully')
      assert.equal(checked.importable, 30)
      assert.deepEqual(
        checked.preview.map((book: { title: string }) => book.title),
        Array.from({ length: 20 }, (_, n) => `Book ${n}`),
      )
      assert.deepEqual((await importBody(many, 'text/csv', '?dry_run=false')).json().data.imported, 30)
      assert.equal((await stored()).length, 30)
    })

    test('a dry run of a body that cannot be read as a whole is 400, as the import is', async (t) => {
      const { importBody } = await service(t)
      for (const [payload, message] of [
        ['', /empty/],
        ['Book,Writer\nDune,Frank Herbert\n', /^The header row names no "title", "author" or "year" column\. It has "Book", "Writer"\./],
      ] as const) {
        const data = assertEnvelope(await importBody(payload, 'text/csv', '?dry_run=true'), 400, 'Invalid input')
        assert.equal(data.errors.length, 1)
        assert.match(data.errors[0].message, message)
        assert.equal(data.errors[0].row, undefined)
      }
    })

    test('invalid=skip stores the valid rows and lists the others: an open quote, more cells than the header, NUL', async (t) => {
      const { importBody, stored } = await service(t)
      const csv =
        'title,author,year\nDune,Frank Herbert,1965\nToo,Many,1,x\nNUL\u0000,A,1\nEmma,Jane Austen,1815\n"Open,Nobody,1\nLost,Row,2\n'
      // Without it, all or nothing.
      assertEnvelope(await importBody(csv, 'text/csv'), 400, 'Invalid input')
      assert.deepEqual(await stored(), [])
      const data = assertEnvelope(await importBody(csv, 'text/csv', '?invalid=skip'), 201, 'Books imported successfully')
      assert.equal(data.imported, 2)
      assert.deepEqual(data.errors, [
        { row: 2, message: 'Line 3 has 4 fields where the header has 3' },
        { row: 3, message: 'title must be text of 1 to 500 characters, not blank, with no NUL character' },
        { row: 5, message: 'A quoted field that starts in this row is never closed: nothing after it is read' },
      ])
      assert.deepEqual(await stored(), [
        { title: 'Dune', author: 'Frank Herbert', year: 1965 },
        { title: 'Emma', author: 'Jane Austen', year: 1815 },
      ])
    })

    test('invalid=skip with no valid row stores nothing and says why', async (t) => {
      const { importBody, stored } = await service(t)
      const data = assertEnvelope(
        await importBody('title,author,year\n,a,1\n', 'text/csv', '?invalid=skip'),
        201,
        'Books imported successfully',
      )
      assert.deepEqual(data, { imported: 0, ids: [], errors: [{ row: 1, message: 'title is missing' }] })
      assert.deepEqual(await stored(), [])
    })

    test('columns= reads the headers it names', async (t) => {
      const { importBody, stored } = await service(t)
      const csv = 'Book;Writer;Published\nDune;Frank Herbert;1965-08-01\n'
      const query = `?columns=${encodeURIComponent('title:book,author:Writer,year:Published')}`
      assertEnvelope(await importBody(csv, 'text/csv', query), 201, 'Books imported successfully')
      assert.deepEqual(await stored(), [{ title: 'Dune', author: 'Frank Herbert', year: 1965 }])
    })

    test('an invalid query parameter, or a columns= header the file lacks, is 400 Invalid input saying which', async (t) => {
      const { importBody, stored } = await service(t)
      const csv = 'title,author,year\nDune,Frank Herbert,1965\n'
      for (const [query, message] of [
        ['?dry_run=yes', 'dry_run= takes true or false'],
        ['?invalid=keep', 'invalid= takes skip'],
        ['?invalid=skip&invalid=skip', 'invalid= is given more than once'],
        ['?columns=title', 'columns= takes title:<header>,author:<header>,year:<header>, each at most once'],
        ['?columns=isbn:ISBN', 'columns= takes title:<header>,author:<header>,year:<header>, each at most once'],
        ['?columns=title:', 'columns= takes title:<header>,author:<header>,year:<header>, each at most once'],
        [
          '?columns=year:year,year:title',
          'columns= maps year twice: columns= takes title:<header>,author:<header>,year:<header>, each at most once',
        ],
        [
          '?columns=year:Published',
          'columns= names "Published" for the year, but the header row has no such column. It has "title", "author", "year".',
        ],
      ]) {
        assertEnvelope(await importBody(csv, 'text/csv', query), 400, 'Invalid input', { errors: [{ message }] })
      }
      assert.deepEqual(await stored(), [])
    })

    test('tab-separated values, and semicolons found from the header row', async (t) => {
      const { importBody, stored } = await service(t)
      assertEnvelope(
        await importBody('Title\tAuthor\tYear\nThe "Best" Book\tA\t2001\n', 'text/tab-separated-values'),
        201,
        'Books imported successfully',
      )
      assertEnvelope(await importBody('title;author;year\nDune;Herbert, Frank;1965\n', 'text/csv'), 201, 'Books imported successfully')
      assert.deepEqual(await stored(), [
        { title: 'The "Best" Book', author: 'A', year: 2001 },
        { title: 'Dune', author: 'Herbert, Frank', year: 1965 },
      ])
    })

    test('UTF-16 with a byte-order mark and Windows-1252, declared by charset=', async (t) => {
      const { importBody, stored } = await service(t)
      const tsv = fixtureBytes('librarything_export.tsv').toString('utf8')
      const expected = KNOWN_FORMAT_FIXTURES.find(({ file }) => file === 'librarything_export.tsv')!.books
      for (const [payload, type] of [
        [utf16(tsv, 'le'), 'text/tab-separated-values; charset=utf-16'],
        [utf16(tsv, 'be'), 'text/tab-separated-values; charset=UTF-16'],
        [utf16(tsv, 'le'), 'text/tab-separated-values'],
        [windows1252(tsv), 'text/tab-separated-values; charset=windows-1252'],
        [windows1252(tsv), 'text/tab-separated-values; charset="ISO-8859-1"'],
      ] as const) {
        assert.equal((await importBody(payload, type)).statusCode, 201, type)
        assert.deepEqual((await stored()).slice(-expected.length), expected, type)
      }
      const data = assertEnvelope(await importBody(windows1252(tsv), 'text/tab-separated-values'), 400, 'Invalid input')
      assert.match(data.errors[0].message, /^The body is not valid UTF-8 text \(line 3\)$/)
      const unmarked = assertEnvelope(await importBody(Buffer.from(tsv, 'utf16le'), 'text/csv; charset=utf-16'), 400, 'Invalid input')
      assert.deepEqual(unmarked.errors, [{ message: 'UTF-16 text must start with a byte-order mark, which tells its byte order' }])
    })

    test('any other charset is 415 naming it, and stores nothing', async (t) => {
      const { importBody, stored } = await service(t)
      const csv = 'title,author,year\nDune,Frank Herbert,1965\n'
      for (const [type, charset] of [
        ['text/csv; charset=iso-8859-5', 'iso-8859-5'],
        ['application/json; charset=Shift_JIS', 'shift_jis'],
        ['text/tab-separated-values; charset="utf-32"', 'utf-32'],
        [`text/csv; charset=${'x'.repeat(100)}`, `${'x'.repeat(40)}…`],
      ] as const) {
        assertEnvelope(await importBody(csv, type), 415, `Unsupported charset: ${charset}`)
      }
      assert.deepEqual(await stored(), [])
    })
  })
}

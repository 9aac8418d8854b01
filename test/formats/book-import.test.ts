import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { BookImport, IMPORT_LIMITS, type ImportFormat, type ImportLimits } from '../../src/formats/book-import.ts'
import { ImportTooLargeError } from '../../src/formats/import-errors.ts'
import type { NewBook } from '../../src/books/book.ts'

/** The body cut into chunks of `chunkSize` bytes, so that rows, quotes and characters straddle chunks. */
async function* chunksOf(body: Buffer, chunkSize: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < body.length; at += chunkSize) yield body.subarray(at, at + chunkSize)
}

async function read(body: string | Buffer, format: ImportFormat, limits: Partial<ImportLimits> = {}, chunkSize = 7) {
  const reader = new BookImport(chunksOf(Buffer.from(body), chunkSize), format, { ...IMPORT_LIMITS, ...limits })
  const books: NewBook[] = []
  for await (const batch of reader.batches()) books.push(...batch)
  // Batches handed out before an error are for a transaction that the caller then rolls back.
  return { books: reader.errors.length === 0 ? books : [], errors: reader.errors }
}

const dune = { title: 'Dune', author: 'Frank Herbert', year: 1965 }
const garcia = { title: 'Cien años de soledad', author: 'Gabriel García Márquez', year: 1967 }

describe('reading an import', () => {
  describe('JSON array', () => {
    test('reads every book in order, members other than the three ignored', async () => {
      const { books, errors } = await read(JSON.stringify([{ ...dune, id: 9, extra: true }, garcia]), 'json')
      assert.deepEqual(errors, [])
      assert.deepEqual(books, [dune, garcia])
    })

    test('a JSON value that is not an array is refused whole', async () => {
      for (const body of ['{"title":"Dune"}', '"text"', '42', 'null']) {
        const { books, errors } = await read(body, 'json')
        assert.deepEqual(books, [])
        assert.deepEqual(errors, [{ message: 'The body is not a JSON array of books' }], body)
      }
    })

    test('malformed JSON names the book it breaks in', async () => {
      const { books, errors } = await read(`[${JSON.stringify(dune)}, {"title": "x",]`, 'json')
      assert.deepEqual(books, [])
      assert.equal(errors.length, 1)
      assert.equal(errors[0]!.row, 2)
    })

    test('an array that is never closed is refused', async () => {
      const { books, errors } = await read(`[${JSON.stringify(dune)}`, 'json')
      assert.deepEqual(books, [])
      assert.deepEqual(errors, [{ row: 2, message: 'The JSON array is not closed' }])
    })

    test('an empty body, or an empty array, holds no books', async () => {
      assert.deepEqual((await read('', 'json')).errors, [{ message: 'The body is empty' }])
      assert.deepEqual((await read('  \n', 'json')).errors, [{ message: 'The body is empty' }])
      assert.deepEqual((await read('[]', 'json')).errors, [{ message: 'The body holds no books' }])
    })

    test('an element that is not an object is an invalid row', async () => {
      const { errors } = await read(JSON.stringify([dune, 'Dune', null, [1]]), 'json')
      assert.deepEqual(
        errors.map((e) => e.row),
        [2, 3, 4],
      )
    })

    test('a __proto__ member neither pollutes nor supplies a member', async () => {
      const { books, errors } = await read('[{"__proto__": "Dune", "author": "Frank Herbert", "year": 1965}]', 'json')
      assert.deepEqual(books, [])
      assert.deepEqual(errors, [{ row: 1, message: 'title is missing' }])
      assert.equal(({} as Record<string, unknown>).title, undefined)
    })

    test('a member that holds a list or an object stops the import at that book', async () => {
      for (const member of ['{"title": "Dune"}', '["Dune"]', '[[[]]]']) {
        const { books, errors } = await read(`[${JSON.stringify(dune)}, {"title": ${member}, "author": "x", "year": 1}]`, 'json')
        assert.deepEqual(books, [])
        assert.deepEqual(errors, [
          { row: 2, message: 'This book nests a list or an object in a member: each member must be text or a number' },
        ])
      }
    })

    test('brackets nested millions deep are refused at the third, having read one chunk', async () => {
      let chunks = 0
      async function* brackets(): AsyncGenerator<Uint8Array> {
        const chunk = Buffer.alloc(64 * 1024, '[')
        // 32 MiB of them, as the body limit allows, if the reader kept on.
        for (; chunks < 512; chunks++) yield chunk
      }
      const reader = new BookImport(brackets(), 'json')
      for await (const _ of reader.batches());
      assert.deepEqual(reader.errors, [
        { row: 1, message: 'This book nests a list or an object in a member: each member must be text or a number' },
      ])
      assert.ok(chunks <= 2, `read ${chunks} chunks`)
    })
  })

  describe('NDJSON', () => {
    test('one book per line; blank lines and CRLF line ends are fine', async () => {
      const body = `${JSON.stringify(dune)}\r\n\n${JSON.stringify(garcia)}`
      const { books, errors } = await read(body, 'ndjson')
      assert.deepEqual(errors, [])
      assert.deepEqual(books, [dune, garcia])
    })

    test('a broken line is an error of its row, and the rows after it are still checked', async () => {
      const body = [JSON.stringify(dune), '{"title": "Dune", "author"', JSON.stringify(garcia), '{"title": ""}'].join('\n')
      const { books, errors } = await read(body, 'ndjson')
      assert.deepEqual(books, [])
      assert.deepEqual(
        errors.map((e) => e.row),
        [2, 4],
      )
      assert.equal(errors[0]!.message, 'This line is not valid JSON')
    })

    test('an empty body holds no books', async () => {
      assert.deepEqual((await read('', 'ndjson')).errors, [{ message: 'The body holds no books' }])
    })
  })

  describe('CSV', () => {
    test('header columns in any order, other columns ignored, RFC 4180 quoting, BOM skipped', async () => {
      const body =
        '\uFEFFyear,notes,Title,author\r\n1965,"first, of six",Dune,Frank Herbert\r\n1967,,"Cien años de soledad","Gabriel García Márquez"\r\n'
      const { books, errors } = await read(body, 'csv', {}, 3)
      assert.deepEqual(errors, [])
      assert.deepEqual(books, [dune, garcia])
    })

    test('quotes, commas and line breaks inside quoted fields', async () => {
      const body = 'title,author,year\n"He said ""hi"", then\nleft","A, B",2001\n'
      const { books, errors } = await read(body, 'csv')
      assert.deepEqual(errors, [])
      assert.deepEqual(books, [{ title: 'He said "hi", then\nleft', author: 'A, B', year: 2001 }])
    })

    test('a cell the export neutralised reads back as stored', async () => {
      const body = `title,author,year\n'=SUM(A1),'-dash,-44\n''+two,'@at,1\n'plain,x,2\n`
      const { books, errors } = await read(body, 'csv')
      assert.deepEqual(errors, [])
      assert.deepEqual(books, [
        { title: '=SUM(A1)', author: '-dash', year: -44 },
        { title: "'+two", author: '@at', year: 1 },
        { title: "'plain", author: 'x', year: 2 },
      ])
    })

    test('unbalanced quotes stop the import, naming the row', async () => {
      const body = 'title,author,year\nDune,Frank Herbert,1965\n"Dune,Frank Herbert,1965\nEmma,Jane Austen,1815\n'
      const { books, errors } = await read(body, 'csv')
      assert.deepEqual(books, [])
      assert.deepEqual(errors, [{ row: 2, message: 'A quoted field is never closed: the quotes are unbalanced' }])
    })

    test('a quote inside an unquoted field is refused', async () => {
      const { books, errors } = await read('title,author,year\nDu"ne,Frank Herbert,1965\n', 'csv')
      assert.deepEqual(books, [])
      assert.equal(errors[0]!.row, 1)
      assert.match(errors[0]!.message, /quote is misplaced \(line 2\)/)
    })

    test('a row with the wrong number of fields names its row and line', async () => {
      const body = 'title,author,year\nDune,Frank Herbert,1965\nEmma,1815\nA,B,1,extra\n'
      const { books, errors } = await read(body, 'csv')
      assert.deepEqual(books, [])
      assert.deepEqual(errors, [
        { row: 2, message: 'Line 3 has 2 fields where the header has 3' },
        { row: 3, message: 'Line 4 has 4 fields where the header has 3' },
      ])
    })

    test('a header without title, author or year names what is missing', async () => {
      for (const member of ['title', 'author', 'year']) {
        const header = ['title', 'author', 'year'].filter((name) => name !== member).join(',')
        const { books, errors } = await read(`${header}\na,b\n`, 'csv')
        assert.deepEqual(books, [])
        assert.equal(errors.length, 1)
        assert.match(errors[0]!.message, new RegExp(`no "${member}" column`))
        assert.equal(errors[0]!.row, undefined)
      }
    })

    test('a header row only holds no books', async () => {
      assert.deepEqual((await read('title,author,year\r\n', 'csv')).errors, [{ message: 'The body holds no books' }])
    })

    test('an empty body is refused', async () => {
      const { errors } = await read('', 'csv')
      assert.equal(errors.length, 1)
      assert.match(errors[0]!.message, /The body is empty/)
    })

    test('a year that is not an integer is an invalid row', async () => {
      const { errors } = await read('title,author,year\na,b,1965.5\na,b,\na,b,nineteen\na,b,10000\n', 'csv')
      assert.deepEqual(
        errors.map((e) => [e.row, e.message]),
        [1, 2, 3, 4].map((row) => [row, 'year must be an integer from -9999 to 9999']),
      )
    })
  })

  test('invalid UTF-8 is refused whatever the format, naming its line', async () => {
    const bad = Buffer.from([0xc3, 0x28])
    for (const [format, head] of [
      ['csv', 'title,author,year\nDune,Frank Herbert,1965\n'],
      ['ndjson', `${JSON.stringify(dune)}\n${JSON.stringify(dune)}\n`],
      ['json', `[${JSON.stringify(dune)},\n${JSON.stringify(dune)},\n`],
    ] as const) {
      const body = Buffer.concat([Buffer.from(head), Buffer.from('"'), bad, Buffer.from('"\n')])
      const { books, errors } = await read(body, format, {}, 1000)
      assert.deepEqual(books, [], format)
      assert.equal(errors.length, 1, format)
      assert.match(errors[0]!.message, /^The body is not valid UTF-8 text \(line 3\)$/, format)
    }
  })

  test('a character split between chunks is read whole', async () => {
    const { books } = await read(JSON.stringify([garcia]), 'json', {}, 1)
    assert.deepEqual(books, [garcia])
  })

  test('each row follows the rules of POST /book', async () => {
    const rows = [
      dune,
      { ...dune, title: '   ' },
      { ...dune, author: 'x'.repeat(501) },
      { ...dune, year: 1965.5 },
      { ...dune, year: '1965' },
      { ...dune, title: 'a\u0000b' },
      { title: 'Dune', year: 1965 },
      { ...dune, title: '\uD800' },
    ]
    const { books, errors } = await read(JSON.stringify(rows), 'json')
    assert.deepEqual(books, [])
    assert.deepEqual(errors, [
      { row: 2, message: 'title must be text of 1 to 500 characters, not blank, with no NUL character' },
      { row: 3, message: 'author must be text of 1 to 500 characters, not blank, with no NUL character' },
      { row: 4, message: 'year must be an integer from -9999 to 9999' },
      { row: 5, message: 'year must be an integer from -9999 to 9999' },
      { row: 6, message: 'title must be text of 1 to 500 characters, not blank, with no NUL character' },
      { row: 7, message: 'author is missing' },
      { row: 8, message: 'title must be text of 1 to 500 characters, not blank, with no NUL character' },
    ])
  })

  test('at most the first maxErrors errors are reported', async () => {
    const rows = Array.from({ length: 250 }, () => ({ ...dune, year: 'x' }))
    const { errors } = await read(JSON.stringify(rows), 'json', {}, 4096)
    assert.equal(errors.length, 100)
    assert.equal(errors[99]!.row, 100)
  })

  test('batches hold at most batchSize books, in row order', async () => {
    const rows = Array.from({ length: 25 }, (_, i) => ({ ...dune, year: i }))
    const reader = new BookImport(chunksOf(Buffer.from(JSON.stringify(rows)), 64), 'json', { ...IMPORT_LIMITS, batchSize: 10 })
    const sizes: number[] = []
    const years: number[] = []
    for await (const batch of reader.batches()) {
      sizes.push(batch.length)
      years.push(...batch.map((book) => book.year))
    }
    assert.ok(sizes.every((size) => size >= 1 && size <= 16))
    assert.deepEqual(
      years,
      rows.map((row) => row.year),
    )
  })

  test('more rows than maxRows fail as too large', async () => {
    const body = ['title,author,year', ...Array.from({ length: 4 }, () => 'a,b,1')].join('\n')
    await assert.rejects(read(body, 'csv', { maxRows: 3 }), ImportTooLargeError)
    assert.equal((await read(body, 'csv', { maxRows: 4 })).books.length, 4)
  })

  test('a CSV row or NDJSON line over 1 MiB stops the import', async () => {
    const long = 'x'.repeat(2 * 1024 * 1024)
    const csv = await read(`title,author,year\n${long}`, 'csv', {}, 64 * 1024)
    assert.deepEqual(csv.errors, [{ row: 1, message: 'A row is longer than 1048576 characters' }])
    const ndjson = await read(`{}\n${long}`, 'ndjson', {}, 64 * 1024)
    assert.equal(ndjson.errors.at(-1)!.message, 'A line is longer than 1048576 characters')
  })

  test('more bytes than maxBytes fail as too large', async () => {
    const body = JSON.stringify([dune])
    await assert.rejects(read(body, 'json', { maxBytes: body.length - 1 }), ImportTooLargeError)
    assert.equal((await read(body, 'json', { maxBytes: body.length })).books.length, 1)
  })
})

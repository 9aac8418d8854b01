import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { BookImport, IMPORT_LIMITS, type ImportFormat, type ImportLimits, type ReadOptions } from '../../src/formats/book-import.ts'
import { ImportTooLargeError } from '../../src/formats/import-errors.ts'
import type { NewBook } from '../../src/books/book.ts'
import { fixtureBytes, KNOWN_FORMAT_FIXTURES, utf16, windows1252 } from './fixtures/known-formats.ts'

/** The body cut into chunks of `chunkSize` bytes, so that rows, quotes and characters straddle chunks. */
async function* chunksOf(body: Buffer, chunkSize: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < body.length; at += chunkSize) yield body.subarray(at, at + chunkSize)
}

async function read(body: string | Buffer, format: ImportFormat | ReadOptions, limits: Partial<ImportLimits> = {}, chunkSize = 7) {
  const reader = new BookImport(chunksOf(Buffer.from(body), chunkSize), format, { ...IMPORT_LIMITS, ...limits })
  const books: NewBook[] = []
  const rows: number[] = []
  for await (const batch of reader.checkedBatches()) {
    books.push(...batch.books)
    rows.push(...batch.rows)
  }
  const keepValid = typeof format === 'object' && format.keepValid === true
  // All or nothing: batches handed out before an error are for a transaction that the caller then rolls back.
  const stored = keepValid || reader.errors.length === 0
  return {
    books: stored ? books : [],
    rows: stored ? rows : [],
    errors: reader.errors,
    importable: reader.importable,
    preview: reader.preview,
    unreadable: reader.unreadable,
  }
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
      assert.deepEqual(errors, [{ row: 2, message: 'A quoted field that starts in this row is never closed: nothing after it is read' }])
    })

    test('a quote inside an unquoted field is taken as it is; one after a closing quote stops the reading', async () => {
      const taken = await read('title,author,year\nDu"ne,Frank "F." Herbert,1965\n', 'csv')
      assert.deepEqual(taken.errors, [])
      assert.deepEqual(taken.books, [{ title: 'Du"ne', author: 'Frank "F." Herbert', year: 1965 }])
      // Long enough that the rest of the body, read as the misplaced quote's field, would be a row too long.
      const body = `title,author,year\nDune,Frank Herbert,1965\n"Du"ne,Frank Herbert,1965\n${'Emma,Jane Austen,1815\n'.repeat(60_000)}`
      for (const chunkSize of [7, 64 * 1024]) {
        const { books, errors } = await read(body, { format: 'csv', keepValid: true }, {}, chunkSize)
        assert.deepEqual(books, [dune])
        assert.equal(errors.length, 1)
        assert.equal(errors[0]!.row, 2)
        assert.match(errors[0]!.message, /quote is misplaced \(line 3\)/)
      }
    })

    test('spaces between a closing quote and what ends its field are left out, wherever the body is cut', async () => {
      const body = 'title,author,year\r\n"Dune"  ,"Frank Herbert" ,"1965" \r\n'
      for (let chunkSize = 1; chunkSize <= body.length; chunkSize++) {
        const { books, errors } = await read(body, 'csv', {}, chunkSize)
        assert.deepEqual(errors, [], `chunks of ${chunkSize}`)
        assert.deepEqual(books, [dune], `chunks of ${chunkSize}`)
      }
    })

    test('rows end as the header row does, with \\n, \\r\\n or \\r; lines are counted as an editor counts them', async () => {
      for (const newline of ['\n', '\r\n', '\r']) {
        const body = ['title,author,year', 'Dune,Frank Herbert,1965', '', `"Two${newline}lines",A,"2000"`, 'Emma,1815', ''].join(newline)
        const { books, errors } = await read(body, { format: 'csv', keepValid: true })
        assert.deepEqual(books, [dune, { title: `Two${newline}lines`, author: 'A', year: 2000 }], JSON.stringify(newline))
        assert.deepEqual(errors, [{ row: 3, message: 'Line 6 has 2 fields where the header has 3' }], JSON.stringify(newline))
      }
      const mixed = await read('title,author,year\r\nDune,Frank Herbert,1965\nEmma,Jane Austen,\r\n', { format: 'csv', keepValid: true })
      assert.deepEqual(mixed.books, [dune])
      assert.deepEqual(mixed.errors, [{ row: 2, message: 'year is missing' }])
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

    test('a year that is not an integer is an invalid row; a blank one is missing', async () => {
      const { errors } = await read('title,author,year\na,b,1965.5\na,b,\na,b,nineteen\na,b,10000\na,b,1965-13\n', 'csv')
      assert.deepEqual(
        errors.map((e) => [e.row, e.message]),
        [1, 3, 4, 5].map((row) => [row, 'year must be an integer from -9999 to 9999']).toSpliced(1, 0, [2, 'year is missing']),
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

  test('batches hold at most batchSize books, in row order, however the body is cut', async () => {
    const rows = Array.from({ length: 25 }, (_, i) => ({ ...dune, year: i }))
    const csv = `title,author,year\n${rows.map((row) => `${row.title},${row.author},${row.year}`).join('\n')}\n`
    for (const [body, format, chunkSize] of [
      [JSON.stringify(rows), 'json', 64],
      [csv, 'csv', csv.length],
    ] as const) {
      const reader = new BookImport(chunksOf(Buffer.from(body), chunkSize), format, { ...IMPORT_LIMITS, batchSize: 10 })
      const sizes: number[] = []
      const years: number[] = []
      for await (const batch of reader.batches()) {
        sizes.push(batch.length)
        years.push(...batch.map((book) => book.year))
      }
      assert.deepEqual(sizes, [10, 10, 5], format)
      assert.deepEqual(
        years,
        rows.map((row) => row.year),
      )
    }
  })

  test('more rows than maxRows fail as too large', async () => {
    const body = ['title,author,year', ...Array.from({ length: 4 }, () => 'a,b,1')].join('\n')
    await assert.rejects(read(body, 'csv', { maxRows: 3 }), ImportTooLargeError)
    assert.equal((await read(body, 'csv', { maxRows: 4 })).books.length, 4)
  })

  test('a CSV row or NDJSON line over 1 MiB stops the import', async () => {
    const long = 'x'.repeat(2 * 1024 * 1024)
    const tooLong = [{ row: 1, message: 'A row is longer than 1048576 characters: nothing after it is read' }]
    const csv = await read(`title,author,year\n${long}`, 'csv', {}, 64 * 1024)
    assert.deepEqual(csv.errors, tooLong)
    // Ended and followed by other rows, in parts smaller and larger than the row.
    for (const chunkSize of [64 * 1024, 8 * 1024 * 1024]) {
      const ended = await read(
        `title,author,year\n${long},b,1\nDune,Frank Herbert,1965\n`,
        { format: 'csv', keepValid: true },
        {},
        chunkSize,
      )
      assert.deepEqual(ended.errors, tooLong, `chunks of ${chunkSize}`)
      assert.deepEqual(ended.books, [])
    }
    const ndjson = await read(`{}\n${long}`, 'ndjson', {}, 64 * 1024)
    assert.equal(ndjson.errors.at(-1)!.message, 'A line is longer than 1048576 characters')
  })

  test('more bytes than maxBytes fail as too large', async () => {
    const body = JSON.stringify([dune])
    await assert.rejects(read(body, 'json', { maxBytes: body.length - 1 }), ImportTooLargeError)
    assert.equal((await read(body, 'json', { maxBytes: body.length })).books.length, 1)
  })
})

describe('reading the files of other catalogues', () => {
  for (const fixture of KNOWN_FORMAT_FIXTURES) {
    test(`${fixture.format}: ${fixture.file}`, async () => {
      const format = fixture.contentType === 'text/tab-separated-values' ? 'tsv' : 'csv'
      const columns = fixture.query.columns === undefined ? undefined : { year: fixture.query.columns.replace(/^year:/, '') }
      const { books, errors } = await read(fixtureBytes(fixture.file), { format, columns, keepValid: true })
      assert.deepEqual(books, fixture.books)
      assert.deepEqual(errors, fixture.errors)
    })
  }

  test('the sniffed format reads the same files', async () => {
    for (const fixture of KNOWN_FORMAT_FIXTURES.filter(({ query }) => query.columns === undefined)) {
      const { books } = await read(fixtureBytes(fixture.file), { format: 'sniff', keepValid: true }, {}, 64)
      assert.deepEqual(books, fixture.books, fixture.file)
    }
  })

  test('header names match in any case, with spaces around them', async () => {
    const { books, errors } = await read(' TITLE ;Author;  yEaR\nDune;Frank Herbert;1965\n', 'csv')
    assert.deepEqual(errors, [])
    assert.deepEqual(books, [{ title: 'Dune', author: 'Frank Herbert', year: 1965 }])
  })

  test('Original Publication Year is read before Year Published, which stands in when it is blank', async () => {
    const body = 'Year Published,Title,Original Publication Year,Author\n2005,Dune,1965,Frank Herbert\n2022,Darkness,,Jenny Lawson\n'
    const { books } = await read(body, 'csv')
    assert.deepEqual(
      books.map((book) => book.year),
      [1965, 2022],
    )
  })

  test('only the columns whose format writes names last name first are turned around', async () => {
    const lastFirst = await read('Title,Primary Author,Date\nA,"Herbert, Frank",1965\nB,Homer,1990\nC,"Vonnegut, Kurt, Jr.",1969\n', 'csv')
    assert.deepEqual(
      lastFirst.books.map((book) => book.author),
      ['Frank Herbert', 'Homer', 'Vonnegut, Kurt, Jr.'],
    )
    const asWritten = await read('title,author,year\nA,"Herbert, Frank",1965\n', 'csv')
    assert.equal(asWritten.books[0]!.author, 'Herbert, Frank')
    // The older LibraryThing export names both orders: the one first name first is read, the other stands in.
    const both =
      '\'TITLE\',"\'AUTHOR (last, first)\'","\'AUTHOR (first, last)\'",\'DATE\'\nA,"Kuhn, Thomas",Thomas Kuhn,1962\nB,"Euclid, of Alexandria",,1956\n'
    assert.deepEqual(
      (await read(both, 'csv')).books.map((book) => book.author),
      ['Thomas Kuhn', 'of Alexandria Euclid'],
    )
  })

  test('years from integers, whole floats and the dates the formats write', async () => {
    const cells = [
      '1965',
      ' -700 ',
      '2008.0',
      '-720.0',
      '2021/03/02',
      '2021/3/2',
      '2008-09-12',
      '2008-09',
      '2008-09-12T20:53:11+08:00',
      '0800-01-01 10:00',
    ]
    const body = `title,author,year\n${cells.map((cell) => `t,a,"${cell}"`).join('\n')}\n`
    const { books, errors } = await read(body, 'csv')
    assert.deepEqual(errors, [])
    assert.deepEqual(
      books.map((book) => book.year),
      [1965, -700, 2008, -720, 2021, 2021, 2008, 2008, 2008, 800],
    )
    for (const cell of ['2008.5', '2008-13-01', '2021/02/32', '12/31/2008', 'c. 1900', '1954-1955', '2008-09-12x']) {
      const { errors: refused } = await read(`title,author,year\nt,a,"${cell}"\n`, 'csv')
      assert.deepEqual(refused, [{ row: 1, message: 'year must be an integer from -9999 to 9999' }], cell)
    }
  })

  test("Calibre's date for none and Open Library's None mean no year", async () => {
    const calibre = ['0101-01-01T00:00:00+00:00', '0100-12-31T19:00:00-05:00', '0101-01-01T05:30:00+05:30', '0042-06-01T00:00:00+00:00']
    const body = `title,authors,pubdate\n${calibre.map((date) => `t,a,${date}`).join('\n')}\nt,a,0101-02-01T00:00:00+00:00\n`
    assert.deepEqual(
      (await read(body, { format: 'csv', keepValid: true })).errors.map((error) => error.message),
      calibre.map(() => 'year is missing'),
    )
    const openLibrary = await read('Title,Authors,First Publish Year\nt,a,None\nt,a,1965\n', { format: 'csv', keepValid: true })
    assert.deepEqual(openLibrary.errors, [{ row: 1, message: 'year is missing' }])
    assert.deepEqual(openLibrary.rows, [2])
    // Elsewhere, 101 and None are what they say.
    assert.deepEqual((await read('title,author,year\nt,a,0101-01-01\n', 'csv')).books[0]!.year, 101)
    assert.deepEqual((await read('title,author,year\nt,a,None\n', 'csv')).errors[0]!.message, 'year must be an integer from -9999 to 9999')
  })

  test('a header naming none of the known columns: the error names what it has and what it needs', async () => {
    const { books, errors, unreadable } = await read('Book,Writer,Published\nDune,Frank Herbert,1965\n', { format: 'csv', keepValid: true })
    assert.deepEqual(books, [])
    assert.equal(unreadable, true)
    assert.equal(errors.length, 1)
    const [{ message, row }] = errors as [{ message: string; row?: number }]
    assert.equal(row, undefined)
    assert.match(message, /^The header row names no "title", "author" or "year" column\. It has "Book", "Writer", "Published"\. /)
    assert.match(message, /A title is read from title or 'TITLE'; An author is read from author, authors, Primary Author, /)
    assert.match(
      message,
      /A year is read from year, Original Publication Year, Year Published, .*; columns=title:<header>,author:<header>,year:<header> names them explicitly\.$/,
    )
  })

  test('a header missing one member names it alone, and a long header is cut short', async () => {
    const header = ['Title', 'Authors', ...Array.from({ length: 40 }, (_, n) => `Column ${n}`)]
    const { errors } = await read(`${header.join(',')}\n`, 'csv')
    assert.match(errors[0]!.message, /^The header row names no "year" column\. It has "Title", "Authors", "Column 0", /)
    assert.match(errors[0]!.message, /"Column 22" and 17 more\. A year is read from .*; columns=year:<header> names it explicitly\.$/)
  })

  test('a known column named twice is refused', async () => {
    assert.deepEqual((await read('Title,title,author,year\na,b,c,1\n', 'csv')).errors, [{ message: 'The header row names "title" twice' }])
  })
})

describe('columns= naming the headers', () => {
  test('named headers are read, whatever their names; the members not named are found by name', async () => {
    const body = 'Name,Writer,author,When\nDune,Frank Herbert,Someone else,1965-08-01\n'
    const { books } = await read(body, { format: 'csv', columns: { title: 'name', author: ' WRITER ', year: 'When' } })
    assert.deepEqual(books, [{ title: 'Dune', author: 'Frank Herbert', year: 1965 }])
    const partly = await read(body, { format: 'csv', columns: { title: 'Name', year: 'When' } })
    assert.deepEqual(partly.books, [{ title: 'Dune', author: 'Someone else', year: 1965 }])
  })

  test('a known column named there is read as its format writes it', async () => {
    const { books } = await read('Title,Primary Author,Added\nDune,"Herbert, Frank",2020/12/24\n', {
      format: 'csv',
      columns: { author: 'Primary Author', year: 'Added' },
    })
    assert.deepEqual(books, [{ title: 'Dune', author: 'Frank Herbert', year: 2020 }])
  })

  test('a header the file lacks, or has twice, is refused naming it', async () => {
    const lacking = await read('title,author,year\na,b,1\n', { format: 'csv', columns: { year: 'Published' } })
    assert.deepEqual(lacking.errors, [
      { message: 'columns= names "Published" for the year, but the header row has no such column. It has "title", "author", "year".' },
    ])
    assert.equal(lacking.unreadable, true)
    const twice = await read('title,author,When,when\na,b,1,2\n', { format: 'csv', columns: { year: 'When' } })
    assert.deepEqual(twice.errors, [{ message: 'The header row names "When" twice: columns= cannot tell which to read' }])
  })

  test('JSON and NDJSON have no columns to name', async () => {
    for (const format of ['json', 'ndjson'] as const) {
      const { errors } = await read('[]', { format, columns: { title: 'x' } })
      assert.deepEqual(errors, [{ message: 'columns= names the columns of a CSV or TSV file; JSON names its members itself' }], format)
    }
  })
})

describe('delimiters', () => {
  const dune = { title: 'Dune', author: 'Herbert, Frank', year: 1965 }

  test('semicolons, commas or tabs: whichever the header row holds most of outside quotes', async () => {
    for (const body of [
      'title;author;year\nDune;"Herbert, Frank";1965\n',
      '"title;";author;year\nDune;Herbert, Frank;1965\n'.replace('"title;"', 'title'),
      'title,author,year\nDune,"Herbert, Frank",1965\n',
      'title\tauthor\tyear\nDune\tHerbert, Frank\t1965\n',
      '"a;b;c;d",title,author,year\nx,Dune,"Herbert, Frank",1965\n',
    ]) {
      const { books, errors } = await read(body, 'csv', {}, 3)
      assert.deepEqual(errors, [], body)
      assert.deepEqual(books, [dune], body)
    }
  })

  test('TSV is tab-separated whatever its header holds, and takes a quote inside a field as it is', async () => {
    const body = 'title,author\tauthor\tyear\nThe "Best" Book\tHerbert, Frank\t1965\n"Quoted\tfield"\tA\t2000\n'
    const { books, errors } = await read(body, { format: 'tsv' })
    assert.deepEqual(errors, [
      {
        message:
          'The header row names no "title" column. It has "title,author", "author", "year". A title is read from title or \'TITLE\'; columns=title:<header> names it explicitly.',
      },
    ])
    assert.deepEqual(books, [])
    const named = await read(body, { format: 'tsv', columns: { title: 'title,author' } })
    assert.deepEqual(named.books, [
      { title: 'The "Best" Book', author: 'Herbert, Frank', year: 1965 },
      { title: 'Quoted\tfield', author: 'A', year: 2000 },
    ])
  })
})

describe('encodings', () => {
  const text = 'title,author,year\nCien años de soledad,Gabriel García Márquez,1967\nThe Handmaid’s Tale,Margaret Atwood,1985\n'
  const expected = [
    { title: 'Cien años de soledad', author: 'Gabriel García Márquez', year: 1967 },
    { title: 'The Handmaid’s Tale', author: 'Margaret Atwood', year: 1985 },
  ]

  test('UTF-16 with its byte-order mark, in either byte order, declared or not', async () => {
    for (const order of ['le', 'be'] as const) {
      for (const encoding of ['utf-16le', 'utf-16be', 'utf-8', undefined] as const) {
        const { books, errors } = await read(utf16(text, order), { format: 'sniff', encoding }, {}, 3)
        assert.deepEqual(errors, [], `${order} ${encoding}`)
        assert.deepEqual(books, expected, `${order} ${encoding}`)
      }
    }
  })

  test('UTF-16 without a byte-order mark is refused', async () => {
    const { errors } = await read(Buffer.from(text, 'utf16le'), { format: 'csv', encoding: 'utf-16le' })
    assert.deepEqual(errors, [{ message: 'UTF-16 text must start with a byte-order mark, which tells its byte order' }])
  })

  test('Windows-1252, where ’ is 0x92 and é 0xE9; a UTF-8 byte-order mark decides over it', async () => {
    const bytes = windows1252(text)
    assert.ok(bytes.includes(0x92))
    assert.deepEqual((await read(bytes, { format: 'csv', encoding: 'windows-1252' }, {}, 1)).books, expected)
    const marked = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)])
    assert.deepEqual((await read(marked, { format: 'csv', encoding: 'windows-1252' }, {}, 2)).books, expected)
  })

  test('a lone surrogate in UTF-16 is refused, naming its line', async () => {
    const bytes = Buffer.concat([utf16('title,author,year\na,b,1\nc,', 'le'), Buffer.from([0x00, 0xd8]), Buffer.from('d,2\n', 'utf16le')])
    const { errors } = await read(bytes, { format: 'csv', encoding: 'utf-16le' }, {}, 1000)
    assert.deepEqual(errors, [{ message: 'The body is not valid UTF-16 text (line 3)' }])
  })
})

describe('keeping the valid rows (invalid=skip, and dry runs)', () => {
  const row = (n: number) => ({ title: `Book ${n}`, author: 'A', year: n })

  test('valid rows go on with their row numbers; invalid ones are listed, at most 100, and reading goes on', async () => {
    const rows = Array.from({ length: 400 }, (_, n) => (n % 3 === 1 ? { ...row(n + 1), year: 'x' } : row(n + 1)))
    const {
      books,
      rows: numbers,
      errors,
      importable,
      preview,
    } = await read(JSON.stringify(rows), { format: 'json', keepValid: true }, {}, 4096)
    assert.equal(importable, 267)
    assert.equal(books.length, 267)
    assert.deepEqual(
      numbers,
      rows.flatMap((_, n) => (n % 3 === 1 ? [] : [n + 1])),
    )
    assert.deepEqual(books[1], row(3))
    assert.equal(errors.length, 100)
    assert.deepEqual(errors[0], { row: 2, message: 'year must be an integer from -9999 to 9999' })
    assert.equal(errors[99]!.row, 299)
    assert.deepEqual(preview, books.slice(0, 20))
  })

  test('all or nothing counts the valid rows all the same', async () => {
    const { books, importable, errors, preview } = await read('title,author,year\na,b,1\n,b,2\nc,d,3\n', 'csv')
    assert.deepEqual(books, [])
    assert.equal(importable, 2)
    assert.deepEqual(errors, [{ row: 2, message: 'title is missing' }])
    assert.deepEqual(preview, [
      { title: 'a', author: 'b', year: 1 },
      { title: 'c', author: 'd', year: 3 },
    ])
  })

  test('a quoted field left open at the end: the rows before it are kept, and it is listed', async () => {
    const body = 'title,author,year\nDune,Frank Herbert,1965\nEmma,Jane Austen,1815\n"Open,Nobody,1\nMore,Rows,2\n'
    const { books, errors, unreadable } = await read(body, { format: 'csv', keepValid: true })
    assert.deepEqual(books, [
      { title: 'Dune', author: 'Frank Herbert', year: 1965 },
      { title: 'Emma', author: 'Jane Austen', year: 1815 },
    ])
    assert.deepEqual(errors, [{ row: 3, message: 'A quoted field that starts in this row is never closed: nothing after it is read' }])
    assert.equal(unreadable, false)
  })

  test('the error that stops the reading is listed even when the list is full', async () => {
    const body = `title,author,year\n${'a,b,x\n'.repeat(150)}"open`
    const { errors } = await read(body, { format: 'csv', keepValid: true })
    assert.equal(errors.length, 100)
    assert.deepEqual(errors.at(-1), {
      row: 151,
      message: 'A quoted field that starts in this row is never closed: nothing after it is read',
    })
  })

  test('more cells than the header, and NUL characters, are errors of their rows', async () => {
    const body =
      'title,author,year,notes\nOk,A,1,\nToo,Many,2,x,y\nNUL\u0000title,A,3,\nNUL year,A,4\u0000,\nNUL note,A,5,\u0000\nLast,A,6,\n'
    const { books, rows, errors } = await read(body, { format: 'csv', keepValid: true }, {}, 5)
    assert.deepEqual(rows, [1, 5, 6])
    assert.deepEqual(
      books.map((book) => book.title),
      ['Ok', 'NUL note', 'Last'],
    )
    assert.deepEqual(errors, [
      { row: 2, message: 'Line 3 has 5 fields where the header has 4' },
      { row: 3, message: 'title must be text of 1 to 500 characters, not blank, with no NUL character' },
      { row: 4, message: 'year must be an integer from -9999 to 9999' },
    ])
  })

  test('a body that cannot be read as a whole keeps nothing', async () => {
    for (const body of ['', 'title,author,year\n', 'Book,Writer\nDune,Frank\n']) {
      const { books, errors, unreadable } = await read(body, { format: 'csv', keepValid: true })
      assert.deepEqual(books, [], body)
      assert.equal(unreadable, true, body)
      assert.equal(errors.length, 1, body)
      assert.equal(errors[0]!.row, undefined, body)
    }
  })

  test('every row invalid: nothing to keep, every row listed', async () => {
    const { books, errors, unreadable, importable } = await read('title,author,year\n,a,1\nb,,2\n', { format: 'csv', keepValid: true })
    assert.deepEqual(books, [])
    assert.equal(importable, 0)
    assert.equal(unreadable, false)
    assert.deepEqual(errors, [
      { row: 1, message: 'title is missing' },
      { row: 2, message: 'author is missing' },
    ])
  })
})

test('a header of more than 1,000 columns is refused', async () => {
  const { errors } = await read(`title,author,year${',x'.repeat(997)}\na,b,1${','.repeat(997)}\n`, 'csv')
  assert.deepEqual(errors, [])
  assert.deepEqual((await read(`title,author,year${',x'.repeat(998)}\na,b,1\n`, 'csv')).errors, [
    { message: 'The header row has 1001 columns: an import reads at most 1000' },
  ])
  const header = `title,author,year${','.repeat(1024 * 1024 - 20)}`
  assert.deepEqual((await read(`${header}\n`, 'csv', {}, 65536)).errors, [
    { message: 'The header row holds more than 65536 delimiters: an import reads at most 1000 columns' },
  ])
})

test('a row of more than 65,536 delimiters stops the reading there', async () => {
  const commas = ','.repeat(70_000)
  for (const [body, row] of [
    [`title,author,year\nDune,Frank Herbert,1965\n"x",${commas}\nEmma,Jane Austen,1815\n`, 2],
    [`title,author,year\nDune,Frank Herbert,1965\n"${commas}",b,1\n`, 2],
  ] as const) {
    const { books, errors } = await read(body, { format: 'csv', keepValid: true }, {}, 4096)
    assert.deepEqual(books, [dune])
    assert.deepEqual(errors, [
      { row, message: 'A row holds more than 65536 delimiters, those inside quotes included: nothing after it is read' },
    ])
  }
})

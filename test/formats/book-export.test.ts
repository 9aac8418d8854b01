import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import type { Readable } from 'node:stream'
import { buffer } from 'node:stream/consumers'
import { describe, test } from 'node:test'
import fc from 'fast-check'
import { csvExport, ndjsonExport, neutraliseCell } from '../../src/formats/book-export.ts'
import { BookImport } from '../../src/formats/book-import.ts'
import type { NewBook } from '../../src/books/book.ts'
import type { Book } from '../../src/books/book.ts'
import { skipWithout } from '../support/executables.ts'

/** The text as sent, byte-order mark included. */
async function text(stream: Readable): Promise<string> {
  return (await buffer(stream)).toString('utf8')
}

async function* pagesOf(books: Book[], size = 2): AsyncGenerator<Book[]> {
  for (let at = 0; at < books.length; at += size) yield books.slice(at, at + size)
}

async function importBack(body: string, format: 'csv' | 'ndjson'): Promise<NewBook[]> {
  const reader = new BookImport([Buffer.from(body)], format)
  const books: NewBook[] = []
  for await (const batch of reader.batches()) books.push(...batch)
  assert.deepEqual(reader.errors, [])
  return books
}

/** Text of every kind a title may hold, and above all what breaks CSV and runs in spreadsheets. */
const anyText = fc
  .string({
    unit: fc.oneof(
      fc.constantFrom('=', '+', '-', '@', '\t', '\r', '\n', '\r\n', "'", '"', ',', ' ', 'cmd'),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
    ),
    minLength: 1,
    maxLength: 30,
  })
  .filter((value) => value.trim() !== '' && !value.includes('\u0000'))

const books: Book[] = [
  { id: 1, title: 'Dune', author: 'Frank Herbert', year: 1965 },
  { id: 4, title: 'Cien años de soledad', author: 'Gabriel García Márquez', year: 1967 },
  { id: 7, title: 'Quotes "inside", commas', author: 'Line\r\nbreak', year: -44 },
  { id: 9, title: '=HYPERLINK("http://x")', author: '@SUM(1)', year: 0 },
]

describe('exporting books', () => {
  test('CSV: a byte-order mark, the header id,title,author,year, then RFC 4180 rows', async () => {
    const csv = await text(csvExport(pagesOf(books)))
    assert.equal(
      csv,
      '\uFEFFid,title,author,year\r\n' +
        '1,Dune,Frank Herbert,1965\r\n' +
        '4,Cien años de soledad,Gabriel García Márquez,1967\r\n' +
        '7,"Quotes ""inside"", commas","Line\r\nbreak",-44\r\n' +
        `9,"'=HYPERLINK(""http://x"")",'@SUM(1),0\r\n`,
    )
  })

  test('CSV: every cell a spreadsheet would run as a formula is neutralised', () => {
    for (const cell of ['=1+1', '+1', '-1', '@A1', '\tx', '\rx', "'=x", "''-x"]) {
      assert.equal(neutraliseCell(cell), `'${cell}`)
    }
    for (const cell of ['Dune', "'quoted", ' =x', 'a=b']) assert.equal(neutraliseCell(cell), cell)
  })

  test('CSV of no books is the header alone', async () => {
    assert.equal(await text(csvExport(pagesOf([]))), '\uFEFFid,title,author,year\r\n')
  })

  test('NDJSON: one book per line with exactly its four members', async () => {
    const ndjson = await text(ndjsonExport(pagesOf(books)))
    const lines = ndjson.split('\n')
    assert.equal(lines.pop(), '')
    assert.deepEqual(
      lines.map((line) => JSON.parse(line)),
      books,
    )
  })

  test('CSV: a line break alone in a cell is quoted, so no line of the file starts a record the guard never saw', async () => {
    const csv = await text(csvExport(pagesOf([{ id: 3, title: "Harmless\n=cmd|' /C calc'!A0", author: 'Cut\rshort', year: 1 }])))
    assert.equal(csv, `\uFEFFid,title,author,year\r\n3,"Harmless\n=cmd|' /C calc'!A0","Cut\rshort",1\r\n`)
  })

  test(
    "CSV: Python's csv module reads every row back, and no cell it reads starts as a formula (seeded)",
    { skip: skipWithout('/usr/bin/python3', 'python3') },
    async () => {
      const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31)
      const sample = fc
        .sample(fc.array(fc.record({ id: fc.nat(), title: anyText, author: anyText, year: fc.integer() }), { minLength: 1 }), {
          seed,
          numRuns: 20,
        })
        .flat()
      const csv = await text(csvExport(pagesOf(sample, 7)))
      // Python reads the file as a spreadsheet would: records as its own reader splits them.
      const read = JSON.parse(
        execFileSync(
          '/usr/bin/python3',
          ['-c', 'import csv, io, json, sys; print(json.dumps(list(csv.reader(io.StringIO(sys.stdin.read(), newline="")))))'],
          {
            input: csv.slice(1),
          },
        ).toString(),
      ) as string[][]
      assert.deepEqual(read[0], ['id', 'title', 'author', 'year'], `seed ${seed}`)
      assert.equal(read.length, sample.length + 1, `seed ${seed}`)
      for (const [i, book] of sample.entries()) {
        const [id, title, author, year] = read[i + 1]!
        assert.deepEqual([id, year], [String(book.id), String(book.year)], `seed ${seed}`)
        for (const [cell, stored] of [
          [title!, book.title],
          [author!, book.author],
        ]) {
          assert.equal(cell, neutraliseCell(stored!), `seed ${seed}`)
          assert.doesNotMatch(cell, /^[=+\-@\t\r]/, `seed ${seed}`)
        }
      }
    },
  )

  test('what either format writes, the import reads back (seeded)', async () => {
    const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31)
    const text500 = fc
      .string({
        unit: fc.oneof(
          fc.constantFrom('=', '+', '-', '@', '\t', '\r', '\n', "'", '"', ',', ' '),
          fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
          fc.constantFrom('é', '😀', '中'),
        ),
        minLength: 1,
        maxLength: 40,
      })
      .filter((value) => value.trim() !== '' && !value.includes('\u0000'))
    const book = fc.record({
      id: fc.integer({ min: 1, max: 2 ** 40 }),
      title: text500,
      author: text500,
      year: fc.integer({ min: -9999, max: 9999 }),
    })
    await fc.assert(
      fc.asyncProperty(fc.array(book, { minLength: 1, maxLength: 20 }), async (sample) => {
        const expected = sample.map(({ title, author, year }) => ({ title, author, year }))
        assert.deepEqual(await importBack(await text(csvExport(pagesOf(sample, 3))), 'csv'), expected)
        assert.deepEqual(await importBack(await text(ndjsonExport(pagesOf(sample, 3))), 'ndjson'), expected)
      }),
      { seed, numRuns: 200 },
    )
  })
})

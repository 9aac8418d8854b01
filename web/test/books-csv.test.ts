import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { csvExport } from '../../src/formats/book-export.ts'
import { booksCsv } from '../src/books-csv.ts'

async function serviceCsv(books: { id: number; title: string; author: string; year: number }[]): Promise<string> {
  let text = ''
  for await (const chunk of csvExport(
    (async function* () {
      yield books
    })(),
  ))
    text += chunk
  return text
}

describe('the CSV of the selected books', () => {
  it('is the header, then one line per book, with CRLF ends and a byte-order mark', () => {
    assert.equal(
      booksCsv([
        { id: 1, title: 'Dune', author: 'Frank Herbert', year: 1965 },
        { id: 7, title: 'Cien años de soledad', author: 'Márquez, Gabriel García', year: -450 },
      ]),
      '\uFEFFid,title,author,year\r\n1,Dune,Frank Herbert,1965\r\n7,Cien años de soledad,"Márquez, Gabriel García",-450\r\n',
    )
  })

  it('quotes quotes, commas and line breaks, and guards cells a spreadsheet would run', () => {
    const line = (title: string) => booksCsv([{ id: 1, title, author: 'A', year: 1 }]).split('\r\n')[1]
    assert.equal(line('Say "hi"'), '1,"Say ""hi""",A,1')
    assert.equal(line('=HYPERLINK("x")'), `1,"'=HYPERLINK(""x"")",A,1`)
    for (const start of ['=', '+', '-', '@', '\t']) assert.equal(line(`${start}1`), `1,'${start}1,A,1`)
    assert.equal(line('\r1'), `1,"'\r1",A,1`)
    assert.equal(booksCsv([{ id: 1, title: 'a\nb', author: 'A', year: 1 }]).split('\r\n')[1], '1,"a\nb",A,1')
    assert.equal(line("'=1"), "1,''=1,A,1")
    assert.equal(line("'plain"), "1,'plain,A,1")
  })

  // The service quotes a line break only when it is a whole CRLF; the page quotes a lone CR or LF too.
  it('is byte for byte what the service exports for the same books, line breaks being CRLF', async () => {
    const text = fc.string({ unit: fc.constantFrom('a', ' ', ',', '"', '\r\n', '\t', '=', '+', '-', '@', "'", 'é', '😀'), minLength: 1 })
    const book = fc.record({ id: fc.integer({ min: 1 }), title: text, author: text, year: fc.integer({ min: -9999, max: 9999 }) })
    await fc.assert(fc.asyncProperty(fc.array(book, { maxLength: 5 }), async (books) => booksCsv(books) === (await serviceCsv(books))))
  })
})

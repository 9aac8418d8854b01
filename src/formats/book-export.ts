import { Readable } from 'node:stream'
import { stringify } from 'csv-stringify/sync'
import type { Book } from '../books/book.ts'

const COLUMNS = ['id', 'title', 'author', 'year'] as const

/**
 * A cell a spreadsheet would run as a formula (OWASP "CSV injection") gets a leading `'`. Cells
 * that already start with quotes before such a character get one more, so that the import can
 * take exactly one off and every title reads back as it was stored.
 */
const FORMULA = /^'*[=+\-@\t\r]/

export function neutraliseCell(text: string): string {
  return FORMULA.test(text) ? `'${text}` : text
}

const CSV_OPTIONS = {
  cast: { string: neutraliseCell },
  columns: [...COLUMNS],
  eof: true,
  record_delimiter: 'windows',
  // csv-stringify quotes a cell that holds the record delimiter, CRLF, but not one that holds a CR
  // or an LF alone: any reader but the service's own would start a record there, whose first cell
  // ("=cmd|…" after a line break in a title) the formula guard never saw.
  quoted_match: /[\r\n]/,
} as const

/**
 * CSV with the header `id,title,author,year` and RFC 4180 quoting (CRLF line ends), streamed
 * page by page. It starts with a byte-order mark so that spreadsheets read it as UTF-8 and
 * keep accents intact.
 */
export function csvExport(pages: AsyncIterable<Book[]>): Readable {
  return Readable.from(
    (async function* () {
      yield `\uFEFF${COLUMNS.join(',')}\r\n`
      for await (const page of pages) if (page.length > 0) yield stringify(page, CSV_OPTIONS)
    })(),
    { objectMode: false },
  )
}

/** One JSON book per line, members in the order of the API, streamed page by page. */
export function ndjsonExport(pages: AsyncIterable<Book[]>): Readable {
  return Readable.from(
    (async function* () {
      for await (const page of pages) {
        let text = ''
        for (const { id, title, author, year } of page) text += `${JSON.stringify({ id, title, author, year })}\n`
        if (text !== '') yield text
      }
    })(),
    { objectMode: false },
  )
}

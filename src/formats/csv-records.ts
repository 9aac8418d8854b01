import { pipeline, Readable } from 'node:stream'
import { CsvError, parse } from 'csv-parse'
import { ImportFormatError, type ImportRecord } from './import-errors.ts'

const MEMBERS = ['title', 'author', 'year'] as const
/** Far above any valid row (three members of at most 500 characters), even with other columns. */
export const MAX_ROW_CHARACTERS = 1024 * 1024
type Member = (typeof MEMBERS)[number]

/** A cell that `csvCell` prefixed so that no spreadsheet runs it: the prefix comes off again. */
const NEUTRALISED = /^'+[=+\-@\t\r]/

/** Where each book member sits in a header row; names are compared trimmed and in any case. */
function columnsOf(header: string[]): Record<Member, number> {
  const names = header.map((name) => name.trim().toLowerCase())
  const columns = {} as Record<Member, number>
  for (const member of MEMBERS) {
    const at = names.indexOf(member)
    if (at === -1) throw new ImportFormatError(`The CSV header row names no "${member}" column: it needs title, author and year`)
    if (names.indexOf(member, at + 1) !== -1) throw new ImportFormatError(`The CSV header row names "${member}" twice`)
    columns[member] = at
  }
  return columns
}

/** Text as the export wrote it, back to what was stored. */
function cellText(cell: string): string {
  return NEUTRALISED.test(cell) ? cell.slice(1) : cell
}

/** A year cell as a number when it is written as an integer, else as the text, which then fails the check as a book. */
function yearOf(cell: string): unknown {
  const trimmed = cell.trim()
  return /^-?\d{1,15}$/.test(trimmed) ? Number(trimmed) : trimmed
}

/**
 * Books from RFC 4180 CSV with a header row naming title, author and year in any order; other
 * columns are ignored. A row with the wrong number of fields is that row's problem; broken
 * quoting stops the import, since the rows after it cannot be told apart.
 */
export async function* csvRecords(text: AsyncIterable<string>): AsyncGenerator<ImportRecord[]> {
  // A bound on one row: without it, a body with no line break makes the parser grow one field
  // to the whole body, at a cost that grows faster than its length.
  const parser = parse({ relax_column_count: true, skip_empty_lines: true, info: true, max_record_size: MAX_ROW_CHARACTERS })
  // pipeline, unlike pipe, hands a failure of the text (invalid UTF-8) on to the parser's reader.
  pipeline(Readable.from(text, { objectMode: true }), parser, () => {})
  let columns: Record<Member, number> | undefined
  let width = 0
  let row = 0
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      if (columns === undefined) {
        columns = columnsOf(record)
        width = record.length
        continue
      }
      row++
      if (record.length !== width) {
        yield [{ row, problem: `Line ${info.lines} has ${record.length} fields where the header has ${width}` }]
        continue
      }
      yield [
        {
          row,
          value: {
            title: cellText(record[columns.title]!),
            author: cellText(record[columns.author]!),
            year: yearOf(record[columns.year]!),
          },
        },
      ]
    }
  } catch (err) {
    if (!(err instanceof CsvError)) throw err
    // The parser runs ahead of this loop: its own count says which record broke (the header is the first).
    const records = typeof err.records === 'number' ? err.records : 0
    throw new ImportFormatError(csvProblem(err), records > 0 ? records : undefined)
  }
  if (columns === undefined) throw new ImportFormatError('The body is empty: a CSV import needs a header row and at least one book')
}

function csvProblem(err: CsvError): string {
  const line = typeof err.lines === 'number' ? ` (line ${err.lines})` : ''
  if (err.code === 'CSV_MAX_RECORD_SIZE') return `A row is longer than ${MAX_ROW_CHARACTERS} characters`
  if (err.code === 'CSV_QUOTE_NOT_CLOSED') return 'A quoted field is never closed: the quotes are unbalanced'
  if (err.code === 'INVALID_OPENING_QUOTE' || err.code === 'CSV_INVALID_CLOSING_QUOTE') {
    return `A quote is misplaced${line}: quote a field whole, and double each quote inside it`
  }
  return `The CSV is malformed${line}`
}

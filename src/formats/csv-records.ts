import { CsvError, parse } from 'csv-parse'
import { ImportFormatError, type ImportRecord } from './import-errors.ts'
import { bookColumns, type BookOfRow, type ColumnChoice } from './known-columns.ts'
import { readAhead } from './read-ahead.ts'

/** Far above any valid row (three members of at most 500 characters), even with other columns. */
export const MAX_ROW_CHARACTERS = 1024 * 1024

export type Delimiter = ',' | ';' | '\t'
const DELIMITERS: Delimiter[] = [',', ';', '\t']

export interface DelimitedOptions {
  /** Tab for TSV; found from the header row when not given. */
  delimiter?: Delimiter
  columns?: ColumnChoice
}

/**
 * The delimiter a header row uses: of comma, semicolon and tab, the one it holds most of outside
 * quotes (a comma when it holds none). Spreadsheets set to languages that write decimal commas
 * save "CSV" with semicolons.
 */
export function delimiterOf(headerRow: string): Delimiter {
  const counts = DELIMITERS.map(() => 0)
  let quoted = false
  for (const character of headerRow) {
    if (character === '"') quoted = !quoted
    if (quoted) continue
    if (character === '\n') break
    const delimiter = DELIMITERS.indexOf(character as Delimiter)
    if (delimiter !== -1) counts[delimiter]!++
  }
  const most = Math.max(...counts)
  return most === 0 ? ',' : DELIMITERS[counts.indexOf(most)]!
}

/**
 * The text whole, and its first row, read as far as its first line break or the longest row
 * allowed, whichever comes first.
 */
async function withHeaderRow(text: AsyncIterable<string>): Promise<{ headerRow: string; text: AsyncIterable<string> }> {
  let length = 0
  const { seen, whole } = await readAhead(text, (part) => {
    length += part.length
    return part.includes('\n') || length > MAX_ROW_CHARACTERS
  })
  return { headerRow: seen.join('').slice(0, MAX_ROW_CHARACTERS), text: whole }
}

/** A row as the parser read it, and the line it ended on. */
interface ParsedRow {
  record: string[]
  lines: number
}

/**
 * Books from delimited text with a header row, RFC 4180 quoting, in any order of columns; other
 * columns are ignored. Which columns hold the title, author and year, `bookColumns` says. A row
 * with the wrong number of fields is that row's problem; broken quoting stops the reading at
 * the row where it starts, since the rows after it cannot be told apart, and the rows before it
 * are handed out first. Tab-separated text takes a quote inside a field as it is, since
 * tab-separated files rarely quote.
 */
export async function* csvRecords(text: AsyncIterable<string>, options: DelimitedOptions = {}): AsyncGenerator<ImportRecord[]> {
  let delimiter = options.delimiter
  if (delimiter === undefined) {
    const read = await withHeaderRow(text)
    delimiter = delimiterOf(read.headerRow)
    text = read.text
  }
  // Rows are taken as the parser finds them, so that those before a broken one are not lost
  // with the parser's stream when it fails; nothing goes down the stream itself.
  const parsed: ParsedRow[] = []
  const parser = parse({
    delimiter,
    relax_quotes: delimiter === '\t',
    relax_column_count: true,
    skip_empty_lines: true,
    // A bound on one row: without it, a body with no line break makes the parser grow one field
    // to the whole body, at a cost that grows faster than its length.
    max_record_size: MAX_ROW_CHARACTERS,
    on_record: (record: string[], { lines }) => {
      parsed.push({ record, lines })
      return undefined
    },
  })
  parser.resume()
  // A failure reaches the callback of the write or end that met it; the event has nothing to add.
  parser.on('error', () => {})
  const feed = (chunk: string | undefined) =>
    new Promise<Error | null | undefined>((resolve) => (chunk === undefined ? parser.end(resolve) : parser.write(chunk, resolve)))

  let bookOf: BookOfRow | undefined
  let width = 0
  let row = 0
  const recordsOf = (rows: ParsedRow[]): ImportRecord[] => {
    const records: ImportRecord[] = []
    for (const { record, lines } of rows) {
      if (bookOf === undefined) {
        bookOf = bookColumns(record, options.columns)
        width = record.length
        continue
      }
      row++
      records.push(
        record.length === width
          ? { row, value: bookOf(record) }
          : { row, problem: `Line ${lines} has ${record.length} fields where the header has ${width}` },
      )
    }
    return records
  }
  const iterator = text[Symbol.asyncIterator]()
  for (;;) {
    const next = await iterator.next()
    const failure = await feed(next.done ? undefined : next.value)
    const records = recordsOf(parsed.splice(0))
    if (records.length > 0) yield records
    if (failure) {
      if (!(failure instanceof CsvError)) throw failure
      // The parser's count says which record broke (the header is the first).
      const records = typeof failure.records === 'number' ? failure.records : 0
      throw new ImportFormatError(csvProblem(failure), records > 0 ? records : undefined)
    }
    if (next.done) break
  }
  if (bookOf === undefined) throw new ImportFormatError('The body is empty: a CSV import needs a header row and at least one book')
}
function csvProblem(err: CsvError): string {
  const line = typeof err.lines === 'number' ? ` (line ${err.lines})` : ''
  if (err.code === 'CSV_MAX_RECORD_SIZE') return `A row is longer than ${MAX_ROW_CHARACTERS} characters: nothing after it is read`
  if (err.code === 'CSV_QUOTE_NOT_CLOSED') return 'A quoted field that starts in this row is never closed: nothing after it is read'
  if (err.code === 'INVALID_OPENING_QUOTE' || err.code === 'CSV_INVALID_CLOSING_QUOTE') {
    return `A quote is misplaced${line}: quote a field whole, and double each quote inside it; nothing after it is read`
  }
  return `The CSV is malformed${line}: nothing after it is read`
}

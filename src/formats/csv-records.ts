import Papa from 'papaparse'
import { ImportFormatError, type ImportRecord } from './import-errors.ts'
import { bookColumns, MAX_COLUMNS, type BookOfRow, type ColumnChoice } from './known-columns.ts'
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

const TOO_LONG = `A row is longer than ${MAX_ROW_CHARACTERS} characters: nothing after it is read`

/**
 * Far above any valid row too (a header has at most 1,000 columns), and a bound on the work of
 * reading a row: each delimiter is a field to make, and a row of commas alone makes a million.
 */
const MAX_ROW_DELIMITERS = 65_536
const TOO_MANY_DELIMITERS = `A row holds more than ${MAX_ROW_DELIMITERS} delimiters, those inside quotes included: nothing after it is read`

/** How rows end: "\r\n" is read as "\n", with the "\r" taken off the row's last field. */
type Newline = '\n' | '\r'

/** A line break of the header row's: a lone "\r" only where it ends the header row. */
function newlineOf(headerRow: string): Newline {
  const cr = headerRow.indexOf('\r')
  const lf = headerRow.indexOf('\n')
  return cr !== -1 && (lf === -1 || lf > cr + 1) ? '\r' : '\n'
}

/** How many times `text` holds `of` before `end`. */
function occurrences(text: string, of: string, end: number): number {
  let count = 0
  for (let at = text.indexOf(of); at !== -1 && at < end; at = text.indexOf(of, at + 1)) count++
  return count
}

/** Line breaks inside a row's quoted fields: each puts the rows after it a line further. */
function breaksIn(record: string[], newline: Newline): number {
  let breaks = 0
  for (const cell of record) breaks += occurrences(cell, newline, cell.length)
  return breaks
}

function rowLength(record: string[]): number {
  let length = record.length
  for (const cell of record) length += cell.length
  return length
}

/**
 * Books from delimited text with a header row, RFC 4180 quoting, in any order of columns; other
 * columns are ignored. Which columns hold the title, author and year, `bookColumns` says. A row
 * with the wrong number of fields is that row's problem; a quoted field that is never closed, a
 * quote after a closing quote, or a row over MAX_ROW_CHARACTERS or MAX_ROW_DELIMITERS stops the
 * reading at the row where it starts, since the rows after it cannot be told apart, and the rows
 * before it are handed out first. A quote inside an unquoted field is taken as it is, as
 * spreadsheets take it.
 */
export async function* csvRecords(text: AsyncIterable<string>, options: DelimitedOptions = {}): AsyncGenerator<ImportRecord[]> {
  const read = await withHeaderRow(text)
  const delimiter = options.delimiter ?? delimiterOf(read.headerRow)
  const newline = newlineOf(read.headerRow)
  // papaparse's own streaming bounds no row, and reads an unfinished one again with each part: its
  // parser is given the text up to the last line break instead, and the row after it is kept.
  const parser = new Papa.Parser({ delimiter, newline })

  let bookOf: BookOfRow | undefined
  let width = 0
  let row = 0
  let line = 0
  const recordsOf = (rows: string[][]): ImportRecord[] => {
    const records: ImportRecord[] = []
    for (const record of rows) {
      const last = record.length - 1
      if (newline === '\n' && record[last]!.endsWith('\r')) record[last] = record[last]!.slice(0, -1)
      line += 1 + breaksIn(record, newline)
      if (last === 0 && record[0] === '') continue
      if (bookOf === undefined) {
        bookOf = bookColumns(record, options.columns)
        width = record.length
        continue
      }
      row++
      records.push(
        record.length === width
          ? { row, value: bookOf(record) }
          : { row, problem: `Line ${line} has ${record.length} fields where the header has ${width}` },
      )
    }
    return records
  }
  // The row that stops the reading: counted from 1 once the header is read, and none before.
  const stopAt = (message: string) => new ImportFormatError(message, bookOf === undefined ? undefined : row + 1)

  let partial = ''
  // Delimiters in the row left unfinished, quoted ones too: each is a field to make once it is read.
  let held = 0
  const iterator = read.text[Symbol.asyncIterator]()
  for (;;) {
    const next = await iterator.next()
    if (!next.done) {
      const part = next.value
      const ends = part.indexOf(newline)
      held += occurrences(part, delimiter, ends === -1 ? part.length : ends)
      if (held > MAX_ROW_DELIMITERS) {
        throw bookOf === undefined
          ? new ImportFormatError(
              `The header row holds more than ${MAX_ROW_DELIMITERS} delimiters: an import reads at most ${MAX_COLUMNS} columns`,
            )
          : stopAt(TOO_MANY_DELIMITERS)
      }
      // Text with no line break cannot end the row left unfinished: it is kept, and the row read
      // once a line break comes, so that a long row is not read again with each part.
      if (ends === -1) {
        partial += part
        if (partial.length > MAX_ROW_CHARACTERS) throw stopAt(TOO_LONG)
        continue
      }
    }
    const whole = next.done ? partial : partial + next.value
    // Read up to the last line break: the row after it cannot end before more text comes.
    const text = next.done ? whole : whole.slice(0, whole.lastIndexOf(newline) + newline.length)
    const { data, errors, meta } = parser.parse(text, 0, !next.done) as Papa.ParseResult<string[]>
    partial = whole.slice(meta.cursor)
    held = occurrences(partial, delimiter, partial.length)
    // A quote after a closing one stops the reading: with the text read ending at a line break,
    // nothing after it can still make it the end of its field.
    const quote = errors.find(({ row }) => row !== undefined)
    let end = Math.min(quote?.row ?? data.length, data.length)
    let tooLong = false
    // Only text this long can hold a row too long: shorter parts cost no look at each row.
    if (text.length > MAX_ROW_CHARACTERS) {
      const long = data.slice(0, end).findIndex((record) => rowLength(record) > MAX_ROW_CHARACTERS)
      if (long !== -1) [end, tooLong] = [long, true]
    }
    const records = recordsOf(end === data.length ? data : data.slice(0, end))
    if (records.length > 0) yield records
    if (tooLong) throw stopAt(TOO_LONG)
    if (quote?.code === 'MissingQuotes') throw stopAt('A quoted field that starts in this row is never closed: nothing after it is read')
    if (quote) {
      throw stopAt(
        `A quote is misplaced (line ${line + 1}): quote a field whole, and double each quote inside it; nothing after it is read`,
      )
    }
    if (partial.length > MAX_ROW_CHARACTERS) throw stopAt(TOO_LONG)
    if (next.done) break
  }
  if (bookOf === undefined) throw new ImportFormatError('The body is empty: a CSV import needs a header row and at least one book')
}

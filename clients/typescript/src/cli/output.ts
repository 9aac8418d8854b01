/** Lists printed as a table for people, or as JSON or CSV for programs, written as they arrive. */
import { once } from 'node:events'

export type Format = 'table' | 'json' | 'csv'

export interface Column<T> {
  title: string
  /** The value as the service gives it, which CSV and JSON keep. */
  value: (item: T) => string | number | null
  /** An instant in RFC 3339, which the table shows to the second, in UTC, as `2026-11-25 10:02:11`. */
  time?: boolean
  /** What the table shows where the value is null; nothing when absent. */
  none?: string
  /** Numbers line up on the right. */
  right?: boolean
  /** How much of the room left on a narrow terminal this column takes, against the others that wrap. */
  share?: number
}

/** Writes `text`, waiting while the reader is behind, so that a long list never piles up in memory. */
export async function write(out: NodeJS.WritableStream, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain')
}

/**
 * `20,000`: an integer with its thousands grouped as en-US writes them. By hand, because
 * `Intl.NumberFormat` loads the locale data of ICU first, a tenth of the CPU time of a whole
 * `find` (docs/client.md#figures).
 */
function grouped(n: number): string {
  if (!Number.isSafeInteger(n)) return new Intl.NumberFormat('en-US').format(n)
  return String(n).replace(/\B(?=(\d{3})+$)/g, ',')
}

const MiB = 1024 * 1024

/** `310 bytes`, `12 KiB`, `3.8 MiB`, `31 MiB`. */
export function size(bytes: number): string {
  if (bytes < 1024) return `${Math.round(bytes)} bytes`
  if (bytes < MiB) return `${Math.round(bytes / 1024)} KiB`
  return `${(bytes / MiB).toFixed(bytes < 10 * MiB ? 1 : 0)} MiB`
}

/** `1 book`, `1,203 books`; `plural` for nouns that do not take an s. */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${grouped(n)} ${n === 1 ? noun : plural}`
}

/** A cell as RFC 4180 quotes it; text a spreadsheet would run as a formula starts with `'`, as the service's export writes it. */
function csvCell(value: string | number | null): string {
  if (value === null) return ''
  if (typeof value === 'number') return String(value)
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe
}

/** A cell as the table shows it. */
function tableCell<T>(column: Column<T>, item: T): string {
  const value = column.value(item)
  if (value === null) return column.none ?? ''
  return column.time === true
    ? String(value)
        .replace('T', ' ')
        .replace(/\.\d+Z$|Z$/, '')
    : String(value)
}

function cut(text: string, width: number): string {
  const chars = [...text]
  return chars.length <= width ? text : `${chars.slice(0, Math.max(0, width - 1)).join('')}…`
}

function pad(text: string, width: number, right: boolean | undefined): string {
  const room = Math.max(0, width - [...text].length)
  return right ? `${' '.repeat(room)}${text}` : `${text}${' '.repeat(room)}`
}

/** The widths of the columns for the first rows, fitted to `room` characters by narrowing the columns that have a share. */
function widthsOf<T>(columns: Column<T>[], cells: string[][], room: number): number[] {
  const widths = columns.map((column, n) => Math.max(column.title.length, ...cells.map((row) => [...row[n]!].length)))
  const over = widths.reduce((sum, width) => sum + width, 0) + 2 * (columns.length - 1) - room
  if (over <= 0) return widths
  const shares = columns.reduce((sum, column) => sum + (column.share ?? 0), 0)
  return widths.map((width, n) => {
    const share = columns[n]!.share ?? 0
    return share === 0 ? width : Math.max(columns[n]!.title.length, width - Math.ceil((over * share) / shares))
  })
}

/**
 * Prints the items of `batches` in `format`. A table takes its widths from the first batch and
 * fits the terminal; written to a file or a pipe, cells are never cut.
 */
export async function printList<T>(
  out: NodeJS.WriteStream,
  format: Format,
  columns: Column<T>[],
  batches: AsyncIterable<T[]>,
): Promise<number> {
  let printed = 0
  let widths: number[] | undefined
  if (format === 'csv') await write(out, `${columns.map((column) => column.title.toLowerCase().replace(/ /g, '_')).join(',')}\r\n`)
  if (format === 'json') await write(out, '[')
  for await (const items of batches) {
    if (items.length === 0) continue
    let text = ''
    if (format === 'json') {
      text = items.map((item, n) => `${printed + n === 0 ? '\n' : ',\n'}  ${JSON.stringify(item)}`).join('')
    } else if (format === 'csv') {
      text = items.map((item) => `${columns.map((column) => csvCell(column.value(item))).join(',')}\r\n`).join('')
    } else {
      const cells = items.map((item) => columns.map((column) => tableCell(column, item)))
      if (widths === undefined) {
        widths = widthsOf(columns, cells, out.isTTY ? out.columns : Infinity)
        text = `${columns.map((column, n) => pad(column.title, widths![n]!, column.right)).join('  ')}\n`.trimEnd() + '\n'
      }
      const fitted = widths
      const cutCells = out.isTTY
      text += cells
        .map(
          (row) =>
            `${row.map((cell, n) => pad(cutCells ? cut(cell, fitted[n]!) : cell, fitted[n]!, columns[n]!.right)).join('  ')}`.trimEnd() +
            '\n',
        )
        .join('')
    }
    await write(out, text)
    printed += items.length
  }
  if (format === 'json') await write(out, printed === 0 ? ']\n' : '\n]\n')
  return printed
}

/** One item, as a table of one row or as JSON. */
export async function printOne<T>(out: NodeJS.WriteStream, format: Format, columns: Column<T>[], item: T): Promise<void> {
  if (format === 'json') return write(out, `${JSON.stringify(item, null, 2)}\n`)
  await printList(out, format, columns, inOneBatch([item]))
}

export async function* inOneBatch<T>(items: T[]): AsyncGenerator<T[]> {
  yield items
}

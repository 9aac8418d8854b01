/** One problem found in an import body; `row` counts books from 1 and is absent when the body as a whole is at fault. */
export interface RowError {
  row?: number
  message: string
}

/** The body cannot be read any further: its format is broken beyond the row it names, if any. */
export class ImportFormatError extends Error {
  readonly row: number | undefined

  constructor(message: string, row?: number) {
    super(message)
    this.name = 'ImportFormatError'
    this.row = row
  }
}

/** The body holds more rows, or more bytes, than one import accepts. */
export class ImportTooLargeError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ImportTooLargeError'
  }
}

/**
 * What a format reader found at one row: the value to check as a book, or the reason the
 * row cannot be one (a broken NDJSON line, a CSV row with the wrong number of fields).
 */
export type ImportRecord = { row: number; value: unknown } | { row: number; problem: string }

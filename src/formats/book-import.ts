import type { NewBook } from '../books/book.ts'
import type { ImportBatch } from '../books/duplicates.ts'
import { checkBook } from './book-check.ts'
import { bodyText, type TextEncoding } from './body-text.ts'
import { csvRecords } from './csv-records.ts'
import { ImportFormatError, ImportTooLargeError, type ImportRecord, type RowError } from './import-errors.ts'
import { sniffFormat, type ImportFormat } from './import-format.ts'
import { jsonArrayRecords } from './json-array-records.ts'
import type { ColumnChoice } from './known-columns.ts'
import { limitBytes } from './limit-bytes.ts'
import { ndjsonRecords } from './ndjson-records.ts'

export type { ImportFormat } from './import-format.ts'

export interface ImportLimits {
  maxRows: number
  maxBytes: number
  /** Errors reported at most. */
  maxErrors: number
  /**
   * Books per batch handed to the store. Small, so that the strings a batch becomes on its way
   * to the store stay out of V8's large-object space, which only a full collection empties.
   */
  batchSize: number
  /** Books a dry run shows as they would be stored. */
  previewSize: number
}

export const IMPORT_LIMITS: ImportLimits = { maxRows: 100_000, maxBytes: 32 * 1024 * 1024, maxErrors: 100, batchSize: 100, previewSize: 20 }

/** How to read a body. */
export interface ReadOptions {
  format: ImportFormat | 'sniff'
  encoding?: TextEncoding
  /** Headers named for the members of a book, for CSV and TSV. */
  columns?: ColumnChoice
  /**
   * Hand out every valid row and read to the end whatever errors come (for `invalid=skip`, and
   * dry runs, which count them). Otherwise, all or nothing: no batch after the first error,
   * and reading stops at `maxErrors`.
   */
  keepValid?: boolean
}

/**
 * Checked books and the row each came from, counted from 1: the rows let a later step say which
 * rows it left out (a duplicate, say), since skipped rows leave gaps.
 */
export type CheckedBatch = ImportBatch

const READERS: Record<ImportFormat, (text: AsyncIterable<string>, columns: ColumnChoice | undefined) => AsyncGenerator<ImportRecord[]>> = {
  json: jsonArrayRecords,
  ndjson: ndjsonRecords,
  csv: (text, columns) => csvRecords(text, { columns }),
  tsv: (text, columns) => csvRecords(text, { delimiter: '\t', columns }),
}

/**
 * Reads an import body as it streams in and hands out its books in batches, checked by the
 * rules of `POST /book`. Problems go to `errors`, at most `maxErrors` of them: those of a row
 * carry its number, those of the body as a whole (empty, no usable header) none, and then
 * nothing can be stored (`unreadable`). A body over the row or byte limit fails with
 * ImportTooLargeError.
 */
export class BookImport {
  readonly errors: RowError[] = []
  /** The first books that pass the rules, as they would be stored. */
  readonly preview: NewBook[] = []
  #rows = 0
  #importable = 0
  #unreadable = false
  readonly #source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>
  readonly #options: ReadOptions
  readonly #limits: ImportLimits

  constructor(
    source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    read: ImportFormat | ReadOptions,
    limits: ImportLimits = IMPORT_LIMITS,
  ) {
    this.#source = source
    this.#options = typeof read === 'string' ? { format: read } : read
    this.#limits = limits
  }

  /** Rows read so far that pass the rules. */
  get importable(): number {
    return this.#importable
  }

  /** The body as a whole cannot be read: one of `errors` has no row. */
  get unreadable(): boolean {
    return this.#unreadable
  }

  /** The books alone, in batches. */
  async *batches(): AsyncGenerator<NewBook[]> {
    for await (const { books } of this.checkedBatches()) yield books
  }

  async *checkedBatches(): AsyncGenerator<CheckedBatch> {
    const { maxRows, maxBytes, maxErrors, batchSize, previewSize } = this.#limits
    const { encoding, columns, keepValid = false } = this.#options
    let batch: CheckedBatch = { rows: [], books: [] }
    try {
      let text: AsyncIterable<string> = bodyText(limitBytes(this.#source, maxBytes), encoding)
      let format = this.#options.format
      if (format === 'sniff') ({ format, text } = await sniffFormat(text))
      if (columns !== undefined && (format === 'json' || format === 'ndjson')) {
        throw new ImportFormatError('columns= names the columns of a CSV or TSV file; JSON names its members itself')
      }
      for await (const chunk of READERS[format](text, columns)) {
        for (const record of chunk) {
          if (++this.#rows > maxRows) throw new ImportTooLargeError(`An import holds at most ${maxRows} books`)
          const checked = 'problem' in record ? { ok: false as const, message: record.problem } : checkBook(record.value)
          if (checked.ok) {
            this.#importable++
            if (this.preview.length < previewSize) this.preview.push(checked.book)
            if (keepValid || this.errors.length === 0) {
              batch.rows.push(record.row)
              batch.books.push(checked.book)
              if (batch.books.length >= batchSize) {
                yield batch
                batch = { rows: [], books: [] }
              }
            }
            continue
          }
          if (this.errors.length < maxErrors) this.errors.push({ row: record.row, message: checked.message })
          if (keepValid) continue
          batch = { rows: [], books: [] }
          if (this.errors.length >= maxErrors) return
        }
      }
    } catch (err) {
      if (!(err instanceof ImportFormatError)) throw err
      this.#stop(err)
      if (err.row === undefined || !keepValid) return
    }
    if (this.#rows === 0 && this.errors.length === 0) this.#stop(new ImportFormatError('The body holds no books'))
    if (batch.books.length > 0 && (keepValid || this.errors.length === 0)) yield batch
  }

  /** Records what stopped the reading: listed even when the list is full, in place of its last error. */
  #stop(err: ImportFormatError) {
    if (err.row === undefined) this.#unreadable = true
    if (this.errors.length >= this.#limits.maxErrors) this.errors.pop()
    this.errors.push(err.row === undefined ? { message: err.message } : { row: err.row, message: err.message })
  }
}

import type { NewBook } from '../books/book.ts'
import { checkBook } from './book-check.ts'
import { csvRecords } from './csv-records.ts'
import { ImportFormatError, ImportTooLargeError, type ImportRecord, type RowError } from './import-errors.ts'
import { jsonArrayRecords } from './json-array-records.ts'
import { limitBytes } from './limit-bytes.ts'
import { ndjsonRecords } from './ndjson-records.ts'
import { utf8Text } from './utf8-text.ts'

export type ImportFormat = 'json' | 'ndjson' | 'csv'

export interface ImportLimits {
  maxRows: number
  maxBytes: number
  /** Errors reported at most; reading stops once this many are found. */
  maxErrors: number
  /**
   * Books per batch handed to the store. Small, so that the strings a batch becomes on its way
   * to the store stay out of V8's large-object space, which only a full collection empties.
   */
  batchSize: number
}

export const IMPORT_LIMITS: ImportLimits = { maxRows: 100_000, maxBytes: 32 * 1024 * 1024, maxErrors: 100, batchSize: 100 }

const READERS: Record<ImportFormat, (text: AsyncIterable<string>) => AsyncGenerator<ImportRecord[]>> = {
  json: jsonArrayRecords,
  ndjson: ndjsonRecords,
  csv: csvRecords,
}

/**
 * Reads an import body as it streams in and hands out its books in batches, checked by the
 * rules of `POST /book`. Once a row is found invalid no more batches come (the import will store
 * nothing), but reading goes on to report up to `maxErrors` errors in `errors`. A body over the
 * row or byte limit fails with ImportTooLargeError.
 */
export class BookImport {
  readonly errors: RowError[] = []
  #rows = 0
  readonly #source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>
  readonly #format: ImportFormat
  readonly #limits: ImportLimits

  constructor(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, format: ImportFormat, limits: ImportLimits = IMPORT_LIMITS) {
    this.#source = source
    this.#format = format
    this.#limits = limits
  }

  /** Rows read so far. */
  get rows(): number {
    return this.#rows
  }

  async *batches(): AsyncGenerator<NewBook[]> {
    const { maxRows, maxBytes, maxErrors, batchSize } = this.#limits
    const records = READERS[this.#format](utf8Text(limitBytes(this.#source, maxBytes)))
    let batch: NewBook[] = []
    try {
      for await (const chunk of records) {
        for (const record of chunk) {
          if (++this.#rows > maxRows) throw new ImportTooLargeError(`An import holds at most ${maxRows} books`)
          const checked = 'problem' in record ? { ok: false as const, message: record.problem } : checkBook(record.value)
          if (checked.ok) {
            if (this.errors.length === 0) batch.push(checked.book)
          } else {
            this.errors.push({ row: record.row, message: checked.message })
            batch = []
            if (this.errors.length >= maxErrors) return
          }
        }
        if (batch.length >= batchSize) {
          yield batch
          batch = []
        }
      }
    } catch (err) {
      if (!(err instanceof ImportFormatError)) throw err
      this.errors.push(err.row === undefined ? { message: err.message } : { row: err.row, message: err.message })
      return
    }
    if (this.#rows === 0) {
      this.errors.push({ message: 'The body holds no books' })
      return
    }
    if (batch.length > 0 && this.errors.length === 0) yield batch
  }
}

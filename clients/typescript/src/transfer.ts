/** Import and export of whole files, streamed both ways (docs/api.md#importing-and-exporting-files). */
import { call } from './operations.ts'
import type { Transport } from './transport.ts'
import type { ExportQuery, ImportCheck, ImportResult } from './types.ts'
import type { Progress, UploadBody } from './upload.ts'

export type ImportFormat = 'csv' | 'tsv' | 'ndjson' | 'json'

export const IMPORT_TYPES: Record<ImportFormat, string> = {
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  ndjson: 'application/x-ndjson',
  json: 'application/json',
}

/** A file's format by the end of its name; undefined when the name says nothing. */
export function formatOfName(name: string): ImportFormat | undefined {
  const extension = /\.([a-z]+)$/i.exec(name)?.[1]?.toLowerCase()
  if (extension === 'jsonl') return 'ndjson'
  return extension !== undefined && extension in IMPORT_TYPES ? (extension as ImportFormat) : undefined
}

export interface ImportOptions {
  /** The file's format; by default from its name (a `File`), its type (a `Blob`), or, failing both, the service tells by its first character. */
  format?: ImportFormat | undefined
  /** Store the valid rows and list the others (`invalid=skip`), instead of nothing when any row is invalid. */
  skipInvalid?: boolean | undefined
  /** Leave out the rows that repeat a stored book or an earlier row (`duplicates=skip`). */
  skipDuplicates?: boolean | undefined
  /** The headers to read: `{ year: 'Date Added' }` or `'year:Date Added'` (`columns=`). */
  columns?: string | { title?: string; author?: string; year?: string } | undefined
  /** Hears how much of the file is sent, as it goes. */
  onProgress?: ((progress: Progress) => void) | undefined
  signal?: AbortSignal | undefined
}

function contentType(body: UploadBody, format: ImportFormat | undefined): string | undefined {
  if (format !== undefined) return IMPORT_TYPES[format]
  if (typeof File !== 'undefined' && body instanceof File) {
    const byName = formatOfName(body.name)
    if (byName !== undefined) return IMPORT_TYPES[byName]
  }
  if (body instanceof Blob && Object.values(IMPORT_TYPES).includes(body.type)) return body.type
  return undefined
}

function columnsOf(columns: ImportOptions['columns']): string | undefined {
  if (columns === undefined || typeof columns === 'string') return columns
  return Object.entries(columns)
    .map(([member, header]) => `${member}:${header}`)
    .join(',')
}

function importQuery(options: ImportOptions, dryRun: boolean) {
  return {
    dry_run: dryRun ? 'true' : undefined,
    invalid: options.skipInvalid ? 'skip' : undefined,
    duplicates: options.skipDuplicates ? 'skip' : undefined,
    columns: columnsOf(options.columns),
  }
}

async function upload<T>(transport: Transport, body: UploadBody, options: ImportOptions, dryRun: boolean): Promise<T> {
  const { data } = await call(transport, 'post', '/books/import', {
    query: importQuery(options, dryRun),
    upload: { body, type: contentType(body, options.format), onProgress: options.onProgress },
    idempotent: !dryRun,
    signal: options.signal,
  })
  return data as T
}

export function importBooks(transport: Transport, body: UploadBody, options: ImportOptions): Promise<ImportResult> {
  return upload<ImportResult>(transport, body, options, false)
}

export function checkImport(transport: Transport, body: UploadBody, options: ImportOptions): Promise<ImportCheck> {
  return upload<ImportCheck>(transport, body, options, true)
}

/** The export file as it streams in: CSV by default, or NDJSON. */
export async function exportBooks(transport: Transport, query: ExportQuery, signal?: AbortSignal): Promise<ReadableStream<Uint8Array>> {
  const response = await transport.send({ method: 'GET', path: '/books/export', query, signal })
  return response.body ?? new Blob([]).stream()
}

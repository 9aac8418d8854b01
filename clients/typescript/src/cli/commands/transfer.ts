/** `import FILE` with its check first and a progress bar, and `export` to a file or stdout. */
import { createWriteStream, openAsBlob } from 'node:fs'
import { rename, rm, stat } from 'node:fs/promises'
import { basename } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { ReadableStream as WebReadableStream } from 'node:stream/web'
import { formatOfName, type ImportCheck, type ImportFormat, type ImportOptions, type Progress, type RowError } from '../../index.ts'
import type { Context } from '../context.ts'
import { Interrupted, Refusal } from '../exit.ts'
import { count, size, write } from '../output.ts'
import { progressBar } from '../progress.ts'
import { confirm } from '../prompt.ts'
import { queryOf, type Filters } from './books.ts'

const MOST_ROWS_SHOWN = 20

export interface ImportFlags {
  format?: ImportFormat
  skipInvalid?: boolean
  skipDuplicates?: boolean
  columns?: string
  /** False with `--no-check`. */
  check: boolean
  yes?: boolean
  json?: boolean
}

/** The file as a blob read from disk as it is sent, and again for a retry. */
async function fileBody(file: string): Promise<Blob> {
  try {
    if ((await stat(file)).isDirectory()) throw new Refusal(`cannot import ${file}: it is a folder`)
    return await openAsBlob(file)
  } catch (err) {
    if (err instanceof Refusal) throw err
    const code = (err as NodeJS.ErrnoException).code
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (err as Error).message
    throw new Refusal(`cannot read ${file}: ${reason}`)
  }
}

function rowLines(rows: RowError[], skipped: string): string[] {
  const lines = rows
    .slice(0, MOST_ROWS_SHOWN)
    .map((row) => `  ${row.row === undefined ? 'the file' : `row ${row.row}`}: ${row.message}${skipped}`)
  if (rows.length > MOST_ROWS_SHOWN) lines.push(`  … and more`)
  return lines
}

/** Runs `send` with a progress bar; Ctrl-C says whether the file had been sent whole. */
async function withProgress<T>(
  context: Context,
  label: string,
  send: (onProgress: (progress: Progress) => void) => Promise<T>,
  storing: boolean,
): Promise<T> {
  const bar = progressBar(context.stderr, label, storing ? 'the service is storing it' : 'the service is checking it')
  let last: Progress = { sent: 0, total: undefined }
  let settled = false
  try {
    return await send((progress) => {
      if (settled) return
      last = progress
      bar.update(progress)
    })
  } catch (err) {
    if (!context.signal.aborted || !storing) throw err
    if (last.total !== undefined && last.sent >= last.total) {
      throw new Interrupted('import interrupted after the file was sent: the service may still store it whole; book-catalogue find tells')
    }
    throw new Interrupted('import interrupted before the file was sent whole: nothing was stored')
  } finally {
    settled = true
    bar.stop()
  }
}

/** What the check found, on stderr; a refusal when the import could not succeed as asked. */
function report(context: Context, name: string, check: ImportCheck, flags: ImportFlags): void {
  const { stderr } = context
  const lines = [
    `${name}: ${count(check.importable, 'book')} to import, ${count(check.errors.length, 'invalid row')}${check.errors.length === 100 ? ' or more' : ''}, ${count(check.duplicates.length, 'duplicate')}`,
    ...rowLines(check.errors, flags.skipInvalid ? ' (left out)' : ''),
  ]
  if (check.duplicates.length > 0) {
    lines.push(
      flags.skipDuplicates
        ? `  the ${count(check.duplicates.length, 'duplicate')} will be left out`
        : `  duplicates are stored too; --skip-duplicates leaves them out`,
    )
  }
  stderr.write(`${lines.join('\n')}\n`)
  if (check.errors.some((error) => error.row === undefined)) throw new Refusal('nothing imported: the file cannot be read as it is')
  if (check.errors.length > 0 && !flags.skipInvalid)
    throw new Refusal('nothing imported: fix the rows above, or pass --skip-invalid to import the others')
  if (check.importable === 0) throw new Refusal('nothing imported: the file holds no book')
}

/** `2–6`, or the first and last when the ids are not one run. */
function idRange(ids: number[]): string {
  if (ids.length === 0) return ''
  const first = ids[0]!
  const last = ids.at(-1)!
  if (ids.length === 1) return `: id ${first}`
  return last - first === ids.length - 1 ? `: ids ${first}–${last}` : `: ids ${first} … ${last}`
}

export async function importFile(context: Context, file: string, flags: ImportFlags): Promise<void> {
  const { stderr, stdin, signal } = context
  const body = await fileBody(file)
  const books = context.signedIn().books
  const name = basename(file)
  const options: ImportOptions = {
    format: flags.format ?? formatOfName(file),
    skipInvalid: flags.skipInvalid,
    skipDuplicates: flags.skipDuplicates,
    columns: flags.columns,
    signal,
  }
  if (flags.check) {
    const check = await withProgress(
      context,
      `Checking ${name}`,
      (onProgress) => books.checkImport(body, { ...options, onProgress }),
      false,
    )
    report(context, name, check, flags)
    const asked = stdin.isTTY && stderr.isTTY && !flags.yes
    if (asked && !(await confirm(context, `Import them into ${context.url}?`))) throw new Refusal('nothing imported')
  }
  const result = await withProgress(context, `Importing ${name}`, (onProgress) => books.import(body, { ...options, onProgress }), true)
  if (flags.json) await write(context.stdout, `${JSON.stringify(result)}\n`)
  const lines = [`Imported ${count(result.imported, 'book')} into ${context.url}${idRange(result.ids)}`]
  if (result.errors !== undefined && result.errors.length > 0)
    lines.push(`Left out ${count(result.errors.length, 'invalid row')}:`, ...rowLines(result.errors, ''))
  if (result.duplicates !== undefined && result.duplicates.length > 0)
    lines.push(`Left out ${count(result.duplicates.length, 'duplicate')}`)
  stderr.write(`${lines.join('\n')}\n`)
}

export interface ExportFlags extends Filters {
  format: 'csv' | 'ndjson'
  output?: string
}

export async function exportBooks(context: Context, words: string[], flags: ExportFlags): Promise<void> {
  const stream = await context.signedIn().books.export({ ...queryOf(words, flags), format: flags.format }, { signal: context.signal })
  const source = Readable.fromWeb(stream as WebReadableStream<Uint8Array>)
  if (flags.output === undefined) return pipeline(source, context.stdout, { end: false })
  // Written beside the file and renamed over it once whole: a failed export leaves no half file.
  const partial = `${flags.output}.${process.pid}.part`
  try {
    await pipeline(source, createWriteStream(partial))
    await rename(partial, flags.output)
  } catch (err) {
    await rm(partial, { force: true })
    throw err
  }
  context.stderr.write(`Exported to ${flags.output} (${size((await stat(flags.output)).size)})\n`)
}

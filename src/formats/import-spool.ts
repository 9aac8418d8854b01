import { randomUUID } from 'node:crypto'
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs'
import { open, unlink, type FileHandle } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { once } from 'node:events'
import { finished } from 'node:stream/promises'
import type { CheckedBatch } from './book-import.ts'

/**
 * Bytes buffered on their way to the file, and read from it at a time: enough that the reading
 * of the body rarely waits for the disk, small enough to stay out of V8's large-object space.
 */
const CHUNK = 64 * 1024

/** Errors of a temporary disk that a later import may not meet: a full disk, a quota, an I/O error. */
const FOR_NOW = new Set(['ENOSPC', 'EDQUOT', 'EIO'])
const RETRY_AFTER_SECONDS = '5'

/** The spool cannot be written for now: the import is answered 503, to be tried again later. */
export class SpoolUnavailableError extends Error {
  readonly statusCode = 503
  readonly headers = { 'retry-after': RETRY_AFTER_SECONDS }

  constructor(cause: Error) {
    super('The import cannot be spooled to disk for now', { cause })
    this.name = 'SpoolUnavailableError'
  }
}

function forNow(err: Error): Error {
  return FOR_NOW.has((err as NodeJS.ErrnoException).code ?? '') ? new SpoolUnavailableError(err) : err
}

/**
 * Checked books of an import, kept in a temporary file between reading the body and storing
 * them. Held in memory instead, the books of a large import stayed alive through every
 * collection while the body was parsed, and the process grew by several times the body's size
 * (docs/performance.md).
 *
 * The file is unlinked as soon as it is open: only its descriptor holds it, so it is gone when
 * the import ends however it ends, and when the process dies, nothing is left behind.
 */
export class ImportSpool {
  readonly #file: FileHandle
  readonly #out: WriteStream
  /** Why the file cannot be written, once it cannot (a full disk): the next write throws it. */
  #failure: Error | undefined

  private constructor(file: FileHandle) {
    this.#file = file
    this.#out = createWriteStream('', { fd: file.fd, autoClose: false, highWaterMark: CHUNK })
    this.#out.on('error', (err) => (this.#failure = forNow(err)))
  }

  /** A spool in `dir`; `openFile` stands in for the file system in tests. */
  static async create(dir = tmpdir(), openFile: (path: string) => Promise<FileHandle> = (path) => open(path, 'wx+', 0o600)) {
    const path = join(dir, `book-import-${randomUUID()}`)
    let file: FileHandle
    try {
      file = await openFile(path)
    } catch (err) {
      throw forNow(err as Error)
    }
    await unlink(path).catch(() => {})
    return new ImportSpool(file)
  }

  /** One line each: JSON never holds a raw line break. */
  async write(batch: CheckedBatch): Promise<void> {
    if (this.#failure) throw this.#failure
    if (this.#out.write(`${JSON.stringify(batch)}\n`)) return
    try {
      await once(this.#out, 'drain')
    } catch (err) {
      throw forNow(err as Error)
    }
  }

  /** The batches in the order they were written, with the rows their books came from; from the start each time. */
  async *batches(): AsyncGenerator<CheckedBatch> {
    this.#out.end()
    await finished(this.#out).catch((err: Error) => {
      throw forNow(err)
    })
    // Read as the batches are stored: readline would run ahead and hold the whole file as lines
    // while a PostgreSQL insert waits for its answer.
    let rest = ''
    const input = createReadStream('', { fd: this.#file.fd, start: 0, autoClose: false, encoding: 'utf8', highWaterMark: CHUNK })
    for await (const text of input) {
      const lines = (rest + (text as string)).split('\n')
      rest = lines.pop()!
      for (const line of lines) yield JSON.parse(line) as CheckedBatch
    }
  }

  async remove(): Promise<void> {
    // Ended, not destroyed, so that no write under way fails; a failure reaches the import through write or batches.
    this.#out.end()
    await finished(this.#out).catch(() => {})
    await this.#file.close()
  }
}

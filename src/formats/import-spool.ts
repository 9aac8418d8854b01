import { randomUUID } from 'node:crypto'
import { readSync, writeSync } from 'node:fs'
import { open, unlink, type FileHandle } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { StringDecoder } from 'node:string_decoder'
import type { CheckedBatch } from './book-import.ts'

/**
 * Characters gathered before they are written, and bytes read at a time: few system calls, and
 * small enough to stay out of V8's large-object space.
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
  /** Lines not yet written: they go to the file together once they make a chunk. */
  #pending: string[] = []
  #pendingLength = 0
  /** Why the file cannot be written, once it cannot (a full disk): every later write throws it. */
  #failure: Error | undefined

  private constructor(file: FileHandle) {
    this.#file = file
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
    const line = `${JSON.stringify(batch)}\n`
    this.#pending.push(line)
    this.#pendingLength += line.length
    if (this.#pendingLength >= CHUNK) this.#flush()
  }

  /** The batches in the order they were written, with the rows their books came from; from the start each time. */
  async *batches(): AsyncGenerator<CheckedBatch> {
    this.#flush()
    // Read a chunk at a time as the batches are stored, never the whole file at once.
    const decoder = new StringDecoder('utf8')
    const buffer = Buffer.allocUnsafe(CHUNK)
    let rest = ''
    for (let position = 0; ;) {
      const read = this.#io(() => readSync(this.#file.fd, buffer, 0, CHUNK, position))
      if (read === 0) break
      position += read
      const lines = (rest + decoder.write(buffer.subarray(0, read))).split('\n')
      rest = lines.pop()!
      for (const line of lines) yield JSON.parse(line) as CheckedBatch
    }
  }

  async remove(): Promise<void> {
    this.#pending = []
    await this.#file.close()
  }

  #flush(): void {
    if (this.#pendingLength === 0) return
    const text = this.#pending.join('')
    this.#pending = []
    this.#pendingLength = 0
    this.#io(() => writeSync(this.#file.fd, text))
  }

  /**
   * A read or write of the file, done at once: the file is a few MiB that the page cache holds,
   * so a call takes microseconds, where handing each chunk to the thread pool made the import
   * wait for a thread, and then for its own turn, on a busy machine (docs/performance-log.md).
   */
  #io<T>(call: () => T): T {
    if (this.#failure) throw this.#failure
    try {
      return call()
    } catch (err) {
      this.#failure = forNow(err as Error)
      throw this.#failure
    }
  }
}

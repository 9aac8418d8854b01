import { randomUUID } from 'node:crypto'
import { readSync, writeSync } from 'node:fs'
import { open, unlink, type FileHandle } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { StringDecoder } from 'node:string_decoder'
import type { CheckedBatch } from './book-import.ts'
import { limitBytes } from './limit-bytes.ts'

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

/** Opens a file of its own in `dir` for a spool; `openFile` stands in for the file system in tests. */
type OpenFile = (path: string) => Promise<FileHandle>

const openNew: OpenFile = (path) => open(path, 'wx+', 0o600)

/**
 * A temporary file an import keeps between receiving, reading and storing. It is unlinked as
 * soon as it is open: only its descriptor holds it, so it is gone when the import ends however
 * it ends, and when the process dies, nothing is left behind.
 */
abstract class Spool {
  readonly #file: FileHandle
  /** Why the file cannot be written, once it cannot (a full disk): every later write throws it. */
  #failure: Error | undefined

  protected constructor(file: FileHandle) {
    this.#file = file
  }

  protected static async openIn(dir: string, openFile: OpenFile): Promise<FileHandle> {
    const path = join(dir, `book-import-${randomUUID()}`)
    let file: FileHandle
    try {
      file = await openFile(path)
    } catch (err) {
      throw forNow(err as Error)
    }
    await unlink(path).catch(() => {})
    return file
  }

  async remove(): Promise<void> {
    await this.#file.close()
  }

  protected append(data: string | Uint8Array): void {
    const fd = this.#file.fd
    // Two overloads of writeSync: text is encoded as it is written, without a copy of its own.
    this.#io(() => (typeof data === 'string' ? writeSync(fd, data) : writeSync(fd, data)))
  }

  /** What was written, from the start, a chunk at a time as it is asked for: never the whole file at once. */
  protected *chunks(): Generator<Buffer> {
    for (let position = 0; ;) {
      const buffer = Buffer.allocUnsafe(CHUNK)
      const read = this.#io(() => readSync(this.#file.fd, buffer, 0, CHUNK, position))
      if (read === 0) return
      position += read
      yield buffer.subarray(0, read)
    }
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

/**
 * Checked books of an import, kept between reading the body and storing them. Held in memory
 * instead, the books of a large import stayed alive through every collection while the body was
 * parsed, and the process grew by several times the body's size (docs/performance.md).
 */
export class ImportSpool extends Spool {
  /** Lines not yet written: they go to the file together once they make a chunk. */
  #pending: string[] = []
  #pendingLength = 0

  static async create(dir = tmpdir(), openFile = openNew): Promise<ImportSpool> {
    return new ImportSpool(await Spool.openIn(dir, openFile))
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
    const decoder = new StringDecoder('utf8')
    let rest = ''
    for (const chunk of this.chunks()) {
      const lines = (rest + decoder.write(chunk)).split('\n')
      rest = lines.pop()!
      for (const line of lines) yield JSON.parse(line) as CheckedBatch
    }
  }

  override async remove(): Promise<void> {
    this.#pending = []
    await super.remove()
  }

  #flush(): void {
    if (this.#pendingLength === 0) return
    const text = this.#pending.join('')
    this.#pending = []
    this.#pendingLength = 0
    this.append(text)
  }
}

/**
 * The body of an import as it arrived, received in full before a transaction opens for it: a
 * client that sends slowly then holds nothing of the store, while the store may take the books
 * as the file is read (Store.storesWhileReading).
 */
export class BodySpool extends Spool {
  /**
   * Writes `source` to a new spool as it arrives; fails as soon as more than `maxBytes` have
   * (ImportTooLargeError), and then, as on any failure, leaves no file behind.
   */
  static async receive(source: AsyncIterable<Uint8Array>, maxBytes: number, dir = tmpdir(), openFile = openNew): Promise<BodySpool> {
    const spool = new BodySpool(await Spool.openIn(dir, openFile))
    try {
      for await (const chunk of limitBytes(source, maxBytes)) spool.append(chunk)
      return spool
    } catch (err) {
      await spool.remove()
      throw err
    }
  }

  /** The body's bytes, from the start, a chunk at a time. */
  bytes(): Iterable<Uint8Array> {
    return this.chunks()
  }
}

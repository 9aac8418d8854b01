import { createReadStream, createWriteStream, type WriteStream } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
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

/**
 * Checked books of an import, kept in a temporary file between reading the body and storing
 * them. Held in memory instead, the books of a 32 MiB import stayed alive through every
 * collection while the body was parsed, and the process grew by about 250 MiB.
 */
export class ImportSpool {
  readonly #dir: string
  readonly #path: string
  readonly #out: WriteStream
  /** Why the file cannot be written, once it cannot (a full disk): the next write throws it. */
  #failure: Error | undefined

  private constructor(dir: string) {
    this.#dir = dir
    this.#path = join(dir, 'books.ndjson')
    this.#out = createWriteStream(this.#path, { highWaterMark: CHUNK })
    this.#out.on('error', (err) => (this.#failure = err))
  }

  static async create(): Promise<ImportSpool> {
    return new ImportSpool(await mkdtemp(join(tmpdir(), 'book-import-')))
  }

  /** One line each: JSON never holds a raw line break. */
  async write(batch: CheckedBatch): Promise<void> {
    if (this.#failure) throw this.#failure
    if (!this.#out.write(`${JSON.stringify(batch)}\n`)) await once(this.#out, 'drain')
  }

  /** The batches in the order they were written, with the rows their books came from. */
  async *batches(): AsyncGenerator<CheckedBatch> {
    this.#out.end()
    await finished(this.#out)
    // Read as the batches are stored: readline would run ahead and hold the whole file as lines
    // while a PostgreSQL insert waits for its answer.
    let rest = ''
    for await (const text of createReadStream(this.#path, { encoding: 'utf8', highWaterMark: CHUNK })) {
      const lines = (rest + (text as string)).split('\n')
      rest = lines.pop()!
      for (const line of lines) yield JSON.parse(line) as CheckedBatch
    }
  }

  async remove(): Promise<void> {
    // Ended, not destroyed, so that no write under way fails; a failure reaches the import through write or batches.
    this.#out.end()
    await finished(this.#out).catch(() => {})
    await rm(this.#dir, { recursive: true, force: true })
  }
}

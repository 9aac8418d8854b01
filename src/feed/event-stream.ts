import type { ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import type { Change } from '../books/change.ts'
import type { ChangeBatch, ChangeLog, ChangeSource, Subscriber } from './change-source.ts'
import { changeEvent, KEEP_ALIVE, opening, RETRY } from './event-text.ts'

/** Changes read from the log at once by a stream that catches up by itself. */
export const CATCH_UP_PAGE = 500
/** Events taken at once from what the source keeps, by a stream that catches up. */
const CATCH_UP_BYTES = 64 * 1024

export interface EventStreamOptions {
  log: ChangeLog
  source: ChangeSource
  /** The seq after which its changes start. */
  after: number
  /** The response it is written to, through `readable`: what its socket still holds counts too. */
  response: ServerResponse
  /**
   * Most bytes that may wait for the client. A stream that is given more than a quarter of it
   * at once stops taking the source's batches and catches up at its client's pace instead.
   */
  maxHeldBytes: number
  /** Called once, when the stream ends, however it happens. */
  onEnd: () => void
  onError: (err: unknown) => void
}

/**
 * One client's stream of changes, as Server-Sent Events written to `readable`, which the
 * response sends. It follows the source, taking the batches every stream shares, while its client
 * keeps up. Behind (as it starts, or when its client reads slower than changes come), it catches
 * up by itself, only as fast as its client reads: from what the source still holds, or else a page
 * at a time from the log. What waits for the client stays below `maxHeldBytes`; a client that
 * stops reading altogether is cut by the connection's idle timeout.
 */
export class EventStream implements Subscriber {
  readonly readable: Readable
  readonly #log: ChangeLog
  readonly #source: ChangeSource
  readonly #response: ServerResponse
  readonly #followLimit: number
  readonly #onEnd: () => void
  readonly #onError: (err: unknown) => void
  #position: number
  /** Resolves when the client has taken what was written and wants more. */
  #wanted: PromiseWithResolvers<void> | undefined
  #ended = false

  constructor({ log, source, after, response, maxHeldBytes, onEnd, onError }: EventStreamOptions) {
    this.#log = log
    this.#source = source
    this.#position = after
    this.#response = response
    this.#followLimit = Math.floor(maxHeldBytes / 4)
    this.#onEnd = onEnd
    this.#onError = onError
    this.readable = new Readable({
      read: () => this.#wanted?.resolve(),
      // The response closed: the client left, or its connection was cut.
      destroy: (err, callback) => {
        this.#finish()
        callback(err)
      },
    })
  }

  get position(): number {
    return this.#position
  }

  /** Opens with the changes already read after the start, then catches up by itself and follows the source. */
  start(first: Change[]): void {
    this.readable.push(opening(this.#position))
    void this.#catchUp(first)
  }

  take(batch: ChangeBatch): void {
    if (this.#ended || batch.upTo <= this.#position) return
    const first = batch.after >= this.#position ? 0 : batch.seqs.findIndex((seq) => seq > this.#position)
    const text = first === 0 ? batch.text : batch.text.subarray(batch.starts[first])
    // Changes between its position and the batch went by, or its client is not keeping up: it catches up by itself.
    if (batch.after > this.#position || this.#held() + text.length > this.#followLimit) {
      this.#source.unsubscribe(this)
      void this.#catchUp()
      return
    }
    this.readable.push(text)
    this.#position = batch.upTo
  }

  /** A comment line, so that the client and the proxies between see the stream is alive; not while much waits for it. */
  keepAlive(): void {
    if (!this.#ended && this.#held() + KEEP_ALIVE.length <= this.#followLimit) this.readable.push(KEEP_ALIVE)
  }

  /** Ends the stream after `last`: a `retry:` line, or a comment that says why. */
  end(last: Buffer): void {
    if (this.#ended) return
    this.readable.push(last)
    this.readable.push(null)
    this.#finish()
  }

  /** Ends the stream for the instance's sake: the client reconnects after the `retry:` line, elsewhere if need be. */
  retry(): void {
    this.end(RETRY)
  }

  /** What waits for the client: in the stream, in the response and in its socket. */
  get waitingBytes(): number {
    return this.#held()
  }

  #held(): number {
    return this.readable.readableLength + this.#response.writableLength
  }

  /** Writes `bytes`, which take it to `upTo`, and waits while the client has enough to read. */
  async #write(bytes: Buffer, upTo: number): Promise<void> {
    const more = this.readable.push(bytes)
    this.#position = upTo
    if (!more) await this.#drained()
  }

  /**
   * Writes the changes after the position as fast as the client reads them: from what the source
   * holds when it can, from the log when it must. Once nothing newer is to be had, it follows the source.
   */
  async #catchUp(first: Change[] = []): Promise<void> {
    try {
      for (const change of first) {
        if (this.#ended) return
        await this.#write(Buffer.from(changeEvent(change)), change.seq)
      }
      while (!this.#ended) {
        const held = this.#source.eventsAfter(this.#position, CATCH_UP_BYTES)
        if (held?.text.length === 0) break
        if (held !== undefined) {
          await this.#write(held.text, held.upTo)
          continue
        }
        const page = await this.#log.changesAfter(this.#position, CATCH_UP_PAGE)
        for (const change of page) {
          if (this.#ended) return
          await this.#write(Buffer.from(changeEvent(change)), change.seq)
        }
        // Nothing newer in the log a moment ago, and the source idle: it starts from here.
        if (page.length < CATCH_UP_PAGE && this.#source.position === undefined) break
      }
      if (!this.#ended) this.#source.subscribe(this)
    } catch (err) {
      // The store failed: the client comes back after the retry line and resumes from its last event.
      this.#onError(err)
      this.retry()
    }
  }

  /** Resolves once the client has taken what waits for it, or the stream has ended. */
  #drained(): Promise<void> {
    this.#wanted = Promise.withResolvers()
    return this.#wanted.promise
  }

  #finish(): void {
    if (this.#ended) return
    this.#ended = true
    this.#source.unsubscribe(this)
    this.#wanted?.resolve()
    this.#onEnd()
  }
}

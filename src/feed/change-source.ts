import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Change } from '../books/change.ts'
import type { ChangeSignals } from '../store/store.ts'
import { changeEvent } from './event-text.ts'

/** The changes read from the log at once, handed out together. */
export interface ChangeBatch {
  /** The batch holds every change after this seq, up to `upTo`. */
  after: number
  upTo: number
  /** The seq of each change, oldest first. */
  seqs: number[]
  /** Where each change's event starts in `text`. */
  starts: number[]
  /** The events of every change, written once for every stream that takes them. */
  text: Buffer
}

/** A stream that follows the source. */
export interface Subscriber {
  /** The seq up to which it was given every change. */
  readonly position: number
  take(batch: ChangeBatch): void
}

/** Where the changes are read. */
export interface ChangeLog {
  changesAfter(seq: number, limit: number): Promise<Change[]>
}

export interface ChangeSourceOptions {
  log: ChangeLog
  /** Word from the store that changes committed; without it, the log is read every `pollMs`. */
  signals?: ChangeSignals | undefined
  /** How often the log is read when no word comes: the only way without signals, a fallback with them. */
  pollMs: number
  /** How long the word of commits is still listened for once the last stream has gone (LISTEN_LINGER_MS by default). */
  lingerMs?: number
  onError: (err: unknown) => void
}

/** Changes read from the log in one query. */
export const BATCH = 1000
/**
 * How long the source keeps listening for the word of commits, on a connection of the store's
 * own, once no stream follows it: a page that reconnects finds it listening still, and a process
 * whose streams have all gone gives the connection back.
 */
const LISTEN_LINGER_MS = 60_000
/** How much of the newest events the source keeps for streams that fell behind, so that they need not ask the store. */
const RECENT_BYTES = 8 * 1024 * 1024

/** Events taken from what the source keeps: their text, and the seq of the last of them. */
export interface HeldEvents {
  text: Buffer
  upTo: number
}

/** A batch of `changes`, the ones after `after`, with their events written out. */
export function batchOf(after: number, changes: Change[]): ChangeBatch {
  const events = changes.map((change) => Buffer.from(changeEvent(change)))
  const starts: number[] = []
  let offset = 0
  for (const event of events) {
    starts.push(offset)
    offset += event.length
  }
  return {
    after,
    upTo: changes.at(-1)?.seq ?? after,
    seqs: changes.map((change) => change.seq),
    starts,
    text: Buffer.concat(events, offset),
  }
}

/**
 * The one source of changes of the process: it reads the log once per word that changes
 * committed (or per poll), whoever made them, on this instance or another, and hands each batch to
 * every stream that follows it, so that no stream asks the store for a change. It reads only
 * while streams follow it: the first one to join an idle source says where it starts.
 */
export class ChangeSource {
  readonly #log: ChangeLog
  readonly #signals: ChangeSignals | undefined
  readonly #pollMs: number
  readonly #onError: (err: unknown) => void
  readonly #lingerMs: number
  readonly #subscribers = new Set<Subscriber>()
  /** Every change up to this seq was handed out to the subscribers; meaningless while there are none. */
  #position = 0
  /** The newest batches, oldest first, each starting where the one before ends, at most about RECENT_BYTES. */
  #recent: ChangeBatch[] = []
  #recentBytes = 0
  #reading: Promise<void> | undefined
  #again = false
  #poll: NodeJS.Timeout | undefined
  #listening: Promise<(() => Promise<void>) | undefined> | undefined
  /** Ends the listening, once the last stream has been gone for `lingerMs`. */
  #linger: NodeJS.Timeout | undefined
  /** Listening that was ended, until it has. */
  #unlistening: Promise<void> | undefined
  #closed = false

  constructor({ log, signals, pollMs, lingerMs = LISTEN_LINGER_MS, onError }: ChangeSourceOptions) {
    this.#log = log
    this.#signals = signals
    this.#pollMs = pollMs
    this.#lingerMs = lingerMs
    this.#onError = onError
  }

  /** Up to where every change was handed out, while streams follow it; undefined while none does. */
  get position(): number | undefined {
    return this.#subscribers.size > 0 ? this.#position : undefined
  }

  /**
   * Hands every batch from now on to `subscriber`, which must have every change up to its position,
   * and at least up to this source's: the batches it is given may start before its position.
   */
  subscribe(subscriber: Subscriber): void {
    if (this.#closed) return
    const idle = this.#subscribers.size === 0
    if (idle) {
      this.#position = subscriber.position
      this.#recent = []
      this.#recentBytes = 0
      this.#poll = setInterval(() => this.signal(), this.#pollMs).unref()
    }
    this.#subscribers.add(subscriber)
    clearTimeout(this.#linger)
    this.#linger = undefined
    // Listening anew reads the log once it listens (see #listen): nothing committed meanwhile is missed.
    if (this.#listening === undefined) this.#listening = this.#listen()
    // The word of commits made since the subscriber read the log reached an idle source, which
    // let it pass: the log is read now rather than at the next poll.
    else if (idle) this.signal()
  }

  unsubscribe(subscriber: Subscriber): void {
    if (!this.#subscribers.delete(subscriber) || this.#subscribers.size > 0) return
    clearInterval(this.#poll)
    this.#poll = undefined
    if (this.#listening !== undefined) this.#linger = setTimeout(() => this.#unlisten(), this.#lingerMs).unref()
  }

  /**
   * The events after `position` that the source still holds, about `maxBytes` of them at most
   * (whole events, one at least): empty when it has none newer; undefined when some change after
   * `position` is no longer held, or the source is idle, and the log must be read instead.
   */
  eventsAfter(position: number, maxBytes: number): HeldEvents | undefined {
    if (this.#subscribers.size === 0) return undefined
    if (position >= this.#position) return { text: Buffer.alloc(0), upTo: position }
    const batch = this.#recent.find((held) => held.upTo > position)
    if (batch === undefined || batch.after > position) return undefined
    const first = batch.seqs.findIndex((seq) => seq > position)
    const endOf = (event: number) => batch.starts[event + 1] ?? batch.text.length
    const start = batch.starts[first]!
    // The events that fit, and one at least, however long.
    let last = first
    while (last + 1 < batch.seqs.length && endOf(last + 1) - start <= maxBytes) last++
    return { text: batch.text.subarray(start, endOf(last)), upTo: batch.seqs[last]! }
  }

  /** Word that changes may have committed: the log is read, once for every subscriber, and once more if word came meanwhile. */
  signal(): void {
    if (this.#closed || this.#subscribers.size === 0) return
    if (this.#reading !== undefined) {
      this.#again = true
      return
    }
    this.#reading = this.#read().finally(() => (this.#reading = undefined))
  }

  async close(): Promise<void> {
    this.#closed = true
    this.#subscribers.clear()
    clearInterval(this.#poll)
    clearTimeout(this.#linger)
    await this.#reading
    this.#unlisten()
    await this.#unlistening
  }

  #keep(batch: ChangeBatch): void {
    this.#recent.push(batch)
    this.#recentBytes += batch.text.length
    while (this.#recent.length > 1 && this.#recentBytes > RECENT_BYTES) this.#recentBytes -= this.#recent.shift()!.text.length
  }

  #unlisten(): void {
    const listening = this.#listening
    this.#listening = undefined
    this.#linger = undefined
    if (listening === undefined) return
    const unlistening: Promise<void> = Promise.all([this.#unlistening, listening.then((stop) => stop?.())])
      .then(() => undefined, this.#onError)
      .finally(() => {
        if (this.#unlistening === unlistening) this.#unlistening = undefined
      })
    this.#unlistening = unlistening
  }

  async #listen(): Promise<(() => Promise<void>) | undefined> {
    if (this.#signals === undefined) return undefined
    const stop = await this.#signals.listen(() => this.signal(), this.#onError)
    // Commits made before the first word was heard are read now.
    this.signal()
    return stop
  }

  async #read(): Promise<void> {
    try {
      do {
        this.#again = false
        if (this.#subscribers.size === 0) return
        const after = this.#position
        const changes = await this.#log.changesAfter(after, BATCH)
        // Every subscriber left and a new one came meanwhile, with a position of its own: read again from there.
        if (this.#position !== after) {
          this.#again = true
          continue
        }
        if (changes.length === 0) continue
        const batch = batchOf(after, changes)
        this.#position = batch.upTo
        this.#keep(batch)
        for (const subscriber of [...this.#subscribers]) subscriber.take(batch)
        if (changes.length === BATCH) {
          this.#again = true
          // The streams write what they were given before the next batch is read.
          await nextTurn()
        }
      } while (this.#again && !this.#closed)
    } catch (err) {
      // Read again at the next word or poll: the subscribers wait meanwhile, missing nothing.
      this.#onError(err)
    }
  }
}

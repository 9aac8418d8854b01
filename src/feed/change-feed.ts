import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { AccountDirectory } from '../accounts/directory.ts'
import type { Change } from '../books/change.ts'
import { Refusal } from '../errors.ts'
import type { Lifecycle } from '../lifecycle.ts'
import type { Metrics } from '../observability/metrics.ts'
import type { ChangeSignals } from '../store/store.ts'
import { ChangeSource, type ChangeLog } from './change-source.ts'
import { CATCH_UP_PAGE, EventStream } from './event-stream.ts'
import { RETRY } from './event-text.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** The change streams of this process, and the one source they follow. */
    changeFeed: ChangeFeed
  }
}

/** A client is told at least this often that its stream is alive. */
export const KEEP_ALIVE_MS = 15_000
/** How often the log is read where the store gives no word of commits (SQLite): changes reach the streams within about this. */
const POLL_MS = 50
/** How often the log is read anyway where the store gives word (PostgreSQL), in case the word went missing. */
const FALLBACK_POLL_MS = 1000
/** Most that may wait for one client (see EventStream). */
const MAX_HELD_BYTES = 1024 * 1024
/** Seconds a client refused for want of a free stream should wait before asking again. */
const STREAMS_RETRY_AFTER_SECONDS = 5
/** setTimeout's longest wait: a key expiring later is checked again then. */
const LONGEST_TIMER_MS = 2 ** 31 - 1

export interface FeedSettings {
  /** Streams this process holds open at once; more get 503. */
  maxStreams: number
  /** How often each stream gets a comment line. */
  keepAliveMs: number
  /** How often the log is read without word from the store; by default as the engine needs. */
  pollMs?: number | undefined
  /** Most that may wait for one client (see EventStream). */
  maxHeldBytes?: number
}

export interface FeedOptions extends FeedSettings {
  log: ChangeLog & { newestChange(): Promise<number> }
  signals: ChangeSignals | undefined
  directory: Pick<AccountDirectory, 'onChange'>
  lifecycle: Pick<Lifecycle, 'draining' | 'stopRequested'>
}

/** An open stream, with what ends it besides its client. */
interface Open {
  stream: EventStream
  request: FastifyRequest
  expiry: NodeJS.Timeout | undefined
}

/** The answer to a stream asked for while the instance drains: come back, elsewhere. */
const GO_ELSEWHERE = RETRY.toString()

/**
 * The change streams of one process (docs/api.md#following-changes): at most `maxStreams` at
 * once, each one's client told it is alive every `keepAliveMs`, each ended when the token or key
 * it was opened with expires or is revoked, and all of them ended with a `retry:` line, at once,
 * when the instance starts draining or closes, so that none holds up a shutdown.
 */
export class ChangeFeed {
  readonly #log: FeedOptions['log']
  readonly #source: ChangeSource
  readonly #maxStreams: number
  readonly #maxHeldBytes: number
  readonly #open = new Set<Open>()
  #reserved = 0
  #ending = false
  readonly #keepAlive: NodeJS.Timeout
  readonly #stopWatchingAccounts: () => void

  constructor(options: FeedOptions, onError: (err: unknown) => void) {
    this.#log = options.log
    this.#maxStreams = options.maxStreams
    this.#maxHeldBytes = options.maxHeldBytes ?? MAX_HELD_BYTES
    this.#source = new ChangeSource({
      log: options.log,
      signals: options.signals,
      pollMs: options.pollMs ?? (options.signals === undefined ? POLL_MS : FALLBACK_POLL_MS),
      onError,
    })
    this.#keepAlive = setInterval(() => {
      for (const { stream } of this.#open) stream.keepAlive()
    }, options.keepAliveMs).unref()
    this.#stopWatchingAccounts = options.directory.onChange(() => {
      for (const open of this.#open) if (!open.request.credential.stands()) this.#endFor(open, 'revoked')
    })
    void options.lifecycle.stopRequested.then(() => this.#endAll())
    if (options.lifecycle.draining) this.#ending = true
  }

  /** Streams open now. */
  get size(): number {
    return this.#open.size
  }

  /** What waits for the clients of the open streams: all together, and for the one with the most. */
  waiting(): { bytes: number; most: number } {
    let bytes = 0
    let most = 0
    for (const { stream } of this.#open) {
      const waiting = stream.waitingBytes
      bytes += waiting
      most = Math.max(most, waiting)
    }
    return { bytes, most }
  }

  /**
   * Answers `reply` with the stream of every change after `from` (`latest`: after the newest),
   * once the first of them are read: until then, a failure is an ordinary answer (503 when the
   * store is unavailable, or when `maxStreams` are open).
   */
  async open(request: FastifyRequest, reply: FastifyReply, from: number | 'latest'): Promise<FastifyReply> {
    // HEAD asks for the headers alone: no stream is opened for it.
    if (request.method === 'HEAD') return this.#eventStream(reply).send()
    if (this.#ending) return this.#eventStream(reply).send(GO_ELSEWHERE)
    if (this.#open.size + this.#reserved >= this.#maxStreams) {
      throw new Refusal(503, 'Service unavailable', { 'retry-after': String(STREAMS_RETRY_AFTER_SECONDS) })
    }
    this.#reserved++
    let after: number
    let first: Change[]
    try {
      after = from === 'latest' ? await this.#log.newestChange() : from
      first = await this.#log.changesAfter(after, CATCH_UP_PAGE)
    } finally {
      this.#reserved--
    }
    if (this.#ending) return this.#eventStream(reply).send(GO_ELSEWHERE)
    const stream = new EventStream({
      log: this.#log,
      source: this.#source,
      after,
      response: reply.raw,
      maxHeldBytes: this.#maxHeldBytes,
      onEnd: () => {
        this.#open.delete(open)
        clearTimeout(open.expiry)
      },
      onError: (err) => request.log.warn({ err }, 'change stream could not read the changes: it ends, and its client resumes'),
    })
    const open: Open = { stream, request, expiry: undefined }
    this.#open.add(open)
    this.#endAtExpiry(open)
    stream.start(first)
    return this.#eventStream(reply).send(stream.readable)
  }

  /** `reply` as the start of a stream of events, which no proxy between may hold back (nginx buffers unless told). */
  #eventStream(reply: FastifyReply): FastifyReply {
    return reply.type('text/event-stream').header('x-accel-buffering', 'no')
  }

  /** Ends every stream and stops the source: the process closes. */
  async close(): Promise<void> {
    this.#endAll()
    clearInterval(this.#keepAlive)
    this.#stopWatchingAccounts()
    await this.#source.close()
  }

  /** From now on every stream ends with a `retry:` line at once, and each new one as it starts. */
  #endAll(): void {
    this.#ending = true
    for (const { stream } of this.#open) stream.retry()
  }

  /** Ends the stream when its token or key expires; a key that expires beyond a timer's reach is looked at again then. */
  #endAtExpiry(open: Open): void {
    const { expiresAt } = open.request.credential
    if (expiresAt === undefined) return
    open.expiry = setTimeout(
      () => (Date.now() >= expiresAt ? this.#endFor(open, 'expired') : this.#endAtExpiry(open)),
      Math.min(Math.max(0, expiresAt - Date.now()), LONGEST_TIMER_MS),
    ).unref()
  }

  #endFor(open: Open, why: 'expired' | 'revoked'): void {
    open.request.log.info({ why }, 'change stream ended: its token or key is no longer accepted')
    open.stream.end(Buffer.from(`: the token or key is ${why === 'expired' ? 'expired' : 'no longer accepted'}\n\n`))
  }
}

/** The process's one change feed, as `app.changeFeed`: its streams end before the app closes. */
export const changeFeed = fp<FeedOptions & { metrics: Pick<Metrics, 'watchStreams'> }>(
  async (app, { metrics, ...options }) => {
    const feed = new ChangeFeed(options, (err) => app.log.warn({ err }, 'Reading the changes failed; they are read again shortly'))
    metrics.watchStreams(() => ({ open: feed.size, waitingBytes: feed.waiting().bytes }))
    app.decorate('changeFeed', feed)
    app.addHook('preClose', () => feed.close())
  },
  { name: 'change-feed' },
)

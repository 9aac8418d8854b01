import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import type { ChangeSignals } from '../store.ts'
import { withDeadline } from './connections.ts'
import { APPLICATION_NAME } from './migrate.ts'

/** The channel that the trigger of migration 021 notifies, with the schema's name as the payload. */
const CHANNEL = 'book_changes'
/** How long to wait before listening again once the connection was lost. */
const RECONNECT_MS = 1000
/**
 * How often the listening connection is asked whether it still answers. A connection that a
 * stalled server or a lost route left open and silent hears nothing, and says nothing of it.
 */
const CHECK_MS = 10_000

export interface SignalOptions {
  url: string
  /** Also how long a statement of the listening connection may wait for its answer. */
  connectTimeoutMs: number
  checkMs?: number
}

/**
 * PostgreSQL's LISTEN, on a connection of its own beside the pool: each commit that numbers
 * changes notifies the channel (migration 021), on whichever instance it ran. Notifications for
 * other schemas of the database are left out. A lost connection, or one that leaves a statement
 * unanswered, is opened again after a second, and the listener told once it is back, as commits
 * meanwhile went unheard.
 */
export class PostgresChangeSignals implements ChangeSignals {
  readonly #options: SignalOptions

  constructor(options: SignalOptions) {
    this.#options = options
  }

  async listen(signal: () => void, onError: (err: unknown) => void): Promise<() => Promise<void>> {
    let stopped = false
    let client: pg.Client | undefined
    let lost = Promise.withResolvers<void>()

    const { connectTimeoutMs, checkMs = CHECK_MS } = this.#options
    const connect = async () => {
      const opened = new pg.Client({
        connectionString: this.#options.url,
        connectionTimeoutMillis: connectTimeoutMs,
        keepAlive: true,
        application_name: APPLICATION_NAME,
      })
      opened.on('error', (err) => {
        onError(err)
        lost.resolve()
      })
      opened.on('end', () => lost.resolve())
      // Ending a client whose statement is under way closes its socket at once.
      const ask = <R extends pg.QueryResultRow>(text: string) => withDeadline(opened.query<R>(text), connectTimeoutMs)
      try {
        await opened.connect()
        const { rows } = await ask<{ schema: string }>('SELECT current_schema() AS schema')
        const schema = rows[0]!.schema
        opened.on('notification', (message) => {
          if (message.channel === CHANNEL && message.payload === schema) signal()
        })
        await ask(`LISTEN ${CHANNEL}`)
      } catch (err) {
        await opened.end().catch(() => {})
        throw err
      }
      // One question at a time: a silent connection is ended when its question's time is up, and
      // a statement sent meanwhile would only wait in the client's queue behind it.
      let asking = false
      const check = setInterval(() => {
        if (stopped) return clearInterval(check)
        if (asking) return
        asking = true
        ask('SELECT 1')
          .catch((err: unknown) => {
            onError(err)
            void opened.end().catch(() => {})
          })
          .finally(() => (asking = false))
      }, checkMs).unref()
      opened.on('end', () => clearInterval(check))
      return opened
    }

    const keepListening = async () => {
      while (!stopped) {
        await lost.promise
        client = undefined
        if (stopped) return
        await sleep(RECONNECT_MS)
        if (stopped) return
        lost = Promise.withResolvers()
        try {
          client = await connect()
          if (stopped) await client.end()
          else signal()
        } catch (err) {
          onError(err)
          lost.resolve()
        }
      }
    }

    try {
      client = await connect()
    } catch (err) {
      onError(err)
      lost.resolve()
    }
    void keepListening()
    return async () => {
      stopped = true
      lost.resolve()
      // A silent server would never see the connection out: the stop waits no longer than for a statement.
      if (client !== undefined) await withDeadline(client.end(), connectTimeoutMs).catch(() => {})
    }
  }
}

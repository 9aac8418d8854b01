import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import type { ChangeSignals } from '../store.ts'
import { APPLICATION_NAME } from './migrate.ts'

/** The channel that the trigger of migration 021 notifies, with the schema's name as the payload. */
const CHANNEL = 'book_changes'
/** How long to wait before listening again once the connection was lost. */
const RECONNECT_MS = 1000

export interface SignalOptions {
  url: string
  connectTimeoutMs: number
}

/**
 * PostgreSQL's LISTEN, on a connection of its own beside the pool: each commit that numbers
 * changes notifies the channel (migration 021), on whichever instance it ran. Notifications for
 * other schemas of the database are left out. A lost connection is opened again after a second,
 * and the listener told once it is back, as commits meanwhile went unheard.
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

    const connect = async () => {
      const opened = new pg.Client({
        connectionString: this.#options.url,
        connectionTimeoutMillis: this.#options.connectTimeoutMs,
        keepAlive: true,
        application_name: APPLICATION_NAME,
      })
      opened.on('error', (err) => {
        onError(err)
        lost.resolve()
      })
      opened.on('end', () => lost.resolve())
      try {
        await opened.connect()
        const { rows } = await opened.query<{ schema: string }>('SELECT current_schema() AS schema')
        const schema = rows[0]!.schema
        opened.on('notification', (message) => {
          if (message.channel === CHANNEL && message.payload === schema) signal()
        })
        await opened.query(`LISTEN ${CHANNEL}`)
      } catch (err) {
        await opened.end().catch(() => {})
        throw err
      }
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
      await client?.end().catch(() => {})
    }
  }
}

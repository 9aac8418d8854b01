import type pg from 'pg'
import { type QueryResultRow } from 'pg'
import { StoreUnavailableError } from '../store.ts'
import { withArrayLiterals } from './array-literals.ts'
import { classifyPostgresError } from './errors.ts'

/**
 * Settles like `work`, or fails as unavailable after `ms`. The driver's own timeouts apply to
 * each step (waiting for a connection, opening one, the query); this bounds their sum.
 */
export function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new StoreUnavailableError(new Error(`No answer within ${ms} ms`))), ms)
  })
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer))
}

/**
 * Runs `config` on `client`, with a callback of its own. Without one, pg builds the query first
 * and sets its callback afterwards, as its `query_timeout` also does (so it is not used): the
 * rows of queries changed that way outlived young collections, and paging through a long list
 * filled the old generation with them until a full collection (docs/performance.md has the
 * figures). Arrays go as the text of their literals (see array-literals.ts).
 */
export function send<R extends QueryResultRow>(client: pg.PoolClient, config: pg.QueryConfig): Promise<pg.QueryResult<R>> {
  return heeding(
    client,
    () =>
      new Promise((resolve, reject) => {
        const sent = config.values === undefined ? config : { ...config, values: withArrayLiterals(config.values) }
        client.query<R>(sent, (err: Error | undefined, result: pg.QueryResult<R>) => {
          if (err) reject(err)
          else resolve(result)
        })
      }),
  )
}

/**
 * Runs `work`, statements on `client`, with an ear on the client's error event: a connection
 * that breaks fails the statement under way, and also emits that event, which would end the
 * process if nothing heard it while the pool has lent the client out.
 */
export async function heeding<T>(client: pg.ClientBase, work: () => Promise<T>): Promise<T> {
  const heard = () => {}
  client.on('error', heard)
  try {
    return await work()
  } finally {
    client.removeListener('error', heard)
  }
}

/** Runs `config` on `client` within `ms`, with its failure classified. */
export async function runWithin<R extends QueryResultRow>(
  client: pg.PoolClient,
  config: pg.QueryConfig,
  ms: number,
): Promise<pg.QueryResult<R>> {
  try {
    return await withDeadline(send<R>(client, config), ms)
  } catch (err) {
    throw classifyPostgresError(err)
  }
}

/** A connection of `pool` within `ms`; one that comes later goes back to the pool unused. */
export async function connectWithin(pool: pg.Pool, ms: number): Promise<pg.PoolClient> {
  const connecting = pool.connect()
  try {
    return await withDeadline(connecting, Math.max(0, ms))
  } catch (err) {
    connecting.then(
      (client) => client.release(),
      () => {},
    )
    throw classifyPostgresError(err)
  }
}

import type { Metrics, StoreOutcome } from '../observability/metrics.ts'
import { StoreUnavailableError, type Store } from './store.ts'

function outcomeOf(err: unknown): StoreOutcome {
  return err instanceof StoreUnavailableError ? 'unavailable' : 'error'
}

/** The same store, with the duration and outcome of every operation recorded, whatever the engine. */
export function instrumentStore(store: Store, metrics: Pick<Metrics, 'observeStore'>): Store {
  async function timed<R>(operation: string, run: () => Promise<R>): Promise<R> {
    const started = performance.now()
    try {
      const result = await run()
      metrics.observeStore(operation, 'ok', (performance.now() - started) / 1000)
      return result
    } catch (err) {
      metrics.observeStore(operation, outcomeOf(err), (performance.now() - started) / 1000)
      throw err
    }
  }
  const { listJson } = store
  return {
    create: (book) => timed('create', () => store.create(book)),
    get: (id) => timed('get', () => store.get(id)),
    list: (after, limit) => timed('list', () => store.list(after, limit)),
    // Kept when the engine has it: without it every list is built from rows, far slower.
    ...(listJson && { listJson: (after: number, limit: number) => timed('list', () => listJson.call(store, after, limit)) }),
    find: (query) => timed('find', () => store.find(query)),
    update: (id, changes, expected) => timed('update', () => store.update(id, changes, expected)),
    delete: (id) => timed('delete', () => store.delete(id)),
    recordLoginFailure: (key, at, expiredUpTo) => timed('recordLoginFailure', () => store.recordLoginFailure(key, at, expiredUpTo)),
    recentLoginFailures: (key, since, limit) => timed('recentLoginFailures', () => store.recentLoginFailures(key, since, limit)),
    ping: () => timed('ping', () => store.ping()),
    close: () => store.close(),
  }
}

import type { Metrics, StoreOutcome } from '../observability/metrics.ts'
import { REPOSITORY_NAMES, StoreUnavailableError, type BookReader, type Repositories, type Store } from './store.ts'

type Observe = Pick<Metrics, 'observeStore'>['observeStore']

/**
 * The operation a method is recorded as, where it is not the method's own name: failed logins
 * keep the names their operations had before the store was split into repositories, so that
 * dashboards keep their series.
 */
const OPERATION_NAMES: { [R in keyof Repositories]?: { [M in keyof Repositories[R]]?: string } } = {
  loginFailures: { record: 'recordLoginFailure', recent: 'recentLoginFailures' },
}

function outcomeOf(err: unknown): StoreOutcome {
  return err instanceof StoreUnavailableError ? 'unavailable' : 'error'
}

/**
 * Not async, and the operation's promise is not awaited: every store operation passes here, and an
 * async function's state would be one more object for each. Every operation returns a promise.
 */
function timed<R>(observe: Observe, operation: string, run: () => Promise<R>): Promise<R> {
  const started = performance.now()
  const record = (outcome: StoreOutcome) => observe(operation, outcome, (performance.now() - started) / 1000)
  return run().then(
    (result) => {
      record('ok')
      return result
    },
    (err: unknown) => {
      record(outcomeOf(err))
      throw err
    },
  )
}

/** Every method of `target`, its own and its prototypes', by name. */
function methodNames(target: object): string[] {
  const names = new Set<string>()
  for (let level = target; level !== null && level !== Object.prototype; level = Object.getPrototypeOf(level) as object) {
    for (const name of Object.getOwnPropertyNames(level)) {
      if (name !== 'constructor' && typeof (target as Record<string, unknown>)[name] === 'function') names.add(name)
    }
  }
  return [...names]
}

/** The same repository, each of its methods timed; whatever methods it has, and its other members as they are. */
function instrumentRepository<T extends object>(
  repository: T,
  observe: Observe,
  operationNames: Record<string, string | undefined> = {},
): T {
  const methods = repository as Record<string, (...args: unknown[]) => Promise<unknown>>
  return {
    ...repository,
    ...Object.fromEntries(
      methodNames(repository).map((name) => [
        name,
        (...args: unknown[]) => timed(observe, operationNames[name] ?? name, () => methods[name]!(...args)),
      ]),
    ),
  }
}

function instrumentRepositories(repositories: Repositories, observe: Observe): Repositories {
  return Object.fromEntries(
    REPOSITORY_NAMES.map((name) => [name, instrumentRepository(repositories[name], observe, OPERATION_NAMES[name])]),
  ) as unknown as Repositories
}

/** The same store, with the duration and outcome of every operation recorded, whatever the engine. */
export function instrumentStore(store: Store, metrics: Pick<Metrics, 'observeStore'>): Store {
  const observe: Observe = (...args) => metrics.observeStore(...args)
  return {
    ...instrumentRepositories(store, observe),
    // A read is recorded as `find` until its first page is read: the pages after it wait for the client.
    reader: { pages: (query, options) => timed(observe, 'find', () => store.reader.pages(query, options as never)) } as BookReader,
    changeSignals: store.changeSignals,
    storesWhileReading: store.storesWhileReading,
    transaction: (work) => store.transaction((repositories) => work(instrumentRepositories(repositories, observe))),
    ping: () => timed(observe, 'ping', () => store.ping()),
    close: () => store.close(),
  }
}

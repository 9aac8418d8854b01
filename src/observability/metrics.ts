import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client'
import { SeriesHistogram } from './series-histogram.ts'

/** Label of requests that matched no route, so unknown URLs cannot grow the label set. */
export const UNMATCHED_ROUTE = 'unmatched'

export type StoreOutcome = 'ok' | 'unavailable' | 'error'

export interface Metrics {
  readonly contentType: string
  /** The exposition text that `GET /metrics` answers. */
  render(): Promise<string>
  observeRequest(method: string, route: string, status: number, seconds: number): void
  observeStore(operation: string, outcome: StoreOutcome, seconds: number): void
  /** Counts books stored by imports. */
  countImportedBooks(count: number): void
  /** Where the change streams open now, and the bytes waiting for their clients, are read when the metrics are. */
  watchStreams(read: () => { open: number; waitingBytes: number }): void
}

export interface MetricsOptions {
  /** CPU, memory, event loop and GC of the process; off where many instances share a process. */
  processMetrics?: boolean
  /** How the exposition is produced from the registry; a cluster worker asks the primary for every worker's. */
  render?: (registry: Registry) => Promise<string>
}

export function createMetrics({ processMetrics = true, render }: MetricsOptions = {}): Metrics & { registry: Registry } {
  const registry = new Registry()
  if (processMetrics) {
    collectDefaultMetrics({ register: registry })
    // It names the runtime's exact version: what an attacker looks up first.
    registry.removeSingleMetric('nodejs_version_info')
  }

  const requestDuration = new SeriesHistogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving a request to finishing its answer, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  })
  registry.registerMetric(requestDuration.histogram)
  registry.registerMetric(requestDuration.counter('http_requests_total', 'HTTP requests answered, by method, route pattern and status'))
  const storeDuration = new SeriesHistogram({
    name: 'book_store_operation_duration_seconds',
    help: 'Time the store took per operation, by operation and outcome',
    labelNames: ['operation', 'outcome'],
    buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5],
  })
  registry.registerMetric(storeDuration.histogram)

  const importedBooks = new Counter({
    name: 'books_imported_total',
    help: 'Books stored by POST /books/import',
    registers: [registry],
  })

  let streams = () => ({ open: 0, waitingBytes: 0 })
  new Gauge({
    name: 'book_change_streams',
    help: 'Change streams (GET /books/changes as Server-Sent Events) open now',
    registers: [registry],
    collect() {
      this.set(streams().open)
    },
  })
  new Gauge({
    name: 'book_change_stream_waiting_bytes',
    help: 'Bytes of change events written and not yet taken by the clients, all open streams together',
    registers: [registry],
    collect() {
      this.set(streams().waitingBytes)
    },
  })

  return {
    registry,
    contentType: registry.contentType,
    render: render ? () => render(registry) : () => registry.metrics(),
    observeRequest(method, route, status, seconds) {
      requestDuration.observe([method, route, String(status)], seconds)
    },
    observeStore(operation, outcome, seconds) {
      storeDuration.observe([operation, outcome], seconds)
    },
    countImportedBooks(count) {
      importedBooks.inc(count)
    },
    watchStreams(read) {
      streams = read
    },
  }
}

import autocannon, { type Request } from 'autocannon'
import { cpuSeconds } from './processes.ts'

export interface LoadOptions {
  connections: number
  /** Seconds of load per measurement, split into `rounds` slices. */
  durationSeconds: number
  rounds: number
}

export interface LoadResult {
  requestsPerSecond: number
  /** CPU time the server spent per request: unlike a rate, barely moved by the machine's other load. */
  cpuMicrosecondsPerRequest: number
  p50Ms: number
  p99Ms: number
  requests: number
  non2xx: number
  errors: number
}

/** One kind of request, as the load generator sends it. */
export interface Workload {
  method: Request['method']
  path: string
  headers?: Record<string, string>
  body?: string
  /** The path of each request, when it changes from one request to the next. */
  nextPath?: () => string
}

/** What autocannon returns with `skipAggregateResult`: histograms that can be merged later. */
export interface Slice {
  /** CPU seconds the server used during the slice; added here, not by autocannon. */
  cpuSeconds: number
  totalCompletedRequests: number
  duration: number
  non2xx: number
  errors: number
  timeouts: number
}

// The published types lack these two, which merge the latency histograms of several runs.
const cannon = autocannon as unknown as {
  (options: autocannon.Options & { skipAggregateResult: true }): Promise<Omit<Slice, 'cpuSeconds'>>
  aggregateResult(results: Slice[], options: object): autocannon.Result
}

/** Loads the server at `baseUrl`, whose process is `pid`, for `seconds`. */
export async function slice(baseUrl: string, pid: number, workload: Workload, connections: number, seconds: number): Promise<Slice> {
  const { nextPath } = workload
  const request: Request = {
    method: workload.method,
    path: workload.path,
    headers: { ...(workload.body === undefined ? {} : { 'content-type': 'application/json' }), ...workload.headers },
    ...(workload.body === undefined ? {} : { body: workload.body }),
    ...(nextPath === undefined ? {} : { setupRequest: (req: Request) => ({ ...req, path: nextPath() }) }),
  }
  const cpuBefore = cpuSeconds(pid)
  const result = await cannon({ url: baseUrl, connections, duration: seconds, requests: [request], skipAggregateResult: true })
  return { ...result, cpuSeconds: cpuSeconds(pid) - cpuBefore }
}

export function rate(slice: Slice): number {
  return slice.totalCompletedRequests / slice.duration
}

/** The slices as one run: total rate, and percentiles over every request of every slice. */
export function combine(slices: Slice[], url: string): LoadResult {
  const merged = cannon.aggregateResult(slices, { url })
  const sum = (pick: (slice: Slice) => number) => slices.reduce((total, slice) => total + pick(slice), 0)
  return {
    requestsPerSecond: sum((s) => s.totalCompletedRequests) / sum((s) => s.duration),
    cpuMicrosecondsPerRequest: (sum((s) => s.cpuSeconds) * 1e6) / sum((s) => s.totalCompletedRequests),
    p50Ms: merged.latency.p50,
    p99Ms: merged.latency.p99,
    requests: sum((s) => s.totalCompletedRequests),
    non2xx: sum((s) => s.non2xx),
    errors: sum((s) => s.errors + s.timeouts),
  }
}

import autocannon, { type Request } from 'autocannon'

export interface LoadOptions {
  connections: number
  durationSeconds: number
}

export interface LoadResult {
  requestsPerSecond: number
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

export async function measure(baseUrl: string, workload: Workload, { connections, durationSeconds }: LoadOptions): Promise<LoadResult> {
  const { nextPath } = workload
  const request: Request = {
    method: workload.method,
    path: workload.path,
    headers: { ...(workload.body === undefined ? {} : { 'content-type': 'application/json' }), ...workload.headers },
    ...(workload.body === undefined ? {} : { body: workload.body }),
    ...(nextPath === undefined ? {} : { setupRequest: (req: Request) => ({ ...req, path: nextPath() }) }),
  }
  const result = await autocannon({ url: baseUrl, connections, duration: durationSeconds, requests: [request] })
  return {
    requestsPerSecond: result.requests.total / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  }
}

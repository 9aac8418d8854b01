import { type Agent, request } from 'node:http'
import type { Service } from './service.ts'

export interface Answer {
  status: number
  ms: number
  firstByteMs: number
  link: string | undefined
}

/** One request, timed from its start to its first byte and to its last. */
export function timed(
  service: Service,
  path: string,
  token: string,
  agent: Agent,
  options: { method?: string; body?: Buffer; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const req = request(
      `${service.baseUrl}${path}`,
      { agent, method: options.method ?? 'GET', headers: { authorization: token, ...options.headers } },
      (response) => {
        const firstByteMs = performance.now() - started
        response.on('data', () => {})
        response.on('end', () => {
          const link = /<([^>]+)>/.exec(String(response.headers.link ?? ''))?.[1]
          resolve({ status: response.statusCode!, ms: performance.now() - started, firstByteMs, link })
        })
        response.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(options.body)
  })
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
}

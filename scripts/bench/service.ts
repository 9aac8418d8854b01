import { request } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { allocatedBytes, countAllocations } from './allocations.ts'
import { startListener, type Listener } from './processes.ts'

const SECRET_TOKEN = 'bench-secret-of-at-least-thirty-two-bytes-long'
export const CREDENTIALS = { username: 'bench', password: 'staple horse correct battery' }

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url))

export interface Service extends Listener {
  baseUrl: string
  /** Bytes the service's JavaScript heap has allocated since it started. */
  allocatedBytes(): Promise<number>
}

export interface ServiceOptions {
  dbUrl: string
  logLevel?: string
  /** Extra environment, such as WORKERS. */
  env?: Record<string, string>
  /** CPUs the service may run on, as `taskset -c` takes them; anywhere when absent. */
  cpus?: string | undefined
  /** Options for node itself, such as `--cpu-prof`. */
  nodeOptions?: string[]
  /** The service's entry point, such as another checkout's, to compare against; this one's when absent. */
  main?: string
}

/** What `npm start` gives node besides the service. */
const START_OPTIONS = ['--max-semi-space-size=16', '--no-allocation-site-pretenuring']

/** The service in production mode on a free port of the loopback address, started as `npm start` starts it. */
export async function startService({
  dbUrl,
  logLevel = 'warn',
  env = {},
  cpus,
  nodeOptions = [],
  main = MAIN,
}: ServiceOptions): Promise<Service> {
  const counts = mkdtempSync(join(tmpdir(), 'book-bench-allocations-'))
  const allocations = countAllocations(join(counts, 'bytes'))
  const listener = await startListener(
    [...START_OPTIONS, ...allocations.nodeOptions, ...nodeOptions, main],
    {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      PORT: '0',
      HOST: '127.0.0.1',
      DB_URL: dbUrl,
      SECRET_TOKEN,
      AUTH_USERNAME: CREDENTIALS.username,
      AUTH_PASSWORD: CREDENTIALS.password,
      LOG_LEVEL: logLevel,
      ...allocations.env,
      ...env,
    },
    // Outside the repository, so a developer's .env cannot change what is measured.
    { cwd: tmpdir(), discardStdout: logLevel === 'info' || logLevel === 'debug' || logLevel === 'trace', cpus },
  )
  return {
    ...listener,
    baseUrl: `http://127.0.0.1:${listener.port}`,
    allocatedBytes: () => allocatedBytes(listener.pid, join(counts, 'bytes')),
    stop: async () => {
      await listener.stop()
      rmSync(counts, { recursive: true, force: true })
    },
  }
}

async function call(service: Service, method: string, path: string, token?: string, body?: unknown) {
  const response = await fetch(service.baseUrl + path, {
    method,
    headers: {
      ...(token === undefined ? {} : { authorization: token }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 200)}`)
  return { response, text }
}

export async function login(service: Service): Promise<string> {
  const { text } = await call(service, 'POST', '/token', undefined, CREDENTIALS)
  return (JSON.parse(text) as { data: { token: string } }).data.token
}

export function sampleBook(n: number) {
  return { title: `The Book Number ${n}`, author: `Author ${n % 997}`, year: 1900 + (n % 125) }
}

/** Creates `count` books through the interface, a few at a time, and returns their ids. */
export async function createBooks(service: Service, token: string, count: number): Promise<number[]> {
  const ids: number[] = []
  const CONCURRENCY = 16
  for (let start = 0; start < count; start += CONCURRENCY) {
    const batch = Array.from({ length: Math.min(CONCURRENCY, count - start) }, (_, i) =>
      call(service, 'POST', '/book', token, sampleBook(start + i)),
    )
    for (const { text } of await Promise.all(batch)) ids.push((JSON.parse(text) as { data: { id: number } }).data.id)
  }
  return ids
}

/** Every book id, read through the paged list. */
export async function allIds(service: Service, token: string): Promise<number[]> {
  const ids: number[] = []
  let after = 0
  for (;;) {
    const { text } = await call(service, 'GET', `/books?limit=1000&after=${after}`, token)
    const page = (JSON.parse(text) as { data: { id: number }[] }).data
    for (const book of page) ids.push(book.id)
    if (page.length < 1000) return ids
    after = page[page.length - 1]!.id
  }
}

/** The exact status, headers and body of one response, to be replayed by the ceiling. */
export async function recordResponse(service: Service, path: string, token: string) {
  return new Promise<{ status: number; rawHeaders: string[]; body: string }>((resolve, reject) => {
    request(service.baseUrl + path, { headers: { authorization: token } }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () =>
        resolve({
          status: response.statusCode!,
          rawHeaders: response.rawHeaders,
          body: Buffer.concat(chunks).toString('base64'),
        }),
      )
    })
      .on('error', reject)
      .end()
  })
}

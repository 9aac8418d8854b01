import { fileURLToPath } from 'node:url'
import { combine, rate, slice, type LoadOptions, type LoadResult, type Slice, type Workload } from './load.ts'
import { startListener } from './processes.ts'
import { allIds, createBooks, CREDENTIALS, login, recordResponse, sampleBook, type Service } from './service.ts'

const CEILING_SERVER = fileURLToPath(new URL('./ceiling-server.ts', import.meta.url))
/** Books in the store while reads, updates and the list are measured. */
const BOOKS = 100
/** Unrecorded load before each measurement, so that the code under test is compiled first. */
const WARM_UP_SECONDS = 1

export interface Measurement extends LoadResult {
  name: string
  /** The ceiling over the slices around this measurement's own. */
  ceiling: LoadResult
  /** Median over the slices of requests per second over the mean of the two ceiling slices around it. */
  ratio: number
}

export interface Step {
  name: string
  /** Called right before the step is measured, with the measurements made before it. */
  workload: (done: Measurement[]) => Promise<Workload>
}

/** Cycles through `ids`, one per request. */
function bookPaths(ids: number[]): () => string {
  let i = 0
  return () => `/book/${ids[i++ % ids.length]}`
}

/** Hands out each of `ids` once; requests past the end reuse the last, and show up as non-2xx. */
function eachIdOnce(ids: number[]): () => string {
  let i = 0
  return () => `/book/${ids[Math.min(i++, ids.length - 1)]}`
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/**
 * Measures `steps` against `service`, each in slices that alternate with slices of the ceiling:
 * a bare node:http server replaying the service's own `GET /book/{id}` response, hit with the
 * same requests. Fine interleaving keeps each ratio fair while the machine's other load comes
 * and goes; the median over the slices keeps a burst of it from deciding the figure.
 */
export async function runSteps(
  service: Service,
  steps: (ids: number[], token: string) => Step[],
  load: LoadOptions,
  log: (line: string) => void,
): Promise<Measurement[]> {
  const token = await login(service)
  const ids = await createBooks(service, token, BOOKS)
  const readPath = `/book/${ids[0]}`
  const ceiling = await startListener([CEILING_SERVER], {
    BENCH_RESPONSE: JSON.stringify(await recordResponse(service, readPath, token)),
  })
  const ceilingUrl = `http://127.0.0.1:${ceiling.port}`
  const ceilingWorkload: Workload = { method: 'GET', path: readPath, headers: { authorization: token }, nextPath: bookPaths(ids) }
  const sliceSeconds = load.durationSeconds / load.rounds

  const measurements: Measurement[] = []
  try {
    await slice(ceilingUrl, ceiling.pid, ceilingWorkload, load.connections, WARM_UP_SECONDS)
    let lastCeiling = await slice(ceilingUrl, ceiling.pid, ceilingWorkload, load.connections, sliceSeconds)
    for (const step of steps(ids, token)) {
      const workload = await step.workload(measurements)
      await slice(service.baseUrl, service.pid, workload, load.connections, WARM_UP_SECONDS)
      const own: Slice[] = []
      const ceilings = [lastCeiling]
      const ratios: number[] = []
      for (let round = 0; round < load.rounds; round++) {
        own.push(await slice(service.baseUrl, service.pid, workload, load.connections, sliceSeconds))
        ceilings.push(await slice(ceilingUrl, ceiling.pid, ceilingWorkload, load.connections, sliceSeconds))
        ratios.push(rate(own[round]!) / ((rate(ceilings[round]!) + rate(ceilings[round + 1]!)) / 2))
      }
      lastCeiling = ceilings.at(-1)!
      const result = combine(own, service.baseUrl)
      const measurement = { name: step.name, ...result, ceiling: combine(ceilings, ceilingUrl), ratio: median(ratios) }
      measurements.push(measurement)
      const problems = result.non2xx + result.errors > 0 ? `  (${result.non2xx} non-2xx, ${result.errors} errors)` : ''
      log(
        `  ${step.name.padEnd(24)}${result.requestsPerSecond.toFixed(0).padStart(6)} req/s, ceiling ` +
          `${measurement.ceiling.requestsPerSecond.toFixed(0).padStart(6)} req/s: ${measurement.ratio.toFixed(2)}; ` +
          `CPU ${result.cpuMicrosecondsPerRequest.toFixed(0)} µs/request, ceiling ${measurement.ceiling.cpuMicrosecondsPerRequest.toFixed(0)}${problems}`,
      )
    }
  } finally {
    await ceiling.stop()
  }
  return measurements
}

const bookBody = JSON.stringify(sampleBook(7))

/** Every operation of the interface, in an order that leaves each one the data it needs. */
export function everyOperation(service: Service, load: LoadOptions) {
  return (ids: number[], token: string): Step[] => {
    const auth = { authorization: token }
    const create: Workload = { method: 'POST', path: '/book', headers: auth, body: bookBody }
    return [
      { name: 'POST /token', workload: async () => ({ method: 'POST', path: '/token', body: JSON.stringify(CREDENTIALS) }) },
      {
        name: 'GET /book/{id}',
        workload: async () => ({ method: 'GET', path: `/book/${ids[0]}`, headers: auth, nextPath: bookPaths(ids) }),
      },
      { name: `GET /books (${ids.length} books)`, workload: async () => ({ method: 'GET', path: '/books', headers: auth }) },
      {
        name: 'PUT /book/{id}',
        workload: async () => ({ method: 'PUT', path: `/book/${ids[0]}`, headers: auth, body: bookBody, nextPath: bookPaths(ids) }),
      },
      { name: 'POST /book', workload: async () => create },
      {
        name: 'DELETE /book/{id}',
        workload: async (done) => {
          // Every delete must find a book: twice what the fastest write rate so far could delete.
          const writes = done.filter((m) => m.name === 'PUT /book/{id}' || m.name === 'POST /book')
          const writesPerSecond = Math.max(1000, ...writes.map((m) => m.requestsPerSecond))
          const needed = Math.ceil(writesPerSecond * (WARM_UP_SECONDS + load.durationSeconds) * 2)
          let present = await allIds(service, token)
          while (present.length < needed) {
            const seconds = Math.ceil((needed - present.length) / writesPerSecond) + 1
            await slice(service.baseUrl, service.pid, create, load.connections, seconds)
            present = await allIds(service, token)
          }
          return { method: 'DELETE', path: `/book/${present[0]}`, headers: auth, nextPath: eachIdOnce(present) }
        },
      },
    ]
  }
}

/** `GET /book/{id}` alone, for the variants of the configuration. */
export function readOnly(ids: number[], token: string): Step[] {
  return [
    {
      name: 'GET /book/{id}',
      workload: async () => ({ method: 'GET', path: `/book/${ids[0]}`, headers: { authorization: token }, nextPath: bookPaths(ids) }),
    },
  ]
}

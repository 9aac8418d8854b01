import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { allocatedBytes, countAllocations } from './allocations.ts'
import { startListener } from './processes.ts'
import type { Section } from './report.ts'
import { createBooks, login, recordResponse, startService, type Service, type ServiceOptions } from './service.ts'
import type { BenchContext } from './suites.ts'
import { afterRun, wrk, type LoadOptions, type Run, type Workload } from './wrk.ts'

const CEILING_SERVER = fileURLToPath(new URL('./ceiling-server.ts', import.meta.url))
/** Books in the store while reads, updates and the list are measured. */
export const BOOKS = 100
/** Unrecorded load before each measurement, so that the code under test is compiled first. */
export const WARM_UP_SECONDS = 1

/** The median of several runs, and the lowest and highest. */
export interface Spread {
  median: number
  min: number
  max: number
}

export interface Measurement {
  name: string
  requestsPerSecond: Spread
  /** Each run's rate over the mean rate of the two ceiling runs around it. */
  ratio: Spread
  cpuMicrosecondsPerRequest: Spread
  /** What the service's JavaScript heap allocated per request, garbage included. */
  bytesPerRequest: Spread
  p50Ms: Spread
  p99Ms: Spread
  ceilingRequestsPerSecond: Spread
  ceilingCpuMicrosecondsPerRequest: Spread
  /** What the ceiling allocates per request: node:http's own share of the service's. */
  ceilingBytesPerRequest: Spread
  /**
   * Over every run, the answers not as the step asks: of 400 or above, socket errors and timeouts;
   * where the step asks for refusals, those not refused.
   */
  errors: number
  /** Whether the step asks for refusals. */
  refused: boolean
  runs: Run[]
  ceilingRuns: Run[]
}

/** What a step is given to build its workload. */
export interface StepContext {
  service: Service
  token: string
  /** The ids of the books created before the first step. */
  ids: number[]
  /** The measurements made before this step, in order. */
  done: Measurement[]
  load: LoadOptions
}

export interface Step {
  name: string
  /** Called right before the step is measured. */
  workload: (context: StepContext) => Promise<Workload>
}

export function spread(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
  return { median, min: sorted[0]!, max: sorted.at(-1)! }
}

/** The path of each of `ids`. */
export function bookPaths(ids: number[]): string[] {
  return ids.map((id) => `/book/${id}`)
}

export function describeSpread(s: Spread, digits = 0): string {
  return `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`
}

/**
 * Measures `steps` against `service`: each in runs that alternate with runs of the ceiling, a
 * bare node:http server on the service's CPUs replaying the service's own `GET /book/{id}`
 * response, hit with the requests of `GET /book/{id}`. Each run of the service sits between
 * two of the ceiling, so its ratio is fair while the machine's other load comes and goes.
 */
export async function measureSteps(
  service: Service,
  steps: Step[],
  load: LoadOptions,
  serverCpus: string | undefined,
  log: (line: string) => void,
): Promise<Measurement[]> {
  const token = await login(service)
  const ids = await createBooks(service, token, BOOKS)
  const readPath = `/book/${ids[0]}`
  const counts = mkdtempSync(join(tmpdir(), 'book-bench-ceiling-'))
  const allocations = countAllocations(join(counts, 'bytes'))
  const ceiling = await startListener(
    [...allocations.nodeOptions, CEILING_SERVER],
    { ...allocations.env, BENCH_RESPONSE: JSON.stringify(await recordResponse(service, readPath, token)) },
    { cpus: serverCpus },
  )
  const ceilingUrl = `http://127.0.0.1:${ceiling.port}`
  const ceilingWorkload: Workload = { method: 'GET', path: readPath, headers: { authorization: token }, paths: bookPaths(ids) }
  const ceilingRun = async (seconds: number) => {
    const before = await allocatedBytes(ceiling.pid, join(counts, 'bytes'))
    const run = await wrk(ceilingUrl, ceiling.pid, ceilingWorkload, load, seconds)
    run.bytesPerRequest = ((await allocatedBytes(ceiling.pid, join(counts, 'bytes'))) - before) / Math.max(1, run.requests)
    return run
  }

  const measurements: Measurement[] = []
  try {
    await ceilingRun(WARM_UP_SECONDS)
    let lastCeiling = await ceilingRun(load.durationSeconds)
    for (const step of steps) {
      let workload = await step.workload({ service, token, ids, done: measurements, load })
      workload = afterRun(workload, await wrk(service.baseUrl, service.pid, workload, load, WARM_UP_SECONDS))
      const runs: Run[] = []
      const ceilings = [lastCeiling]
      for (let i = 0; i < load.runs; i++) {
        const allocatedBefore = await service.allocatedBytes()
        const run = await wrk(service.baseUrl, service.pid, workload, load, load.durationSeconds)
        run.bytesPerRequest = ((await service.allocatedBytes()) - allocatedBefore) / Math.max(1, run.requests)
        runs.push(run)
        workload = afterRun(workload, run)
        ceilings.push(await ceilingRun(load.durationSeconds))
      }
      lastCeiling = ceilings.at(-1)!
      const of = (list: Run[], pick: (run: Run) => number) => spread(list.map(pick))
      const measurement: Measurement = {
        name: step.name,
        requestsPerSecond: of(runs, (r) => r.requestsPerSecond),
        ratio: spread(
          runs.map((r, i) => r.requestsPerSecond / ((ceilings[i]!.requestsPerSecond + ceilings[i + 1]!.requestsPerSecond) / 2)),
        ),
        cpuMicrosecondsPerRequest: of(runs, (r) => r.cpuMicrosecondsPerRequest),
        bytesPerRequest: of(runs, (r) => r.bytesPerRequest ?? 0),
        p50Ms: of(runs, (r) => r.p50Ms),
        p99Ms: of(runs, (r) => r.p99Ms),
        ceilingRequestsPerSecond: of(ceilings, (r) => r.requestsPerSecond),
        ceilingCpuMicrosecondsPerRequest: of(ceilings, (r) => r.cpuMicrosecondsPerRequest),
        ceilingBytesPerRequest: of(ceilings, (r) => r.bytesPerRequest ?? 0),
        errors: runs.reduce((sum, r) => sum + (workload.refused ? r.requests - r.errors : r.errors), 0),
        refused: workload.refused === true,
        runs,
        ceilingRuns: ceilings,
      }
      measurements.push(measurement)
      const trouble = measurement.errors > 0 ? `  (${problems(measurement)})` : ''
      log(
        `  ${step.name.padEnd(24)} ratio ${describeSpread(measurement.ratio, 2)}, ${describeSpread(measurement.requestsPerSecond)} req/s ` +
          `(ceiling ${describeSpread(measurement.ceilingRequestsPerSecond)}); CPU µs/request ${describeSpread(measurement.cpuMicrosecondsPerRequest)} ` +
          `(ceiling ${measurement.ceilingCpuMicrosecondsPerRequest.median.toFixed(0)}); bytes/request ${describeSpread(measurement.bytesPerRequest)} ` +
          `(ceiling ${measurement.ceilingBytesPerRequest.median.toFixed(0)})${trouble}`,
      )
    }
  } finally {
    await ceiling.stop()
    rmSync(counts, { recursive: true, force: true })
  }
  return measurements
}

/** What went otherwise than `measurement`'s step asked, for a report. */
export function problems({ errors, refused }: Measurement): string {
  return refused ? `${errors} not refused` : `${errors} errors or non-2xx`
}

/** Starts the service as `options` say, on the servers' CPUs, measures `steps` against it, and stops it. */
export async function measureSection(title: string, options: ServiceOptions, steps: Step[], context: BenchContext): Promise<Section> {
  // --operation=TEXT keeps the steps whose name holds TEXT, such as --operation=token.
  const only = context.options.operation
  if (typeof only === 'string') steps = steps.filter((step) => step.name.includes(only))
  if (steps.length === 0) return { title, measurements: [] }
  context.log(title)
  const service = await startService({ ...options, cpus: context.serverCpus })
  try {
    return { title, measurements: await measureSteps(service, steps, context.load, context.serverCpus, context.log) }
  } finally {
    await service.stop()
  }
}

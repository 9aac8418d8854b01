/**
 * `npm run bench`: the service under load against the ceiling of a bare node:http server.
 *
 *   --duration=SECONDS   per measurement (BENCH_DURATION, default 5)
 *   --rounds=N           slices each measurement alternates with the ceiling in (BENCH_ROUNDS, default 5)
 *   --connections=N      concurrent connections (BENCH_CONNECTIONS, default 50)
 *   --scale=N,N,…        list sizes for GET /books at scale, or "none" (BENCH_SCALE,
 *                        default 10000,100000,1000000)
 *   --only=PART,…        some of sqlite, logs, workers, postgres, scale, transfer (BENCH_ONLY, default all)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { postgresSection } from './bench/engines.ts'
import type { LoadOptions } from './bench/load.ts'
import { processTree } from './bench/processes.ts'
import { describeMachine, scaleTable, table, writeResults, type Section } from './bench/report.ts'
import { measureScale, type ScalePoint } from './bench/scale.ts'
import { startService, type ServiceOptions } from './bench/service.ts'
import { everyOperation, readOnly, runSteps, type Step } from './bench/suite.ts'
import { measureTransfer, transferTable } from './bench/transfer.ts'

const PARTS = ['sqlite', 'logs', 'workers', 'postgres', 'scale', 'transfer']
const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: process.env.BENCH_DURATION ?? '5' },
    rounds: { type: 'string', default: process.env.BENCH_ROUNDS ?? '5' },
    connections: { type: 'string', default: process.env.BENCH_CONNECTIONS ?? '50' },
    scale: { type: 'string', default: process.env.BENCH_SCALE ?? '10000,100000,1000000' },
    only: { type: 'string', default: process.env.BENCH_ONLY ?? PARTS.join(',') },
  },
})
const parts = new Set(values.only.split(','))
const load: LoadOptions = {
  durationSeconds: Number(values.duration),
  rounds: Number(values.rounds),
  connections: Number(values.connections),
}
const sizes = values.scale === 'none' ? [] : values.scale.split(',').map(Number)
if (
  !(load.durationSeconds > 0) ||
  !Number.isSafeInteger(load.rounds) ||
  load.rounds < 1 ||
  !(load.connections > 0) ||
  sizes.some((n) => !Number.isSafeInteger(n) || n < 1) ||
  [...parts].some((part) => !PARTS.includes(part))
) {
  console.error(
    `usage: npm run bench -- [--duration=SECONDS] [--rounds=N] [--connections=N] [--scale=N,N,…|none] [--only=${PARTS.join(',')}]`,
  )
  process.exit(2)
}

const log = (line: string) => console.log(line)
const startedAt = new Date()
const machine = describeMachine()
const work = mkdtempSync(join(tmpdir(), 'book-bench-'))
log(`${machine.cores} × ${machine.cpu}, ${machine.memoryGiB} GiB, Node ${machine.node}, load ${machine.loadAverageAtStart.join(' ')}`)
log(
  `${load.connections} connections, ${load.durationSeconds} s per measurement in ${load.rounds} slices; service with NODE_ENV=production, LOG_LEVEL=warn (no per-request logs)`,
)

type Steps = (service: Awaited<ReturnType<typeof startService>>) => (ids: number[], token: string) => Step[]

/** Starts the service as `options` say, runs `steps` against it, and stops it. */
async function section(title: string, options: ServiceOptions, steps: Steps, describe?: (processes: number) => string): Promise<Section> {
  log(title)
  const service = await startService(options)
  try {
    const note = describe?.(processTree(service.pid).length)
    if (note) log(`  ${note}`)
    return { title, ...(note ? { note } : {}), measurements: await runSteps(service, steps(service), load, log) }
  } finally {
    await service.stop()
  }
}

const sections: Section[] = []
let scale: ScalePoint[] = []
let transfer: Awaited<ReturnType<typeof measureTransfer>> | undefined
try {
  if (parts.has('sqlite')) {
    sections.push(await section('SQLite', { dbUrl: `sqlite:${join(work, 'main.db')}` }, (s) => everyOperation(s, load)))
  }
  if (parts.has('logs')) {
    const options = { dbUrl: `sqlite:${join(work, 'info.db')}`, logLevel: 'info' }
    sections.push(await section('SQLite, LOG_LEVEL=info (a log line per request)', options, () => readOnly))
  }
  if (parts.has('workers')) {
    const options = { dbUrl: `sqlite:${join(work, 'workers.db')}`, env: { WORKERS: '2' } }
    const describe = (processes: number) =>
      processes > 1 ? `${processes - 1} workers under one primary process` : 'one process: this service does not start workers'
    sections.push(await section('SQLite, WORKERS=2', options, (s) => everyOperation(s, load), describe))
  }
  if (parts.has('postgres')) {
    const run = (options: ServiceOptions) => section('PostgreSQL', options, (s) => everyOperation(s, load))
    sections.push(await postgresSection(`bench_${process.pid}`, run, log))
  }
  if (parts.has('scale') && sizes.length > 0) {
    log('GET /books at scale (SQLite)')
    scale = await measureScale(join(work, 'scale.db'), sizes, log)
  }
  if (parts.has('transfer')) {
    log('Import and export')
    transfer = await measureTransfer({ rows: 100_000, exportBooks: 1_000_000, engines: ['sqlite', 'postgres'], log })
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}

log('')
log(table(sections))
if (scale.length > 0) {
  log('')
  log(scaleTable(scale))
}
if (transfer) {
  log('')
  log(transferTable(transfer))
}
const file = writeResults({ startedAt: startedAt.toISOString(), machine, load, logLevel: 'warn', sections, scale, transfer }, startedAt)
log(`\nresults: ${file}`)

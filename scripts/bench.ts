/**
 * `npm run bench -- [SUITE…] [options]`: the service under load from wrk, against the ceiling of
 * a bare node:http server. Each suite is a module of scripts/bench/suites/; without a name,
 * every one runs.
 *
 *   --duration=SECONDS   per run (BENCH_DURATION, default 5)
 *   --runs=N             interleaved runs of each measurement, at least 3 (BENCH_RUNS, default 3)
 *   --connections=N      concurrent connections (BENCH_CONNECTIONS, default 50)
 *   --server-cpus=LIST   CPUs of the service and the ceiling, for taskset -c (BENCH_SERVER_CPUS, default 0)
 *   --load-cpus=LIST     CPUs of wrk (BENCH_LOAD_CPUS, default 1); "none" for both to run unpinned
 *   --operation=TEXT     only the operations whose name holds TEXT, such as --operation=token
 *   Suites read options of their own, such as --scale=N,N,… for scale.
 *
 * `npm run bench -- search [--books=N] [--samples=N]` measures finding books instead, and
 * `npm run bench -- hostile [--books=N] [--data=DIR]` the worst requests a signed-in client can send, and
 * `npm run bench -- worst-shapes --data=DIR [--against=CHECKOUT]` the slowest searches' first pages against another checkout's, and
 * `npm run bench -- backup [--books=N] [--rate=N]` a backup under writes, and
 * `npm run bench -- feed [--rate=N] [--seconds=N] [--streams=N]` the change feed: latency across instances, and many open streams.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { describeMachine, table, writeResults, type Section } from './bench/report.ts'
import { loadSuite, suiteNames, type BenchContext } from './bench/suites.ts'

// Finding books, the worst a client may ask, backups and the change feed have benchmarks of their
// own, with their own options: see scripts/bench/search.ts, hostile.ts, worst-shapes.ts, backup.ts
// and feed.ts.
if (['search', 'hostile', 'worst-shapes', 'backup', 'feed'].includes(process.argv[2] ?? '')) {
  const bench = (await import(`./bench/${process.argv[2]}.ts`)) as { main(args: string[]): Promise<void> }
  await bench.main(process.argv.slice(3))
  process.exit(0)
}

const { values, positionals } = parseArgs({
  strict: false,
  allowPositionals: true,
  options: {
    duration: { type: 'string', default: process.env.BENCH_DURATION ?? '5' },
    runs: { type: 'string', default: process.env.BENCH_RUNS ?? '3' },
    connections: { type: 'string', default: process.env.BENCH_CONNECTIONS ?? '50' },
    'server-cpus': { type: 'string', default: process.env.BENCH_SERVER_CPUS ?? '0' },
    'load-cpus': { type: 'string', default: process.env.BENCH_LOAD_CPUS ?? '1' },
  },
})

const known = suiteNames()
const selected = positionals.length > 0 ? positionals : known
const cpus = (value: unknown) => (value === 'none' ? undefined : String(value))
const durationSeconds = Number(values.duration)
const runs = Number(values.runs)
const connections = Number(values.connections)
const serverCpus = cpus(values['server-cpus'])
const loadCpus = cpus(values['load-cpus'])
if (
  !Number.isSafeInteger(durationSeconds) ||
  durationSeconds < 1 ||
  !Number.isSafeInteger(runs) ||
  runs < 3 ||
  !Number.isSafeInteger(connections) ||
  connections < 1 ||
  selected.some((name) => !known.includes(name))
) {
  console.error(
    `usage: npm run bench -- [${known.join('|')}]… [--duration=SECONDS] [--runs=N≥3] [--connections=N] [--server-cpus=LIST] [--load-cpus=LIST]`,
  )
  process.exit(2)
}
try {
  execFileSync('wrk', ['--version'], { stdio: 'ignore' })
} catch (err) {
  // wrk prints its version and exits 1; only a missing program is fatal.
  if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
    console.error('wrk is not installed: apt-get install wrk')
    process.exit(2)
  }
}

const log = (line: string) => console.log(line)
const startedAt = new Date()
const machine = describeMachine()
log(`${machine.cores} × ${machine.cpu}, ${machine.memoryGiB} GiB, Node ${machine.node}, load ${machine.loadAverageAtStart.join(' ')}`)
if (serverCpus !== undefined && loadCpus !== undefined && availableParallelism() < 2) {
  log('warning: one CPU only, so the servers and wrk share it')
}
log(
  `wrk, 1 thread, ${connections} connections, on CPU ${loadCpus ?? 'any'}; servers on CPU ${serverCpus ?? 'any'}; ` +
    `${runs} runs of ${durationSeconds} s per measurement, each between two runs of the ceiling; ` +
    'service with NODE_ENV=production, LOG_LEVEL=warn unless a line says otherwise',
)

const work = mkdtempSync(join(tmpdir(), 'book-bench-'))
const context: BenchContext = {
  load: { durationSeconds, runs, connections, cpus: loadCpus },
  serverCpus,
  work,
  options: values,
  log,
}
const sections: Section[] = []
const tables: string[] = []
const data: Record<string, unknown> = {}
try {
  for (const name of selected) {
    const result = await (await loadSuite(name)).run(context)
    sections.push(...result.sections)
    tables.push(...(result.tables ?? []))
    data[name] = { sections: result.sections, data: result.data }
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}

log('')
if (sections.length > 0) log(table(sections))
for (const text of tables) log(`\n${text}`)
const file = writeResults({ startedAt: startedAt.toISOString(), machine, load: context.load, serverCpus, suites: data }, startedAt)
log(`\nresults: ${file}`)

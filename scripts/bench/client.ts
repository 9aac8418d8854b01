/**
 * `npm run bench:client`: the book-catalogue command against curl. A 100,000-row CSV imported
 * with `curl --data-binary` and with `book-catalogue import --no-check`, each into a fresh store,
 * in turns; the longest the command's progress bar stands still on a terminal (a pseudo-terminal
 * from `script`); the import with its check first, as the command runs by default; and how long
 * `book-catalogue find` takes from process start to exit, once the service has indexed the books
 * it imported, beside curl asking the same and `node -e 0` on the same machine.
 *
 *   node scripts/bench/client.ts [--rows=N] [--runs=N] [--finds=N] [--only=sqlite,postgres]
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { buildCommand } from '../../clients/typescript/build.ts'
import { describeSpread, spread, type Spread } from './measure.ts'
import { createDatabase, dropDatabase } from './postgres.ts'
import { describeMachine } from './report.ts'
import { login, sampleBook, startService, type Service } from './service.ts'
import { untilSummarised } from './summaries.ts'

const NODE = process.execPath
/** The bin as npm links it, which runs the built command. */
const BIN = fileURLToPath(new URL('../../clients/typescript/bin/book-catalogue.js', import.meta.url))

interface Finished {
  ms: number
  code: number | null
  stdout: string
  stderr: string
}

/** Runs `command` to its end, timed from spawn to exit; `onStdout` sees each chunk as it comes. */
function timed(command: string, args: string[], env: Record<string, string>, onStdout?: (chunk: string) => void): Promise<Finished> {
  return new Promise((resolve) => {
    const started = performance.now()
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      onStdout?.(chunk.toString())
    })
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('close', (code) => resolve({ ms: performance.now() - started, code, stdout, stderr }))
  })
}

function check(run: Finished, what: string): Finished {
  if (run.code !== 0) throw new Error(`${what} failed (${run.code}):\n${run.stdout.slice(-2000)}\n${run.stderr.slice(-2000)}`)
  return run
}

async function newKey(service: Service): Promise<string> {
  const response = await fetch(`${service.baseUrl}/keys`, {
    method: 'POST',
    headers: { authorization: await login(service), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench', role: 'admin' }),
  })
  return ((await response.json()) as { data: { key: string } }).data.key
}

interface Engine {
  name: string
  /** A fresh, empty store, and how to remove it. */
  fresh(): Promise<{ dbUrl: string; drop(): Promise<void> }>
}

const ENGINES: Engine[] = [
  {
    name: 'sqlite',
    async fresh() {
      const dir = mkdtempSync(join(tmpdir(), 'bench-client-'))
      return { dbUrl: `sqlite:${join(dir, 'books.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) }
    },
  },
  {
    name: 'postgres',
    async fresh() {
      const name = `bench_client_${process.pid}_${Date.now()}`
      const created = await createDatabase(name)
      if ('skip' in created) throw new Error(created.skip)
      return { dbUrl: created.url, drop: () => dropDatabase(name) }
    },
  },
]

/** Starts the service on a fresh store, runs `work` with a key, and removes it all. */
async function withService<T>(engine: Engine, work: (service: Service, key: string, dbUrl: string) => Promise<T>): Promise<T> {
  const store = await engine.fresh()
  const service = await startService({ dbUrl: store.dbUrl })
  try {
    return await work(service, await newKey(service), store.dbUrl)
  } finally {
    await service.stop()
    await store.drop()
  }
}

const CLEAR_LINE = '\r\x1b[2K'
/** Where `/usr/bin/time` writes the CPU time of the client it ran: the machine's other load moves it far less than the wall time. */
const CPU_FILE = join(tmpdir(), `bench-client-cpu-${process.pid}`)
const TIME = ['/usr/bin/time', '-o', CPU_FILE, '-f', '%U %S']

function clientCpuSeconds(): number {
  const [user = 0, system = 0] = readFileSync(CPU_FILE, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number)
  return user + system
}

/** The import by the command on a pseudo-terminal, with the longest time between two drawings of its progress bar. */
async function importOnTerminal(
  service: Service,
  key: string,
  file: string,
  checkFirst: boolean,
): Promise<{ ms: number; cpuSeconds: number; longestStillMs: number }> {
  const drawn: number[] = []
  const command = [...TIME, NODE, BIN, 'import', '--yes', ...(checkFirst ? [] : ['--no-check']), file].map((part) => `'${part}'`).join(' ')
  const run = await timed('script', ['-qefc', command, '/dev/null'], { BOOKS_URL: service.baseUrl, BOOKS_KEY: key }, (chunk) => {
    for (let at = chunk.indexOf(CLEAR_LINE); at !== -1; at = chunk.indexOf(CLEAR_LINE, at + 1)) drawn.push(performance.now())
  })
  check(run, 'book-catalogue import')
  const gaps = drawn.slice(1).map((at, n) => at - drawn[n]!)
  return { ms: run.ms, cpuSeconds: clientCpuSeconds(), longestStillMs: Math.max(0, ...gaps) }
}

async function curlImport(service: Service, key: string, file: string): Promise<{ ms: number; cpuSeconds: number }> {
  const run = check(
    await timed(
      TIME[0]!,
      [
        ...TIME.slice(1),
        'curl',
        '-sf',
        '-o',
        '/dev/null',
        '-X',
        'POST',
        `${service.baseUrl}/books/import`,
        '-H',
        `Authorization: ${key}`,
        '-H',
        'Content-Type: text/csv',
        '--data-binary',
        `@${file}`,
      ],
      {},
    ),
    'curl',
  )
  return { ms: run.ms, cpuSeconds: clientCpuSeconds() }
}

interface EngineFigures {
  engine: string
  curlSeconds: Spread
  commandSeconds: Spread
  /** The command's median over curl's. */
  ratio: number
  /** CPU time of the client process alone: curl's, and the command's. */
  curlCpuSeconds: Spread
  commandCpuSeconds: Spread
  longestStillMs: Spread
  checkedSeconds: Spread
  findMs: Spread
  findCpuMs: Spread
  /** The same request by curl: the service's part, and curl's start. */
  curlFindMs: Spread
  nodeMs: Spread
}

async function measure(engine: Engine, file: string, rows: number, runs: number, finds: number): Promise<EngineFigures> {
  const curl: { ms: number; cpuSeconds: number }[] = []
  const command: { ms: number; cpuSeconds: number }[] = []
  const still: number[] = []
  const checked: number[] = []
  for (let run = 0; run < runs; run++) {
    // In turns, each into a fresh store, and in the other order every second run, so that
    // neither gets the machine's quieter moments, nor a store just dropped, only.
    const curlFirst = run % 2 === 0
    if (curlFirst) curl.push(await withService(engine, (service, key) => curlImport(service, key, file)))
    const plain = await withService(engine, (service, key) => importOnTerminal(service, key, file, false))
    if (!curlFirst) curl.push(await withService(engine, (service, key) => curlImport(service, key, file)))
    command.push(plain)
    still.push(plain.longestStillMs)
    const withCheck = await withService(engine, (service, key) => importOnTerminal(service, key, file, true))
    checked.push(withCheck.ms)
    still.push(withCheck.longestStillMs)
    console.error(
      `${engine.name} run ${run + 1}: curl ${curl.at(-1)!.ms.toFixed(0)} ms, command ${plain.ms.toFixed(0)} ms, with the check ${withCheck.ms.toFixed(0)} ms; load ${loadavg()[0]!.toFixed(1)}`,
    )
  }
  const finding = await withService(engine, async (service, key, dbUrl) => {
    await curlImport(service, key, file)
    // What a find costs the service once it has taken the books in, not while it still indexes them.
    await untilSummarised(dbUrl, (line) => console.error(line))
    const env = { BOOKS_URL: service.baseUrl, BOOKS_KEY: key }
    const findTimes: number[] = []
    const findCpu: number[] = []
    const curlTimes: number[] = []
    const nodeTimes: number[] = []
    // A word that finds a book or a few, as a person looks for one; curl asks the same, to tell
    // the service's part. The first run fills the compile cache, as any earlier use of the command has.
    check(await timed(NODE, [BIN, 'find', '4242', '--json'], env), 'book-catalogue find')
    for (let n = 0; n < finds; n++) {
      const word = String((n * 7919) % rows)
      const found = check(await timed(TIME[0]!, [...TIME.slice(1), NODE, BIN, 'find', word, '--limit', '20'], env), 'book-catalogue find')
      findTimes.push(found.ms)
      findCpu.push(clientCpuSeconds() * 1000)
      const asked = ['-sf', '-o', '/dev/null', `${service.baseUrl}/books?q=${word}&limit=20`, '-H', `Authorization: ${key}`]
      curlTimes.push(check(await timed('curl', asked, {}), 'curl find').ms)
      nodeTimes.push(check(await timed(NODE, ['-e', '0'], {}), 'node -e 0').ms)
    }
    return { findMs: spread(findTimes), findCpuMs: spread(findCpu), curlFindMs: spread(curlTimes), nodeMs: spread(nodeTimes) }
  })
  const curlSeconds = spread(curl.map((one) => one.ms / 1000))
  const commandSeconds = spread(command.map((one) => one.ms / 1000))
  return {
    engine: engine.name,
    curlSeconds,
    commandSeconds,
    ratio: commandSeconds.median / curlSeconds.median,
    curlCpuSeconds: spread(curl.map((one) => one.cpuSeconds)),
    commandCpuSeconds: spread(command.map((one) => one.cpuSeconds)),
    longestStillMs: spread(still),
    checkedSeconds: spread(checked.map((ms) => ms / 1000)),
    ...finding,
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '100000' },
      runs: { type: 'string', default: '3' },
      finds: { type: 'string', default: '20' },
      only: { type: 'string', default: 'sqlite' },
    },
  })
  const rows = Number(values.rows)
  await buildCommand()
  const dir = mkdtempSync(join(tmpdir(), 'bench-client-file-'))
  const file = join(dir, 'books.csv')
  const lines = ['title,author,year']
  for (let n = 0; n < rows; n++) {
    const { title, author, year } = sampleBook(n)
    lines.push(`${title},${author},${year}`)
  }
  writeFileSync(file, `${lines.join('\n')}\n`)
  const machine = describeMachine()
  const figures: EngineFigures[] = []
  try {
    for (const engine of ENGINES.filter((candidate) => values.only.split(',').includes(candidate.name))) {
      figures.push(await measure(engine, file, rows, Number(values.runs), Number(values.finds)))
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  console.log(
    `\n${machine.cpu}, ${machine.cores} cores, Node.js ${machine.node}; load average ${machine.loadAverageAtStart.join(', ')} at the start, ${loadavg()
      .map((load) => load.toFixed(2))
      .join(', ')} at the end\n`,
  )
  console.log(
    '| engine | curl --data-binary, s | book-catalogue import --no-check, s | ratio | client CPU: curl, command, s | progress bar still at most, ms | import with its check, s | find from start to exit, ms | its CPU, ms | the same by curl, ms | node -e 0, ms |',
  )
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
  for (const f of figures) {
    const cells = [
      f.engine,
      describeSpread(f.curlSeconds, 2),
      describeSpread(f.commandSeconds, 2),
      f.ratio.toFixed(2),
      `${f.curlCpuSeconds.median.toFixed(2)}, ${f.commandCpuSeconds.median.toFixed(2)}`,
      describeSpread(f.longestStillMs),
      describeSpread(f.checkedSeconds, 2),
      describeSpread(f.findMs),
      describeSpread(f.findCpuMs),
      describeSpread(f.curlFindMs),
      describeSpread(f.nodeMs),
    ]
    console.log(`| ${cells.join(' | ')} |`)
  }
}

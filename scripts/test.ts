/**
 * `npm test`'s runner: runs the test files as `node --test` does, each with the spec reporter, but
 * in a few processes that each take the next file once done with one, instead of a process for
 * every file: a fresh process loads the service's thousand modules again and runs their code
 * cold, at a cost in CPU that docs/operations.md#tests-that-need-more-than-node gives. A file's
 * tests still run one at a time, and what a file leaves in the support modules is cleaned up
 * before the next file runs (test/support/file-end.ts).
 *
 * node scripts/test.ts [--concurrency=N] [--global-setup=FILE] [--own-process=PATTERN]... [--file-timeout=S] PATTERN...
 *
 * A file that matches an --own-process pattern runs in a process of its own, as under `node --test`:
 * for what happens once per process, such as a library's warning. A file not done after
 * --file-timeout seconds (300) fails, naming what its process still holds open, and its process
 * is killed: a file's run ends only once nothing of it is left open, and one that leaves a
 * connection or a timer behind would otherwise hold the whole run for ever.
 */
import { fork } from 'node:child_process'
import { glob, mkdir, readFile, writeFile } from 'node:fs/promises'
import { basename, dirname, matchesGlob, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs, stripVTControlCharacters } from 'node:util'
import { NO_TESTS, type FileEnd, type RunnerMessage, type WorkerMessage } from './test/worker-protocol.ts'

interface GlobalSetup {
  globalSetup?(): Promise<void>
  globalTeardown?(): Promise<void>
}

const WORKER = new URL('test/worker.ts', import.meta.url)
/** How long each file took in the last run: the longest start first, so that none is left last. */
const DURATIONS = resolve('node_modules/.cache/test-durations.json')
const SUMMARY_LINE = /^ℹ (?:tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) /

const { values, positionals } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '4' },
    'global-setup': { type: 'string' },
    'own-process': { type: 'string', multiple: true, default: [] },
    'file-timeout': { type: 'string', default: '300' },
  },
  allowPositionals: true,
})
const concurrency = Number(values.concurrency)
if (!Number.isInteger(concurrency) || concurrency < 1)
  throw new Error(`--concurrency must be a positive integer, not ${values.concurrency}`)
const fileTimeoutMs = Number(values['file-timeout']) * 1000
if (!(fileTimeoutMs > 0)) throw new Error(`--file-timeout must be a positive number of seconds, not ${values['file-timeout']}`)

const files = new Set<string>()
for (const pattern of positionals)
  for await (const file of glob(pattern, { exclude: (path) => basename(path) === 'node_modules' })) files.add(file)
if (files.size === 0) {
  console.error(`no test file matches ${positionals.join(' ')}`)
  process.exit(1)
}

const lastDurations = await readFile(DURATIONS, 'utf8').then(
  (text) => JSON.parse(text) as Record<string, number>,
  (): Record<string, number> => ({}),
)
// A file not timed yet may be a long one: it goes first.
const queue = [...files].sort((a, b) => (lastDurations[b] ?? Infinity) - (lastDurations[a] ?? Infinity) || a.localeCompare(b))

const setup: GlobalSetup =
  values['global-setup'] === undefined ? {} : ((await import(pathToFileURL(resolve(values['global-setup'])).href)) as GlobalSetup)
await setup.globalSetup?.()

const started = performance.now()
const totals = { ...NO_TESTS }
const failedFiles: string[] = []
const durations: Record<string, number> = {}

/** A file's end, with what the reporter wrote of it. */
interface FileDone extends FileEnd {
  output: string
}

function report(done: FileDone): void {
  process.stdout.write(
    `${done.output
      .split('\n')
      .filter((line) => !SUMMARY_LINE.test(stripVTControlCharacters(line)))
      .join('\n')
      .trimEnd()}\n`,
  )
  for (const key of Object.keys(totals) as (keyof typeof totals)[]) totals[key] += done.counts[key]
  if (done.counts.failed + done.counts.cancelled > 0) failedFiles.push(done.file)
  durations[done.file] = Math.round(done.durationMs)
}

interface Worker {
  /** Runs `file`; a worker that dies fails it. */
  run(file: string): Promise<FileDone>
  /** Lets the worker go, and waits for it to end. */
  stop(): Promise<void>
  alive(): boolean
}

function startWorker(): Worker {
  const child = fork(WORKER, { stdio: 'inherit' })
  let ended: string | undefined
  const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve((ended = signal ?? `code ${code}`))))
  const ready = new Promise<boolean>((resolve) => {
    child.once('message', () => resolve(true))
    void exited.then(() => resolve(false))
  })
  let output = ''
  let answer: ((end: FileEnd) => void) | undefined
  let holds: ((resources: string[]) => void) | undefined
  child.on('message', (message: WorkerMessage) => {
    if (message === 'ready') return
    if ('output' in message) output += message.output
    else if ('holding' in message) holds?.(message.holding)
    else answer?.(message.end)
  })
  const failed = (file: string, why: string, durationMs: number): FileDone => ({
    file,
    output: `${output}✖ ${file}: ${why}\n`,
    counts: { ...NO_TESTS, tests: 1, failed: 1 },
    durationMs,
  })
  /** What the worker's event loop still waits for; nothing if it does not say within a second. */
  const holding = () =>
    new Promise<string[]>((resolve) => {
      holds = resolve
      if (child.connected) child.send('holding' satisfies RunnerMessage)
      setTimeout(() => resolve([]), 1000).unref()
    })
  return {
    async run(file) {
      output = ''
      const began = performance.now()
      const answered = new Promise<FileEnd>((resolve) => (answer = resolve))
      if (await ready) child.send({ file } satisfies RunnerMessage)
      let timer: NodeJS.Timeout | undefined
      const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), fileTimeoutMs)))
      const end = await Promise.race([answered, exited.then(() => undefined), timedOut])
      clearTimeout(timer)
      if (end === 'timeout') {
        const open = await holding()
        child.kill('SIGKILL')
        await exited
        return failed(
          file,
          `not done after ${fileTimeoutMs / 1000} s, its process still holding ${open.join(', ') || 'nothing it could name'}`,
          // Timed as long as it ran, so that the next run starts it first.
          performance.now() - began,
        )
      }
      if (end !== undefined) return { ...end, output }
      return failed(file, `its process ended (${ended}) before its tests did`, performance.now() - began)
    },
    async stop() {
      if (child.connected) child.disconnect()
      await exited
    },
    alive: () => ended === undefined,
  }
}

/** Takes files from the queue until it is empty, each in the same worker unless it needs one of its own or the last died. */
async function lane(): Promise<void> {
  let worker: Worker | undefined
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    const alone = values['own-process'].some((pattern) => matchesGlob(file, pattern))
    if (worker !== undefined && (alone || !worker.alive())) {
      await worker.stop()
      worker = undefined
    }
    worker ??= startWorker()
    report(await worker.run(file))
    if (alone) {
      await worker.stop()
      worker = undefined
    }
  }
  await worker?.stop()
}

await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, lane))

const lines = [
  `tests ${totals.tests}`,
  `pass ${totals.passed}`,
  `fail ${totals.failed}`,
  `cancelled ${totals.cancelled}`,
  `skipped ${totals.skipped}`,
  `todo ${totals.todo}`,
  `files ${files.size}`,
  `duration_ms ${(performance.now() - started).toFixed(0)}`,
]
console.log(lines.map((line) => `ℹ ${line}`).join('\n'))
if (failedFiles.length > 0) console.log(`✖ failing files:\n${failedFiles.map((file) => `  ${file}`).join('\n')}`)
await setup.globalTeardown?.()

await mkdir(dirname(DURATIONS), { recursive: true })
await writeFile(DURATIONS, JSON.stringify({ ...lastDurations, ...durations }))
if (failedFiles.length > 0) process.exitCode = 1

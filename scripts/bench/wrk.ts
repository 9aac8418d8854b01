import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { cpuSeconds } from './processes.ts'

const run = promisify(execFile)

/**
 * What `workload` sends next, after `run`: for paths each sent once, the ones not sent yet.
 */
export function afterRun(workload: Workload, run: Run): Workload {
  if (!workload.once || workload.paths === undefined) return workload
  const paths = workload.paths.slice(Math.min(run.pathsSent, workload.paths.length - 1))
  return { ...workload, path: paths[0]!, paths }
}

/** One kind of request, as the load generator sends it. */
export interface Workload {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  path: string
  headers?: Record<string, string>
  body?: string
  /**
   * Paths to send instead of `path`, one per request: cycled through, or with `once`, each
   * sent once and the last one repeated after that (its answers then show up as errors).
   */
  paths?: string[]
  once?: boolean
  /** Bodies to send instead of `body`, one per request, cycled through. */
  bodies?: string[]
  /** Every answer is a refusal (400 or above), as the step asks: wrk counts each one as an error. */
  refused?: boolean
}

/** One run of wrk against one server. */
export interface Run {
  requestsPerSecond: number
  /** CPU time the server used per request: unlike a rate, barely moved by the machine's other load. */
  cpuMicrosecondsPerRequest: number
  /** What the server's JavaScript heap allocated per request, where the caller counted it. */
  bytesPerRequest?: number
  p50Ms: number
  p99Ms: number
  requests: number
  /** Answers with a status of 400 or above, and socket errors and timeouts. */
  errors: number
  /** Of the workload's `paths`, how many went out, answered or not. */
  pathsSent: number
}

export interface LoadOptions {
  connections: number
  /** Seconds of load in each run. */
  durationSeconds: number
  /** Interleaved runs of each measurement. */
  runs: number
  /** CPUs wrk runs on, as `taskset -c` takes them; anywhere when absent. */
  cpus?: string | undefined
}

/** Lua's string escapes are not JSON's beyond ASCII: the scripts only ever carry ASCII. */
function luaString(text: string): string {
  if (!/^[\x20-\x7e]*$/.test(text)) throw new Error(`not printable ASCII: ${text.slice(0, 40)}`)
  return JSON.stringify(text)
}

// wrk hands the summary to done() in its main thread, and latencies in microseconds; the count
// of paths sent lives in the thread's own Lua state, read back through setup()'s handle.
const REPORT = `
local threads = {}
setup = function(thread) table.insert(threads, thread) end
done = function(summary, latency, requests)
  local e = summary.errors
  local sent = 0
  for _, thread in ipairs(threads) do sent = sent + (thread:get("n") or 0) end
  io.write(string.format('BENCH_RESULT {"requests":%d,"durationUs":%d,"errors":%d,"p50Us":%d,"p99Us":%d,"sent":%d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99), sent))
end
`

/** The wrk script for `workload`: method, headers and body set once, paths chosen per request. */
export function luaScript(workload: Workload): string {
  const lines = [`wrk.method = ${luaString(workload.method)}`]
  const json = workload.body !== undefined || workload.bodies !== undefined
  const headers = { ...(json ? { 'Content-Type': 'application/json' } : {}), ...workload.headers }
  for (const [name, value] of Object.entries(headers)) lines.push(`wrk.headers[${luaString(name)}] = ${luaString(value)}`)
  if (workload.body !== undefined) lines.push(`wrk.body = ${luaString(workload.body)}`)
  // Without request(), wrk formats the request once and sends the same bytes every time.
  if (workload.paths !== undefined || workload.bodies !== undefined) {
    // n is global so that done() can read it.
    lines.push('n = 0')
    let path = 'nil'
    let body = 'nil'
    if (workload.paths !== undefined) {
      lines.push(`local paths = { ${workload.paths.map(luaString).join(', ')} }`)
      path = `paths[${workload.once ? 'math.min(n, #paths)' : '(n - 1) % #paths + 1'}]`
    }
    if (workload.bodies !== undefined) {
      lines.push(`local bodies = { ${workload.bodies.map(luaString).join(', ')} }`)
      body = 'bodies[(n - 1) % #bodies + 1]'
    }
    lines.push(`request = function()\n  n = n + 1\n  return wrk.format(nil, ${path}, nil, ${body})\nend`)
  }
  return lines.join('\n') + '\n' + REPORT
}

/**
 * Loads the server at `baseUrl`, whose process is `pid`, with wrk: one thread (one core is all
 * it gets), `connections` connections, for `seconds`.
 */
export async function wrk(baseUrl: string, pid: number, workload: Workload, load: LoadOptions, seconds: number): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'book-bench-wrk-'))
  try {
    const script = join(dir, 'workload.lua')
    writeFileSync(script, luaScript(workload))
    const args = ['-t1', `-c${load.connections}`, `-d${seconds}s`, '--timeout', '5s', '-s', script, baseUrl + workload.path]
    const [command, commandArgs] = load.cpus === undefined ? ['wrk', args] : ['taskset', ['-c', load.cpus, 'wrk', ...args]]
    const cpuBefore = cpuSeconds(pid)
    const { stdout } = await run(command, commandArgs, { timeout: (seconds + 30) * 1000 })
    const cpu = cpuSeconds(pid) - cpuBefore
    const line = stdout.split('\n').find((l) => l.startsWith('BENCH_RESULT '))
    if (line === undefined) throw new Error(`wrk printed no result:\n${stdout}`)
    const result = JSON.parse(line.slice('BENCH_RESULT '.length)) as {
      requests: number
      durationUs: number
      errors: number
      p50Us: number
      p99Us: number
      sent: number
    }
    return {
      requestsPerSecond: result.requests / (result.durationUs / 1e6),
      cpuMicrosecondsPerRequest: (cpu * 1e6) / Math.max(1, result.requests),
      p50Ms: result.p50Us / 1000,
      p99Ms: result.p99Us / 1000,
      requests: result.requests,
      errors: result.errors,
      pathsSent: result.sent,
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { TEST_PASSWORD, TEST_SECRET, TEST_USERNAME } from '../helpers.ts'
import { suiteEnv } from './child-env.ts'
import { atFileEnd } from './file-end.ts'
import { inReadOnlyFolder } from './read-only.ts'

const INSTALL = fileURLToPath(new URL('../..', import.meta.url))
const MAIN = join(INSTALL, 'src', 'main.ts')
/** After this long a stopped service that has not exited is killed. */
const STOP_TIMEOUT_MS = 5000

export type LogLine = Record<string, unknown> & { msg?: string; pid?: number }
export interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
}

/** `src/main.ts` in a process of its own, as `npm start` runs it, with its log parsed. */
export interface ServiceProcess {
  child: ChildProcess
  /** Its working directory: where `sqlite:books.db` and `.env` are found. */
  dir: string
  /** Its stdout, a parsed JSON log line each. */
  lines: LogLine[]
  /** Everything it wrote to stdout and stderr so far. */
  output(): string
  /** The first line, already written or still to come, that `matches`. */
  waitForLine(matches: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>
  /** The port of the first `Server listening at` line. */
  port(): Promise<number>
  exited: Promise<Exit>
  /** Sends `signal` (and SIGKILL if it lingers); resolves once the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<Exit>
}

export interface ListeningService extends ServiceProcess {
  url: string
}

export interface SpawnOptions {
  /** Defaults to a fresh temporary directory. */
  cwd?: string
}

/** Every service this test file started, with the directory made for it, if any. */
const started = new Set<{ service: ServiceProcess; ownDir: boolean; group: boolean }>()

// A test that fails half-way may leave its service running: nothing outlives the file.
atFileEnd(async () => {
  await Promise.all([...started].map(({ service }) => service.stop('SIGKILL')))
  // A process npm started outlives npm when the signal did not reach it, and would hold the
  // pipes of the log open: the whole process group goes.
  for (const { service, group } of started) if (group) killGroup(service.child.pid!)
  for (const { service, ownDir } of started) if (ownDir) rmSync(service.dir, { recursive: true, force: true })
  started.clear()
})

const isListening = (line: LogLine) => /^Server listening at /.test(line.msg ?? '')

/** The service's environment in tests: the test secret and credentials, `dbUrl`, and `extra` over them. */
export function serviceEnv(dbUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DB_URL: dbUrl,
    DB_POOL_SIZE: '2',
    SECRET_TOKEN: TEST_SECRET,
    AUTH_USERNAME: TEST_USERNAME,
    AUTH_PASSWORD: TEST_PASSWORD,
    LOG_LEVEL: 'info',
    PASSWORD_HASH_COST: '10',
    ...extra,
  }
}

/**
 * Starts the service on a free port of 127.0.0.1 with `env` as its whole environment
 * (beside what `suiteEnv` passes on), so tests do not depend on the machine's.
 */
export function spawnService(env: Record<string, string> = {}, options: SpawnOptions = {}): ServiceProcess {
  const cwd = options.cwd ?? mkdtempSync(join(tmpdir(), 'books-service-'))
  return launch(process.execPath, [MAIN], { cwd, env, ownDir: options.cwd === undefined, group: false })
}

export interface NpmStartOptions {
  /** Runs npm in a mount namespace of its own in which the install is mounted read-only. */
  readOnlyInstall?: boolean
}

/**
 * `npm start` in the install, as an operator runs it, with `env` as its whole environment
 * (beside `suiteEnv`, and HOME, which npm needs): `child` is the npm process, and relative paths in
 * `env` are relative to the install.
 */
export function spawnNpmStart(env: Record<string, string> = {}, options: NpmStartOptions = {}): ServiceProcess {
  const [command, args] = options.readOnlyInstall
    ? // unshare and sh each replace themselves with the next program, so the child is npm itself.
      inReadOnlyFolder(INSTALL, 'exec npm start')
    : ['npm', ['start']]
  return launch(command, args, { cwd: INSTALL, env: { HOME: process.env.HOME ?? '/', ...env }, ownDir: false, group: true })
}

interface LaunchOptions {
  cwd: string
  env: Record<string, string>
  /** Whether `cwd` was made for this service, to be removed with it. */
  ownDir: boolean
  /** Whether the process leads a process group of its own, which the end of the file kills whole. */
  group: boolean
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err
  }
}

function launch(command: string, args: string[], { cwd, env, ownDir, group }: LaunchOptions): ServiceProcess {
  const child = spawn(command, args, {
    cwd,
    detached: group,
    env: {
      ...suiteEnv(),
      HOST: '127.0.0.1',
      PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: LogLine[] = []
  const waiters = new Set<() => void>()
  let output = ''
  child.stdout.on('data', (chunk) => (output += chunk))
  child.stderr.on('data', (chunk) => (output += chunk))
  createInterface({ input: child.stdout }).on('line', (text) => {
    try {
      lines.push(JSON.parse(text))
    } catch {
      lines.push({ msg: text })
    }
    for (const wake of waiters) wake()
  })
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))

  const waitForLine = (matches: (line: LogLine) => boolean, timeoutMs = 60_000) =>
    new Promise<LogLine>((resolve, reject) => {
      const check = () => {
        const found = lines.find(matches)
        if (!found) return
        clearTimeout(timer)
        waiters.delete(check)
        resolve(found)
      }
      const timer = setTimeout(() => {
        waiters.delete(check)
        reject(new Error(`no such log line within ${timeoutMs} ms; output:\n${output}`))
      }, timeoutMs)
      waiters.add(check)
      check()
    })

  const service: ServiceProcess = {
    child,
    dir: cwd,
    lines,
    output: () => output,
    waitForLine,
    exited,
    async port() {
      const line = await waitForLine(isListening)
      return Number(new URL(line.msg!.slice('Server listening at '.length)).port)
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal)
        const killer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS)
        await exited
        clearTimeout(killer)
      }
      return exited
    },
  }
  started.add({ service, ownDir, group })
  return service
}

/** Spawns the service and resolves once it listens; fails with its output when it exits first. */
export async function startService(env: Record<string, string> = {}, options: SpawnOptions = {}): Promise<ListeningService> {
  const service = spawnService(env, options)
  const failed = service.exited.then((exit) => {
    throw new Error(`the service exited (${JSON.stringify(exit)}) before listening:\n${service.output()}`)
  })
  try {
    const port = await Promise.race([service.port(), failed])
    return { ...service, url: `http://127.0.0.1:${port}` }
  } catch (err) {
    await service.stop('SIGKILL')
    throw err
  }
}

/** Runs the service to its exit: for configurations that must refuse to start. */
export async function runToExit(env: Record<string, string>, options: SpawnOptions = {}): Promise<{ code: number | null; output: string }> {
  const service = spawnService(env, options)
  const { code } = await service.exited
  return { code, output: service.output() }
}

export interface Answer {
  status: number
  headers: Headers
  body: { status: number; message: string; data: any }
}

/** A JSON request to a running service; `token` goes in the Authorization header. */
export async function call(
  service: { url: string },
  method: string,
  path: string,
  { token, body, headers = {} }: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const res = await fetch(new URL(path, service.url), {
    method,
    headers: {
      ...(token === undefined ? {} : { authorization: token }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, headers: res.headers, body: (await res.json()) as Answer['body'] }
}

export async function login(service: { url: string }, username = TEST_USERNAME, password = TEST_PASSWORD): Promise<string> {
  const res = await call(service, 'POST', '/token', { body: { username, password } })
  if (res.status !== 200) throw new Error(`login failed: ${JSON.stringify(res.body)}`)
  return res.body.data.token
}

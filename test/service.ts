import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))
/** The Node that runs the tests (24), not whatever `node` is on the PATH. */
export const NODE = process.execPath
export const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url))

export interface RunningService {
  url: string
  child: ChildProcess
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string
  /** Sends `signal` and resolves with the exit code once the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

function spawnMain(env: Record<string, string>, cwd: string) {
  const child = spawn(NODE, [MAIN], {
    cwd,
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  return { child, exited, output: () => output }
}

/**
 * Starts `src/main.ts` as `npm start` does, on a free port, and resolves once it
 * logs the address it listens on. `env` replaces the environment, so tests are
 * independent of the machine's.
 */
export async function startService(env: Record<string, string>, { cwd = ROOT, timeoutMs = 15_000 } = {}): Promise<RunningService> {
  const { child, exited, output } = spawnMain(env, cwd)
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${output()}`)), timeoutMs)
    const look = () => {
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output())
      if (match) {
        clearTimeout(timer)
        resolve(match[1]!)
      }
    }
    child.stdout!.on('data', look)
    exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`service exited with ${code}:\n${output()}`))
    })
  })

  return {
    url,
    child,
    output,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    },
  }
}

/** Runs `src/main.ts` to its exit (for configurations that must refuse to start). */
export async function runToExit(env: Record<string, string>, { cwd = ROOT } = {}): Promise<{ code: number | null; output: string }> {
  const { exited, output } = spawnMain(env, cwd)
  const code = await exited
  return { code, output: output() }
}

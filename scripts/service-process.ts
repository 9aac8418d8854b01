import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
/** The project's own Node, which runs TypeScript; the system one may be older. */
const NODE = `${ROOT}node_modules/.bin/node`

export const SERVICE_USERNAME = 'librarian'
export const SERVICE_PASSWORD = 'correct horse battery staple'

export interface ServiceProcess {
  child: ChildProcess
  port: number
  baseUrl: string
  /** What the process wrote to stdout and stderr so far. */
  output(): string
  /** Resolves with the exit code or signal once the process has ended. */
  exited: Promise<number | NodeJS.Signals | null>
}

/** Starts `src/main.ts` on a free loopback port and resolves once it logs that it listens (LOG_LEVEL info or finer). */
export function startService(env: Record<string, string>, startTimeoutMs = 15_000): Promise<ServiceProcess> {
  const child = spawn(NODE, ['src/main.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      SECRET_TOKEN: 'a-process-test-secret-of-at-least-32-bytes',
      AUTH_USERNAME: SERVICE_USERNAME,
      AUTH_PASSWORD: SERVICE_PASSWORD,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  /** Enough to show why a start failed; a long run's request log is drained, not kept. */
  const KEEP = 64 * 1024
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? code)),
  )
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`the service did not start within ${startTimeoutMs} ms:\n${output}`))
    }, startTimeoutMs)
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-KEEP)
      const match = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output)
      if (match) {
        clearTimeout(timer)
        const port = Number(match[1])
        resolve({ child, port, baseUrl: `http://127.0.0.1:${port}`, output: () => output, exited })
      }
    }
    child.stdout.on('data', collect)
    child.stderr.on('data', collect)
    void exited.then((how) => {
      clearTimeout(timer)
      reject(new Error(`the service exited (${how}) before listening:\n${output}`))
    })
  })
}

export async function login(baseUrl: string): Promise<string> {
  const res = await fetch(`${baseUrl}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: SERVICE_USERNAME, password: SERVICE_PASSWORD }),
  })
  if (res.status !== 200) throw new Error(`login failed with ${res.status}`)
  return ((await res.json()) as { data: { token: string } }).data.token
}

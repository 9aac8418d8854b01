import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { TEST_PASSWORD, TEST_SECRET, TEST_USERNAME } from '../helpers.ts'

const MAIN = new URL('../../src/main.ts', import.meta.url).pathname

/** A running `src/main.ts`, as an operator would start it. */
export interface Instance {
  url: string
  child: ChildProcess
  stop(): Promise<void>
}

/** The service's environment: every instance of a test shares the secret and the credentials. */
export function instanceEnv(dbUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    PORT: '0',
    HOST: '127.0.0.1',
    DB_URL: dbUrl,
    DB_POOL_SIZE: '2',
    SECRET_TOKEN: TEST_SECRET,
    AUTH_USERNAME: TEST_USERNAME,
    AUTH_PASSWORD: TEST_PASSWORD,
    LOG_LEVEL: 'info',
    ...extra,
  }
}

/** Starts the service and resolves once it logs the address it listens on. */
export async function startInstance(env: Record<string, string>, timeoutMs = 20_000): Promise<Instance> {
  const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exited = once(child, 'exit')

  const listening = new Promise<string>((resolve) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = /^Server listening at (http:\/\/\S+)$/.exec(parseLog(line)?.msg ?? '')
      if (match) resolve(match[1]!)
    })
  })
  const failed = exited.then(([code]) => {
    throw new Error(`the service exited with ${code} before listening: ${stderr.trim()}`)
  })
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`the service did not listen within ${timeoutMs} ms`)), timeoutMs)
  })
  try {
    const url = await Promise.race([listening, failed, late])
    return { url, child, stop: () => stop(child, exited) }
  } catch (err) {
    await stop(child, exited)
    throw err
  } finally {
    clearTimeout(timer)
  }
}

function parseLog(line: string): { msg?: string } | undefined {
  try {
    return JSON.parse(line)
  } catch {
    return undefined
  }
}

async function stop(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  child.kill('SIGTERM')
  const killer = setTimeout(() => child.kill('SIGKILL'), 3000)
  await exited
  clearTimeout(killer)
}

/** The exit code and standard error of a service that is expected to refuse to start. */
export async function runUntilExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const [code] = (await once(child, 'exit')) as [number | null]
  return { code, stderr }
}

export interface Answer {
  status: number
  headers: Headers
  body: { status: number; message: string; data: any }
}

/** A JSON request to an instance; `token` goes in the Authorization header. */
export async function call(
  instance: Instance,
  method: string,
  path: string,
  { token, body, headers = {} }: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const res = await fetch(new URL(path, instance.url), {
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

export async function login(instance: Instance): Promise<string> {
  const res = await call(instance, 'POST', '/token', { body: { username: TEST_USERNAME, password: TEST_PASSWORD } })
  if (res.status !== 200) throw new Error(`login failed: ${JSON.stringify(res.body)}`)
  return res.body.data.token
}

import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { TEST_PASSWORD, TEST_SECRET, TEST_USERNAME } from './helpers.ts'

const MAIN = new URL('../src/main.ts', import.meta.url).pathname

export type LogLine = Record<string, unknown> & { msg?: string; pid?: number }

/** The service in a process of its own, as `npm start` runs it, with its log lines parsed. */
export interface ServiceProcess {
  child: ChildProcess
  dir: string
  lines: LogLine[]
  /** The first line, already written or still to come, that `matches`. */
  waitForLine(matches: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>
  /** The port of the first `Server listening at` line. */
  port(): Promise<number>
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** Starts `src/main.ts` on a free port of 127.0.0.1 with a fresh SQLite file in a temporary directory. */
export function startService(env: Record<string, string> = {}): ServiceProcess {
  const dir = mkdtempSync(join(tmpdir(), 'service-'))
  const child = spawn(process.execPath, [MAIN], {
    cwd: dir,
    // Only what the service needs: the test runner's own variables would change how a child behaves.
    env: {
      PATH: process.env.PATH,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      DB_URL: `sqlite:${join(dir, 'books.db')}`,
      SECRET_TOKEN: TEST_SECRET,
      AUTH_USERNAME: TEST_USERNAME,
      AUTH_PASSWORD: TEST_PASSWORD,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: LogLine[] = []
  const waiters = new Set<() => void>()
  let stderr = ''
  child.stderr!.on('data', (chunk) => (stderr += chunk))
  createInterface({ input: child.stdout! }).on('line', (text) => {
    try {
      lines.push(JSON.parse(text))
    } catch {
      lines.push({ msg: text })
    }
    for (const wake of waiters) wake()
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )

  const waitForLine = (matches: (line: LogLine) => boolean, timeoutMs = 20_000) =>
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
        reject(new Error(`no such log line within ${timeoutMs} ms; stderr: ${stderr}\nlines: ${JSON.stringify(lines)}`))
      }, timeoutMs)
      waiters.add(check)
      check()
    })

  return {
    child,
    dir,
    lines,
    waitForLine,
    exited,
    async port() {
      const line = await waitForLine((line) => /^Server listening at /.test(line.msg ?? ''))
      return Number(new URL(line.msg!.slice('Server listening at '.length)).port)
    },
  }
}

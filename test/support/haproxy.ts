import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { STORE_DEADLINE_MS } from '../../src/store/store.ts'

export const HAPROXY = '/usr/sbin/haproxy'
/** How often HAProxy asks each instance's `/readyz`, as a production proxy in front of it would. */
export const CHECK_INTERVAL_MS = 250

export interface Haproxy {
  /** The Unix socket on which it takes HTTP requests for the books backend. */
  socketPath: string
  /** Points server `name` at another port, as service discovery would after a restart. */
  setServer(name: string, port: number): Promise<void>
  /** Resolves once HAProxy's health checks see server `name` as `up` or `down`. */
  waitFor(name: string, state: 'up' | 'down'): Promise<void>
  /** What it wrote to stdout and stderr. */
  output(): string
  stop(): Promise<void>
}

function config(dir: string, servers: Record<string, number>): string {
  return [
    'global',
    `  stats socket ${join(dir, 'admin.sock')} mode 600 level admin`,
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 30s',
    '  timeout server 30s',
    '  timeout http-keep-alive 10s',
    // A check is not failed for being slow on a busy machine, only for being answered 503 or refused:
    // `/readyz` itself answers 503 once the store has not answered within its deadline.
    `  timeout check ${STORE_DEADLINE_MS + 1000}ms`,
    // A refused connection never reached the instance: trying another one is always safe.
    '  retries 3',
    '  option redispatch 1',
    'frontend books',
    `  bind unix@${join(dir, 'books.sock')}`,
    '  default_backend books',
    'backend books',
    '  balance roundrobin',
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    `  default-server check inter ${CHECK_INTERVAL_MS} fall 2 rise 2`,
    ...Object.entries(servers).map(([name, port]) => `  server ${name} 127.0.0.1:${port}`),
    '',
  ].join('\n')
}

/** One command on HAProxy's admin socket, and its answer. */
function command(dir: string, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = ''
    const socket = connect(join(dir, 'admin.sock'))
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (answer += chunk))
    socket.once('error', reject)
    socket.once('close', () => resolve(answer))
    socket.end(`${text}\n`)
  })
}

/** HAProxy from Debian's package in front of `servers` (name to port on 127.0.0.1), in `dir`. */
export async function startHaproxy(dir: string, servers: Record<string, number>): Promise<Haproxy> {
  const file = join(dir, 'haproxy.cfg')
  writeFileSync(file, config(dir, servers))
  const child = spawn(HAPROXY, ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk) => (output += chunk))
  child.stderr.on('data', (chunk) => (output += chunk))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))

  /** Server `name`'s operational state: 2 is running, 0 stopped (HAProxy's `show servers state`). */
  const operationalState = async (name: string): Promise<number | undefined> => {
    const answer = await command(dir, 'show servers state books').catch(() => '')
    const row = answer.split('\n').find((line) => line.split(' ')[3] === name)
    return row === undefined ? undefined : Number(row.split(' ')[5])
  }

  const haproxy: Haproxy = {
    socketPath: join(dir, 'books.sock'),
    async setServer(name, port) {
      const answer = await command(dir, `set server books/${name} addr 127.0.0.1 port ${port}`)
      if (!/changed/.test(answer)) throw new Error(`HAProxy refused the new address of ${name}: ${answer}`)
    },
    async waitFor(name, state) {
      // HAProxy says nothing when a check changes a server's state: its admin socket is asked.
      const wanted = state === 'up' ? 2 : 0
      while ((await operationalState(name)) !== wanted) {
        if (child.exitCode !== null) throw new Error(`HAProxy exited:\n${output}`)
        await sleep(CHECK_INTERVAL_MS / 5)
      }
    },
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
    },
  }
  try {
    for (const name of Object.keys(servers)) await haproxy.waitFor(name, 'up')
  } catch (err) {
    await haproxy.stop()
    throw err
  }
  return haproxy
}

import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'

/** A child process that listens on a port it picked itself. */
export interface Listener {
  pid: number
  port: number
  stop(): Promise<void>
}

const START_TIMEOUT_MS = 30_000

/** The process and every process it started, found through /proc. */
export function processTree(pid: number): number[] {
  const tree = [pid]
  for (let i = 0; i < tree.length; i++) {
    let tasks: string[]
    try {
      tasks = readdirSync(`/proc/${tree[i]}/task`)
    } catch {
      continue
    }
    for (const task of tasks) {
      try {
        const children = readFileSync(`/proc/${tree[i]}/task/${task}/children`, 'utf8').trim()
        if (children !== '') tree.push(...children.split(' ').map(Number))
      } catch {
        // The task ended while it was read.
      }
    }
  }
  return tree
}

function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>()
  let fds: string[]
  try {
    fds = readdirSync(`/proc/${pid}/fd`)
  } catch {
    return inodes
  }
  for (const fd of fds) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))
      if (match) inodes.add(match[1]!)
    } catch {
      // The descriptor was closed while it was read.
    }
  }
  return inodes
}

const TCP_LISTEN = '0A'

/**
 * The TCP port a process (or one it started) listens on. With PORT=0 the service picks a
 * free port and says so only in an info log line, which the measured configuration does not
 * write, so the kernel's socket table is asked instead.
 */
function listeningPort(pid: number): number | undefined {
  const inodes = new Set(processTree(pid).flatMap((p) => [...socketInodes(p)]))
  if (inodes.size === 0) return undefined
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/)
      if (fields[3] === TCP_LISTEN && inodes.has(fields[9]!)) return Number.parseInt(fields[1]!.split(':')[1]!, 16)
    }
  }
  return undefined
}

/** Linux reports CPU time in clock ticks of 1/100 s (USER_HZ) on every common platform. */
const TICKS_PER_SECOND = 100

/** CPU seconds, user and system, used so far by the process and the processes it started. */
export function cpuSeconds(pid: number): number {
  let ticks = 0
  for (const member of processTree(pid)) {
    try {
      // Fields after the parenthesised name: utime and stime are the 12th and 13th.
      const stat = readFileSync(`/proc/${member}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      ticks += Number(fields[11]) + Number(fields[12])
    } catch {
      // The process ended while it was read.
    }
  }
  return ticks / TICKS_PER_SECOND
}

/**
 * Fields of /proc/PID/status given in kB, by name (cheap: no walk of the page tables), or
 * undefined once the process has ended or when one is missing.
 */
function statusKb<N extends string>(pid: number, names: N[]): Record<N, number> | undefined {
  let status: string
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8')
  } catch {
    return undefined
  }
  const found = {} as Record<N, number>
  for (const name of names) {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status)
    if (match === null) return undefined
    found[name] = Number(match[1])
  }
  return found
}

/** Peak resident set size of the process in bytes (VmHWM), or undefined once it has ended. */
export function peakRss(pid: number): number | undefined {
  const kb = statusKb(pid, ['VmHWM'])?.VmHWM
  return kb === undefined ? undefined : kb * 1024
}

/** The resident memory of `pid` in kB, by kind, or undefined once it has ended. */
function resident(pid: number): { anon: number; file: number; shmem: number } | undefined {
  const kb = statusKb(pid, ['RssAnon', 'RssFile', 'RssShmem'])
  return kb && { anon: kb.RssAnon, file: kb.RssFile, shmem: kb.RssShmem }
}

/**
 * The resident memory of the service `pid` while `work` runs, in bytes, as it starts and at its
 * highest. On a SQLite store (`dbUrl`), the pages of files it maps after `work` starts are left
 * out, sampled every 10 ms: SQLite's readers read the store's file through a memory map, and each
 * page they touch counts in the resident set (and in its peak, VmHWM), though it is the operating
 * system's cache of the file, which reads by system call fill as well without counting there. The
 * files it had mapped before (its code) still count. Otherwise, the kernel's own peak (VmHWM).
 */
export async function peakResidentDuring<T>(
  pid: number,
  dbUrl: string,
  work: () => Promise<T>,
): Promise<{ value: T; beforeBytes: number; peakBytes: number }> {
  const start = resident(pid)
  if (!dbUrl.startsWith('sqlite:') || start === undefined) {
    const beforeBytes = peakRss(pid) ?? 0
    const value = await work()
    return { value, beforeBytes, peakBytes: peakRss(pid) ?? 0 }
  }
  const own = ({ anon, shmem }: { anon: number; shmem: number }) => (anon + shmem + start.file) * 1024
  const beforeBytes = own(start)
  let peakBytes = beforeBytes
  const sample = () => {
    const now = resident(pid)
    if (now !== undefined) peakBytes = Math.max(peakBytes, own(now))
  }
  const watch = setInterval(sample, 10)
  try {
    const value = await work()
    sample()
    return { value, beforeBytes, peakBytes }
  } finally {
    clearInterval(watch)
  }
}

export interface ListenerOptions {
  /** Standard output goes to /dev/null, so a chatty child does not cost the machine a pipe. */
  discardStdout?: boolean
  cwd?: string
  /** CPUs the child and every thread it starts may run on, as `taskset -c` takes them. */
  cpus?: string | undefined
}

/**
 * Starts `node args…` with `env` and waits until it listens. Through `taskset`, when pinned:
 * it replaces itself with node, so the pid is node's.
 */
export async function startListener(
  args: string[],
  env: Record<string, string>,
  { discardStdout = false, cwd = process.cwd(), cpus }: ListenerOptions = {},
): Promise<Listener> {
  const [command, commandArgs] = cpus === undefined ? [process.execPath, args] : ['taskset', ['-c', cpus, process.execPath, ...args]]
  const child = spawn(command, commandArgs, { env, cwd, stdio: ['ignore', discardStdout ? 'ignore' : 'pipe', 'pipe'] })
  // The last lines the child wrote, for the error when it does not come up.
  let tail = ''
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-4000)
  }
  child.stdout?.on('data', keep)
  child.stderr!.on('data', keep)
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  let ended = false
  void exited.then(() => {
    ended = true
  })

  const stop = async () => {
    if (!ended) child.kill('SIGTERM')
    await exited
  }

  const deadline = Date.now() + START_TIMEOUT_MS
  for (;;) {
    if (ended) throw new Error(`${args.join(' ')} exited before listening:\n${tail}`)
    const port = child.pid === undefined ? undefined : listeningPort(child.pid)
    if (port !== undefined) return { pid: child.pid!, port, stop }
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`${args.join(' ')} did not listen within ${START_TIMEOUT_MS} ms:\n${tail}`)
    }
    await sleep(50)
  }
}

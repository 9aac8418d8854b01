/**
 * The book-catalogue command, built as `npm run build:client` builds it and run as a user runs
 * it: a process of its own, with a config folder of the test's own.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { atFileEnd } from '../../../../test/support/file-end.ts'
import { temporaryDirectory } from '../../../../test/support/temporary.ts'
import { buildCommand } from '../../build.ts'

export const NODE = fileURLToPath(new URL('../../../../node_modules/.bin/node', import.meta.url))

// Built from the sources as they are, for each test file in a folder of its own: files run at
// once, and a build in the package's own dist/ could be replaced under another file's feet.
let built: Promise<string> | undefined
atFileEnd(() => (built = undefined))

function command(): Promise<string> {
  if (built === undefined) {
    const dir = temporaryDirectory('book-catalogue-built-')
    built = buildCommand(dir).then(() => join(dir, 'book-catalogue.js'))
  }
  return built
}

export interface Run {
  code: number | null
  stdout: string
  stderr: string
}

export interface Cli {
  /** The folder that holds the config folder, as $XDG_CONFIG_HOME. */
  home: string
  /** Runs the command to its end with `args`, `env` over the test's, and `input` on stdin. */
  run(args: string[], options?: { env?: Record<string, string>; input?: string }): Promise<Run>
  /** Starts the command; `stderrLine` waits for a line of its stderr. */
  start(args: string[], options?: { env?: Record<string, string> }): Started
}

export interface Started {
  pid: number
  /** Waits for a line of the command's stdout or stderr that `matches`. */
  line(stream: 'stdout' | 'stderr', matches: (line: string) => boolean): Promise<string>
  kill(signal: NodeJS.Signals): void
  done: Promise<Run>
}

/** The command against the service at `url`, with a config folder of its own, removed when the test ends. */
export async function cliFor(t: TestContext, url: string): Promise<Cli> {
  const bin = await command()
  const home = await mkdtemp(join(tmpdir(), 'book-catalogue-cli-'))
  t.after(() => rm(home, { recursive: true, force: true }))
  const envOf = (env: Record<string, string>) => ({
    PATH: process.env.PATH ?? '',
    HOME: home,
    XDG_CONFIG_HOME: home,
    BOOKS_URL: url,
    ...env,
  })

  const start = (args: string[], { env = {}, input }: { env?: Record<string, string>; input?: string } = {}): Started => {
    const child = spawn(NODE, [bin, ...args], { env: envOf(env), stdio: ['pipe', 'pipe', 'pipe'] })
    // Like a pipe or a file, stdin is not a terminal: what it holds, then its end.
    child.stdin.end(input)
    const output = { stdout: '', stderr: '' }
    const waiters = new Set<() => void>()
    for (const stream of ['stdout', 'stderr'] as const) {
      child[stream].on('data', (chunk: Buffer) => {
        output[stream] += chunk.toString()
        for (const wake of waiters) wake()
      })
    }
    const done = new Promise<Run>((resolve) => child.on('close', (code) => resolve({ code, ...output })))
    return {
      pid: child.pid!,
      done,
      kill: (signal) => child.kill(signal),
      line: (stream, matches) =>
        new Promise((resolve, reject) => {
          const check = () => {
            const line = output[stream].split('\n').find(matches)
            if (line === undefined) return
            waiters.delete(check)
            resolve(line)
          }
          waiters.add(check)
          void done.then(() => (waiters.has(check) ? reject(new Error(`no such line on ${stream}:\n${output[stream]}`)) : undefined))
          check()
        }),
    }
  }

  return {
    home,
    start,
    run: (args, options) => start(args, options).done,
  }
}

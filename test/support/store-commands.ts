import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { suiteEnv } from './child-env.ts'
import { inReadOnlyFolder } from './read-only.ts'

export const INSTALL = fileURLToPath(new URL('../..', import.meta.url))
const SCRIPTS = { backup: 'scripts/backup.ts', restore: 'scripts/restore.ts' }

export interface CommandRun {
  code: number | null
  stdout: string
  stderr: string
}

export interface CommandOptions {
  /** The working directory: where npm is run from, for `npm` runs. */
  cwd?: string
  /** Runs `npm run COMMAND -- …` in the install, as an operator does, instead of its script. */
  npm?: boolean
  /** Runs the script where this folder is mounted read-only (see read-only.ts). */
  readOnlyFolder?: string
}

/** `npm run backup` or `npm run restore` with `args`, `env` as the whole environment beside `suiteEnv`. */
export function runStoreCommand(
  command: keyof typeof SCRIPTS,
  args: string[],
  env: Record<string, string>,
  options: CommandOptions = {},
): Promise<CommandRun> {
  const script = `${INSTALL}${SCRIPTS[command]}`
  const [program, programArgs] = options.npm
    ? ['npm', ['run', '--prefix', INSTALL, command, '--', ...args]]
    : options.readOnlyFolder !== undefined
      ? inReadOnlyFolder(options.readOnlyFolder, 'exec "$@"', [process.execPath, script, ...args])
      : [process.execPath, [script, ...args]]
  const child = spawn(program, programArgs, {
    cwd: options.cwd ?? INSTALL,
    env: {
      ...suiteEnv(),
      ...(options.npm && { HOME: process.env.HOME ?? '/' }),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
}

/** What a store's files hold: equal before and after means the store was not touched. */
export function storeFingerprint(path: string): string {
  const hash = createHash('sha256')
  for (const suffix of ['', '-wal', '-journal']) hash.update(existsSync(path + suffix) ? readFileSync(path + suffix) : `no ${suffix}`)
  return hash.digest('hex')
}

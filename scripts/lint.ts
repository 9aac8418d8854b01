/**
 * `npm run lint`: ESLint with its type-aware rules, Prettier and the check for import circles, run
 * side by side (ESLint alone takes most of the time, on one core). Each one's output is written
 * whole once it ends, so that theirs do not interleave; the run fails when any of them fails.
 */
import { spawn } from 'node:child_process'

const checks: [string, ...string[]][] = [
  ['eslint', '--cache', '--cache-location', 'node_modules/.cache/eslint/', '.'],
  ['prettier', '--check', '--cache', '.'],
  ['dpdm', '--no-warning', '--no-tree', '--exit-code', 'circular:1', 'src/**/*.ts'],
]

function run([command, ...args]: [string, ...string[]]): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    const output: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk))
    child.once('error', (err) => output.push(Buffer.from(`${command}: ${err.message}\n`)))
    child.once('close', (code) => {
      process.stdout.write(Buffer.concat(output))
      resolve(code === 0)
    })
  })
}

const passed = await Promise.all(checks.map(run))
if (passed.includes(false)) process.exitCode = 1

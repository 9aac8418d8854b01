import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { temporaryDirectory } from '../support/temporary.ts'

const RUNNER = fileURLToPath(new URL('../../scripts/test.ts', import.meta.url))
const TEMPORARY = new URL('../support/temporary.ts', import.meta.url).href
const FILE_END = new URL('../support/file-end.ts', import.meta.url).href

interface Ran {
  code: number | null
  stdout: string
  stderr: string
}

/** A folder with `files`, and the runner run in it with `args`. */
async function runnerOn(files: Record<string, string>, args: string[]): Promise<Ran> {
  const dir = temporaryDirectory('test-runner-')
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text)
  const child = spawn(process.execPath, [RUNNER, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? '' } })
  const output = { stdout: '', stderr: '' }
  child.stdout.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()))
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  return { code, ...output }
}

test('runs every file, sums their tests once, and fails naming the files that failed', async () => {
  const run = await runnerOn(
    {
      'setup.mjs': `export async function globalSetup() { process.env.SET_UP = 'yes' }
export async function globalTeardown() { console.log('torn down') }`,
      'passes.test.mjs': `import { test } from 'node:test'
import assert from 'node:assert/strict'
test('sees the global setup', () => assert.equal(process.env.SET_UP, 'yes'))
test('passes', () => {})`,
      'fails.test.mjs': `import { test } from 'node:test'
test('fails', () => { throw new Error('the reason it failed') })`,
    },
    ['--global-setup=setup.mjs', '*.test.mjs'],
  )
  assert.equal(run.code, 1, run.stderr)
  assert.match(run.stdout, /✔ sees the global setup/)
  assert.match(run.stdout, /✖ fails/)
  assert.match(run.stdout, /the reason it failed/)
  assert.equal(run.stdout.match(/ℹ tests /g)?.length, 1, run.stdout)
  assert.match(run.stdout, /ℹ tests 3\nℹ pass 2\nℹ fail 1\n/)
  assert.match(run.stdout, /ℹ files 2\n/)
  assert.match(run.stdout, /✖ failing files:\n {2}fails\.test\.mjs\ntorn down\n$/)
})

test('all passing is a success', async () => {
  const run = await runnerOn({ 'passes.test.mjs': `import { test } from 'node:test'\ntest('passes', () => {})` }, ['*.test.mjs'])
  assert.equal(run.code, 0, run.stdout)
  assert.match(run.stdout, /ℹ tests 1\nℹ pass 1\nℹ fail 0\n/)
})

test('a file whose process dies fails, and the files after it still run', async () => {
  const run = await runnerOn(
    {
      'a-dies.test.mjs': `import { test } from 'node:test'\ntest('passes first', () => {})\ntest('dies', () => new Promise(() => setTimeout(() => process.exit(3), 100)))`,
      'b-runs.test.mjs': `import { test } from 'node:test'\ntest('runs after it', () => {})`,
    },
    ['--concurrency=1', '*.test.mjs'],
  )
  assert.equal(run.code, 1, run.stdout)
  // What ran before the end is told, then the end.
  assert.match(run.stdout, /✔ passes first[^\n]*\n✖ a-dies\.test\.mjs: its process ended \(code 3\) before its tests did/)
  assert.match(run.stdout, /✔ runs after it/)
  assert.match(run.stdout, /ℹ pass 1\nℹ fail 1\n/)
})

test('what a file leaves in the support modules is cleaned up before the next file runs in its process', async () => {
  const dir = temporaryDirectory('test-runner-record-')
  const record = join(dir, 'record.json')
  const run = await runnerOn(
    {
      // The first file to import a support module is cleaned up as under node --test.
      'a-first.test.mjs': `import { test } from 'node:test'
import { temporaryDirectory } from ${JSON.stringify(TEMPORARY)}
test('imports the support module first', () => temporaryDirectory())`,
      'b-leaves.test.mjs': `import { test } from 'node:test'
import { writeFileSync } from 'node:fs'
import { temporaryDirectory } from ${JSON.stringify(TEMPORARY)}
test('leaves a folder', () => writeFileSync(${JSON.stringify(record)}, JSON.stringify({ pid: process.pid, folder: temporaryDirectory() })))`,
      'c-finds.test.mjs': `import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
test('finds it gone, in the same process', () => {
  const { pid, folder } = JSON.parse(readFileSync(${JSON.stringify(record)}, 'utf8'))
  assert.equal(pid, process.pid)
  assert.equal(existsSync(folder), false)
})`,
    },
    ['--concurrency=1', '*.test.mjs'],
  )
  assert.equal(run.code, 0, run.stdout)
  assert.match(run.stdout, /ℹ pass 3\n/)
  assert.ok(JSON.parse(await readFile(record, 'utf8')).folder)
})

test('a file matching --own-process runs in a process of its own; the others share one', async () => {
  const dir = temporaryDirectory('test-runner-pids-')
  const pidTest = (name: string) => `import { test } from 'node:test'
import { writeFileSync } from 'node:fs'
test('writes its pid', () => writeFileSync(${JSON.stringify(dir)} + '/${name}', String(process.pid)))`
  const run = await runnerOn(
    { 'a.test.mjs': pidTest('a'), 'b.test.mjs': pidTest('b'), 'c-alone.test.mjs': pidTest('c'), 'd.test.mjs': pidTest('d') },
    ['--concurrency=1', '--own-process=*-alone.test.mjs', '*.test.mjs'],
  )
  assert.equal(run.code, 0, run.stdout)
  const pid = (name: string) => readFile(join(dir, name), 'utf8')
  const [a, b, c, d] = await Promise.all(['a', 'b', 'c', 'd'].map(pid))
  assert.equal(a, b)
  assert.notEqual(c, a)
  assert.notEqual(d, c)
  assert.notEqual(d, a)
})

// Without the time limit the run would never end: the limit of this test makes that a failure.
test(
  'a file that leaves something open fails after --file-timeout, naming it, and the files after it still run',
  { timeout: 60_000 },
  async () => {
    const run = await runnerOn(
      {
        'a-leaves.test.mjs': `import { test } from 'node:test'
import { createServer } from 'node:net'
test('passes, and leaves a server listening', () => { createServer().listen(0, '127.0.0.1') })`,
        'b-runs.test.mjs': `import { test } from 'node:test'\ntest('runs after it', () => {})`,
      },
      ['--concurrency=1', '--file-timeout=2', '*.test.mjs'],
    )
    assert.equal(run.code, 1, run.stdout)
    assert.match(
      run.stdout,
      /✔ passes, and leaves a server listening[^\n]*\n✖ a-leaves\.test\.mjs: not done after 2 s, its process still holding TCPServerWrap\n/,
    )
    assert.match(run.stdout, /✔ runs after it/)
    assert.match(run.stdout, /✖ failing files:\n {2}a-leaves\.test\.mjs\n/)
  },
)

test('a file whose support modules cannot be cleaned up after it fails', async () => {
  const run = await runnerOn(
    {
      'leaves.test.mjs': `import { test } from 'node:test'
import { atFileEnd } from ${JSON.stringify(FILE_END)}
atFileEnd(() => { throw new Error('could not let go') })
test('passes', () => {})`,
    },
    ['*.test.mjs'],
  )
  assert.equal(run.code, 1, run.stdout)
  assert.match(run.stdout, /✖ leaves\.test\.mjs: cleaning up after it failed: Error: could not let go/)
  assert.match(run.stdout, /✖ failing files:\n {2}leaves\.test\.mjs\n/)
})

test('no file matching is an error', async () => {
  const run = await runnerOn({}, ['*.test.mjs'])
  assert.equal(run.code, 1)
  assert.equal(run.stderr, 'no test file matches *.test.mjs\n')
})

import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const NOTE = fileURLToPath(new URL('../../scripts/install-note.ts', import.meta.url))

/** What the note prints when npm, of this user agent, runs it as it installs. */
function note(userAgent: string): string {
  const run = spawnSync(process.execPath, [NOTE], { env: { npm_config_user_agent: userAgent }, encoding: 'utf8' })
  assert.equal(run.status, 0, run.stderr)
  return run.stdout
}

test('npm on an older Node.js: one line saying the project runs on its own', () => {
  const lines = note('npm/11.6.2 node/v20.19.5 linux x64 workspaces/false').trim().split('\n')
  assert.equal(lines.length, 1)
  assert.match(lines[0]!, /^npm runs on Node\.js v20\.19\.5; .* run on the Node\.js 24\.\d+\.\d+ installed with them/)
})

test('npm on Node.js 24 or later, or unknown: nothing', () => {
  assert.equal(note('npm/11.6.2 node/v24.11.0 linux x64 workspaces/false'), '')
  assert.equal(note('npm/12.0.0 node/v26.1.0 linux x64 workspaces/false'), '')
  assert.equal(note(''), '')
})

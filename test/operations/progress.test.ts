import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { mebibytes, reportProgress } from '../../src/operations/progress.ts'

const MIB = 2 ** 20

test('a long copy says how far it has come at every interval, and nothing once stopped', async () => {
  const lines: string[] = []
  let done = 0
  const stop = reportProgress(
    'backup',
    () => done,
    400 * MIB,
    (line) => lines.push(line),
    20,
  )
  await sleep(30)
  done = 100 * MIB
  await sleep(40)
  done = 500 * MIB
  await sleep(40)
  stop()
  const said = lines.length
  await sleep(60)
  assert.equal(lines.length, said)
  assert.equal(lines[0], 'backup: 0.0 of 400 MiB (0 %)')
  assert.ok(lines.includes('backup: 100 of 400 MiB (25 %)'), lines.join('\n'))
  // A copy that grew past the size it was expected to have counts as whole.
  assert.equal(lines.at(-1), 'backup: 400 of 400 MiB (100 %)')
})

test('a copy that ends within the first interval says nothing', async () => {
  const lines: string[] = []
  const stop = reportProgress(
    'restore',
    () => MIB,
    MIB,
    (line) => lines.push(line),
    50,
  )
  await sleep(10)
  stop()
  await sleep(80)
  assert.deepEqual(lines, [])
})

test('sizes under 10 MiB keep a decimal', () => {
  assert.deepEqual([mebibytes(0), mebibytes(1.25 * MIB), mebibytes(10 * MIB), mebibytes(1234.6 * MIB)], ['0.0', '1.3', '10', '1235'])
})

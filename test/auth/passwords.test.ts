import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { test } from 'node:test'
import { PasswordHasher } from '../../src/auth/passwords.ts'

const busy = { statusCode: 503, message: 'Service unavailable', headers: { 'retry-after': '1' } }

test('a hash verifies its own password and no other', async () => {
  const hasher = new PasswordHasher()
  const stored = await hasher.hash('a quiet harbour at dawn')
  assert.match(stored, /^scrypt\$16384\$8\$5\$/)
  assert.equal(await hasher.verify('a quiet harbour at dawn', stored), true)
  assert.equal(await hasher.verify('a quiet harbour at dusk', stored), false)
  assert.equal(await hasher.decoy('a quiet harbour at dawn'), false)
})

test('a cost of its own makes new hashes of that cost, and hashes of another cost still verify', async () => {
  const cheap = new PasswordHasher({ cost: 10 })
  const stored = await cheap.hash('a quiet harbour at dawn')
  assert.match(stored, /^scrypt\$1024\$8\$5\$/)
  assert.equal(await new PasswordHasher().verify('a quiet harbour at dawn', stored), true)
  assert.equal(await cheap.verify('a quiet harbour at dawn', await new PasswordHasher({ cost: 11 }).hash('a quiet harbour at dawn')), true)
})

test('beyond the hashes that may wait, one more is refused at once', async () => {
  const hasher = new PasswordHasher({ lanes: 1, queue: 2, maxWaitMs: 60_000 })
  const admitted = [1, 2, 3].map((i) => hasher.hash(`password number ${i}`))
  // One running, two waiting: the fourth is refused before any of them ends.
  await assert.rejects(hasher.hash('password number 4'), busy)
  await Promise.all(admitted)
})

test('a few hashes always wait their turn, however slow hashes are', async () => {
  const hasher = new PasswordHasher({ lanes: 1, queue: 64, maxWaitMs: 1, alwaysQueue: 2 })
  await hasher.hash('the first is timed')
  await Promise.all([1, 2, 3].map((i) => hasher.hash(`password number ${i}`)))
  await assert.rejects(Promise.all([1, 2, 3, 4].map((i) => hasher.hash(`password number ${i}`))), busy)
})

test('a hash that would wait longer than allowed, judged by how long hashes take, is refused at once', async () => {
  const hasher = new PasswordHasher({ lanes: 1, queue: 64, maxWaitMs: 1, alwaysQueue: 0 })
  await hasher.hash('the first is timed')
  const running = hasher.hash('this one takes the lane')
  await assert.rejects(hasher.hash('this one would wait a whole hash'), busy)
  await running
  // With the lane free again, a hash runs however long hashes take.
  await hasher.hash('and this one runs')
})

test("hashes run on a thread below the process's priority, so that requests take the core before them", async (t) => {
  if (!existsSync('/proc/thread-self')) return t.skip('SKIPPED: threads have no priority of their own here (no /proc/thread-self)')
  const niceness = (tid: string) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16])
  const base = niceness(String(process.pid))
  await new PasswordHasher({ cost: 10 }).hash('a quiet harbour at dawn')
  const threads = readdirSync('/proc/self/task').map(niceness)
  assert.ok(threads.includes(Math.min(19, base + 10)), `no thread below the process's priority ${base}: ${threads.join(', ')}`)
  assert.equal(niceness(String(process.pid)), base, "the event loop's thread keeps its priority")
})

test('a stored hash whose parameters scrypt refuses fails its check, and the next hash is computed as usual', async () => {
  const hasher = new PasswordHasher({ cost: 10 })
  const stored = await hasher.hash('a quiet harbour at dawn')
  const [, , r, p, salt, key] = stored.split('$')
  await assert.rejects(hasher.verify('a quiet harbour at dawn', ['scrypt', 1000, r, p, salt, key].join('$')), /N must be|Invalid scrypt/i)
  assert.equal(await hasher.verify('a quiet harbour at dawn', stored), true)
})

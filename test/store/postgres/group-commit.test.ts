import assert from 'node:assert/strict'
import { test } from 'node:test'
import { StoreUnavailableError } from '../../../src/store/store.ts'
import { GroupCommit, type BatchedWrite } from '../../../src/store/postgres/group-commit.ts'

/** A counter per id, written by statements that are recorded; `fail` makes a statement throw. */
function engine() {
  const values = new Map<number, number>()
  const statements: string[] = []
  let fail: ((inputs: { id: number }[]) => Error | undefined) | undefined
  const add: BatchedWrite<{ id: number; by: number }, number> = {
    async run(inputs) {
      statements.push(`add ${inputs.map((i) => i.id).join(',')}`)
      const error = fail?.(inputs)
      if (error) throw error
      return inputs.map(({ id, by }) => {
        values.set(id, (values.get(id) ?? 0) + by)
        return values.get(id)!
      })
    },
    target: (input) => input.id,
  }
  const remove: BatchedWrite<{ id: number }, boolean> = {
    async run(inputs) {
      statements.push(`remove ${inputs.map((i) => i.id).join(',')}`)
      return inputs.map(({ id }) => values.delete(id))
    },
  }
  return {
    values,
    statements,
    add,
    remove,
    failWith: (f: typeof fail) => {
      fail = f
    },
  }
}

test('writes asked for in one turn go as one statement, each with its own outcome', async () => {
  const e = engine()
  const batches = new GroupCommit()
  const outcomes = await Promise.all([1, 2, 3].map((id) => batches.add(e.add, { id, by: id * 10 })))
  assert.deepEqual(outcomes, [10, 20, 30])
  assert.deepEqual(e.statements, ['add 1,2,3'])
})

test('a write to the same target as one before it waits for the next statement and sees it', async () => {
  const e = engine()
  const batches = new GroupCommit()
  const outcomes = await Promise.all([
    batches.add(e.add, { id: 1, by: 1 }),
    batches.add(e.add, { id: 2, by: 1 }),
    batches.add(e.add, { id: 1, by: 1 }),
    batches.add(e.add, { id: 3, by: 1 }),
  ])
  assert.deepEqual(outcomes, [1, 1, 2, 1])
  assert.deepEqual(e.statements, ['add 1,2', 'add 1,3'])
})

test('writes of different kinds keep the order they were asked in', async () => {
  const e = engine()
  const batches = new GroupCommit()
  const outcomes = await Promise.all([
    batches.add(e.add, { id: 1, by: 5 }),
    batches.add(e.remove, { id: 1 }),
    batches.add(e.remove, { id: 1 }),
    batches.add(e.add, { id: 1, by: 7 }),
  ])
  assert.deepEqual(outcomes, [5, true, false, 7])
  assert.deepEqual(e.statements, ['add 1', 'remove 1,1', 'add 1'])
})

test('writes asked for while a statement is under way go together in the next', async () => {
  const e = engine()
  const batches = new GroupCommit()
  const first = batches.add(e.add, { id: 1, by: 1 })
  await new Promise((resolve) => setImmediate(resolve))
  // The first statement has started; these three wait for it, then share one.
  const later = [2, 3, 4].map((id) => batches.add(e.add, { id, by: 1 }))
  await Promise.all([first, ...later])
  assert.deepEqual(e.statements, ['add 1', 'add 2,3,4'])
})

test('a statement that fails on a row is retried one write at a time', async () => {
  const e = engine()
  const batches = new GroupCommit()
  const broken = new Error('check constraint')
  e.failWith((inputs) => (inputs.some((i) => i.id === 2) ? broken : undefined))
  const outcomes = await Promise.allSettled([1, 2, 3].map((id) => batches.add(e.add, { id, by: 1 })))
  assert.deepEqual(outcomes, [
    { status: 'fulfilled', value: 1 },
    { status: 'rejected', reason: broken },
    { status: 'fulfilled', value: 1 },
  ])
  assert.deepEqual(e.statements, ['add 1,2,3', 'add 1', 'add 2', 'add 3'])
})

test('an unavailable store fails every write of the statement, and later writes try again', async () => {
  const e = engine()
  const batches = new GroupCommit()
  const away = new StoreUnavailableError(new Error('connection refused'))
  e.failWith(() => away)
  const outcomes = await Promise.allSettled([1, 2].map((id) => batches.add(e.add, { id, by: 1 })))
  assert.deepEqual(
    outcomes.map((o) => o.status),
    ['rejected', 'rejected'],
  )
  assert.deepEqual(e.statements, ['add 1,2'])
  e.failWith(undefined)
  assert.equal(await batches.add(e.add, { id: 1, by: 1 }), 1)
})

/** A write that records its statements, and holds any statement that includes 1 until `release`. */
function heldWrite() {
  const statements: string[] = []
  let release!: () => void
  const held = new Promise<void>((resolve) => (release = resolve))
  const write: BatchedWrite<number, number> = {
    async run(inputs) {
      statements.push(inputs.join(','))
      if (inputs.includes(1)) await held
      return inputs
    },
  }
  return { statements, write, release: () => release() }
}

test('with a concurrency of two, a second batch starts while the first is under way', async () => {
  const { statements, write, release } = heldWrite()
  const batches = new GroupCommit({ concurrency: 2 })
  const first = batches.add(write, 1)
  await new Promise((resolve) => setImmediate(resolve))
  const second = [2, 3].map((n) => batches.add(write, n))
  assert.deepEqual(await Promise.all(second), [2, 3])
  const third = [4, 5].map((n) => batches.add(write, n))
  assert.deepEqual(await Promise.all(third), [4, 5])
  assert.deepEqual(statements, ['1', '2,3', '4,5'])
  release()
  assert.equal(await first, 1)
})

test('a write still waiting for its batch at the deadline fails as unavailable and is never sent', { timeout: 5000 }, async () => {
  const { statements, write, release } = heldWrite()
  const batches = new GroupCommit({ deadlineMs: 500 })
  // Each outcome is awaited from the start: on a loaded machine the deadline may pass before the next line runs.
  const stuck = assert.rejects(batches.add(write, 1), StoreUnavailableError)
  // The second write comes once the first one's batch is under way, however long the machine takes to send it.
  while (statements.length === 0) await new Promise((resolve) => setImmediate(resolve))
  const waiting = assert.rejects(batches.add(write, 2), StoreUnavailableError)
  await Promise.all([stuck, waiting])
  release()
  assert.equal(await batches.add(write, 3), 3)
  assert.deepEqual(statements, ['1', '3'])
})

test('a statement is told the time by which it must be sent: the earliest deadline of its writes', async () => {
  const told: (number | undefined)[] = []
  const write: BatchedWrite<number, number> = {
    async run(inputs, sendBy) {
      told.push(sendBy)
      return inputs
    },
  }
  const before = performance.now()
  const first = new GroupCommit({ deadlineMs: 1000 }).add(write, 1)
  const second = new GroupCommit().add(write, 2)
  const after = performance.now()
  assert.deepEqual(await Promise.all([first, second]), [1, 2])
  assert.ok(told[0]! >= before + 1000 && told[0]! <= after + 1000, `told ${told[0]}`)
  assert.equal(told[1], undefined)
})

test('each write fails at its own deadline, counted from when it was asked for', { timeout: 5000 }, async () => {
  const { write, release } = heldWrite()
  const deadlineMs = 200
  const batches = new GroupCommit({ concurrency: 2, deadlineMs })
  const failedAfter = async (input: number) => {
    const asked = performance.now()
    await assert.rejects(batches.add(write, input), StoreUnavailableError)
    return performance.now() - asked
  }
  const first = failedAfter(1)
  await new Promise((resolve) => setTimeout(resolve, deadlineMs / 2))
  // Answered at once by a second batch, while the first is held past its deadline.
  assert.equal(await batches.add(write, 2), 2)
  // Held as the first is, but asked for later: it must not fail with the first.
  const later = failedAfter(1)
  const [firstWaited, laterWaited] = await Promise.all([first, later])
  release()
  assert.ok(firstWaited >= deadlineMs, `failed after ${firstWaited} ms`)
  assert.ok(laterWaited >= deadlineMs, `failed after ${laterWaited} ms`)
})

test('no timer is left once every write is answered', async (t) => {
  // The timers set while the test runs, until they fire or are cleared: the process's own count
  // would also see the timers of whatever else runs in it end.
  const pending = new Set<NodeJS.Timeout>()
  const { setTimeout: set, clearTimeout: clear } = globalThis
  t.mock.method(globalThis, 'setTimeout', (callback: () => void, ms: number) => {
    const timer = set(() => {
      pending.delete(timer)
      callback()
    }, ms)
    pending.add(timer)
    return timer
  })
  t.mock.method(globalThis, 'clearTimeout', (timer: NodeJS.Timeout) => {
    pending.delete(timer)
    clear(timer)
  })
  const batches = new GroupCommit({ deadlineMs: 60_000 })
  const { write } = heldWrite()
  assert.deepEqual(await Promise.all([2, 3, 4].map((n) => batches.add(write, n))), [2, 3, 4])
  assert.equal(await batches.add(write, 5), 5)
  // The batch lets its writes go once it has answered them all, a step after the last answer.
  await new Promise((resolve) => setImmediate(resolve))
  assert.equal(pending.size, 0)
})

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises'
import { FindTurns } from '../../../src/store/postgres/find-turns.ts'
import { StoreUnavailableError } from '../../../src/store/store.ts'

interface Taking {
  /** When the turns, in the order they began, are noted, and how to end each. */
  order: string[]
  ends?: (() => void)[]
  ms?: number
  whole?: boolean
}

/** Takes a turn for `client`, a whole read's with `whole`, and notes when it began ("client", or "client whole"). */
function take(turns: FindTurns, client: string, { order, ends = [], ms = 60_000, whole = false }: Taking) {
  return turns.take(client, ms, { whole }).then((end) => {
    order.push(whole ? `${client} whole` : client)
    ends.push(end)
    return end
  })
}

test('gives as many turns at once as it has, and the next as one ends', async () => {
  const turns = new FindTurns(2)
  const order: string[] = []
  const first = await take(turns, 'a', { order })
  await take(turns, 'b', { order })
  const third = take(turns, 'c', { order })
  await nextTurn()
  assert.deepEqual(order, ['a', 'b'])
  first()
  first()
  await third
  assert.deepEqual(order, ['a', 'b', 'c'])
  // Ending a turn twice gave one turn, not two.
  const fourth = take(turns, 'd', { order })
  await nextTurn()
  assert.deepEqual(order, ['a', 'b', 'c'])
  ;(await third)()
  await fourth
})

test("takes the waiting clients in turn: one client's many finds do not go before another's one", async () => {
  const turns = new FindTurns(1)
  const order: string[] = []
  const ends: (() => void)[] = []
  await take(turns, 'busy', { order, ends })
  const waiting = [1, 2, 3].map(() => take(turns, 'busy', { order, ends }))
  const other = take(turns, 'other', { order, ends })
  for (let i = 0; i < 4; i++) {
    ends.at(-1)!()
    await nextTurn()
  }
  await Promise.all([...waiting, other])
  assert.deepEqual(order, ['busy', 'busy', 'other', 'busy', 'busy'])
})

test('fails a find that has no turn within its deadline, as unavailable, and gives its turn to the next', async () => {
  const turns = new FindTurns(1)
  const order: string[] = []
  const end = await take(turns, 'a', { order })
  const late = take(turns, 'b', { order, ms: 20 })
  const next = take(turns, 'c', { order })
  await assert.rejects(late, StoreUnavailableError)
  end()
  await next
  assert.deepEqual(order, ['a', 'c'])
})

test('keeps one turn for pages: whole reads, however slowly their clients read, hold the others', async () => {
  const turns = new FindTurns(3)
  const order: string[] = []
  const first = await take(turns, 'slow', { order, whole: true })
  await take(turns, 'slow', { order, whole: true })
  const third = take(turns, 'slow', { order, whole: true })
  await nextTurn()
  assert.deepEqual(order, ['slow whole', 'slow whole'])
  await take(turns, 'other', { order })
  first()
  await third
  assert.deepEqual(order, ['slow whole', 'slow whole', 'other', 'slow whole'])
})

test('gives a free turn to whichever came first of the next page and the next whole read', async () => {
  const turns = new FindTurns(2)
  const order: string[] = []
  const ends: (() => void)[] = []
  await take(turns, 'a', { order, ends })
  await take(turns, 'b', { order, ends })
  const whole = take(turns, 'c', { order, whole: true })
  await sleep(5)
  const page = take(turns, 'd', { order })
  ends[0]!()
  await whole
  ends[1]!()
  await page
  assert.deepEqual(order, ['a', 'b', 'c whole', 'd'])
})

test('with a single turn, lets a whole read take it', async () => {
  const turns = new FindTurns(1)
  const order: string[] = []
  const end = await take(turns, 'only', { order, whole: true })
  const page = take(turns, 'other', { order })
  end()
  await page
  assert.deepEqual(order, ['only whole', 'other'])
})

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { lookupsPerTurn } from '../../../src/store/postgres/lookups-per-turn.ts'

interface Row {
  id: number
  title: string
}

function engine(rows: Row[]) {
  const queries: number[][] = []
  const fetch = async (ids: number[]) => {
    queries.push(ids)
    return rows.filter((row) => ids.includes(row.id))
  }
  return { queries, lookup: lookupsPerTurn(fetch) }
}

test('lookups asked for in one turn share one query, each with its own answer', async () => {
  const { queries, lookup } = engine([
    { id: 1, title: 'one' },
    { id: 2, title: 'two' },
  ])
  const [first, second, missing, again] = await Promise.all([lookup(1), lookup(2), lookup(3), lookup(1)])
  assert.deepEqual(queries, [[1, 2, 3]])
  assert.deepEqual(first, { id: 1, title: 'one' })
  assert.deepEqual(second, { id: 2, title: 'two' })
  assert.equal(missing, undefined)
  assert.deepEqual(again, first)
  assert.notEqual(again, first)
})

test('lookups of a later turn go in a later query', async () => {
  const { queries, lookup } = engine([{ id: 1, title: 'one' }])
  await lookup(1)
  await lookup(1)
  assert.deepEqual(queries, [[1], [1]])
})

test('a failed query fails every lookup in it', async () => {
  const lookup = lookupsPerTurn<Row>(async () => {
    throw new Error('unavailable')
  })
  const results = await Promise.allSettled([lookup(1), lookup(2)])
  assert.deepEqual(
    results.map((result) => result.status),
    ['rejected', 'rejected'],
  )
})

import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import fc from 'fast-check'
import type pg from 'pg'
import { arrayLiteral } from '../../../src/store/postgres/array-literals.ts'
import { send } from '../../../src/store/postgres/connections.ts'
import { storeEngines } from '../../helpers.ts'
import { connectAdmin } from '../../support/postgres.ts'
import { testSeed } from '../../support/seed.ts'

const postgres = storeEngines.find((engine) => engine.name === 'postgres')!

const READ_BACK = 'SELECT $1::text[] AS texts, $2::bigint[] AS numbers, $3::int[][] AS nested'

async function connected(t: TestContext): Promise<pg.ClientBase> {
  const client = await connectAdmin()
  t.after(() => client.end())
  return client
}

describe('arrays sent to PostgreSQL', { skip: postgres.skip }, () => {
  it('arrive as the same arrays as pg itself sends, whatever their text holds', async (t) => {
    const client = await connected(t)
    // Text that a literal must quote or escape: quotes, backslashes, braces, commas, spaces, the word NULL.
    const text = fc.oneof(
      fc.string({ unit: fc.constantFrom('"', '\\', '{', '}', ',', ' ', 'N', 'U', 'L', 'a', 'é', '日', '😀') }),
      fc.string({ unit: 'grapheme' }),
    )
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.option(text, { nil: null })),
        fc.array(fc.option(fc.integer(), { nil: null })),
        async (texts, numbers) => {
          const values = [
            texts,
            numbers,
            [
              [1, 2],
              [3, 4],
            ],
          ]
          const ours = (await send<Record<string, unknown>>(client as pg.PoolClient, { text: READ_BACK, values })).rows[0]
          const theirs = (await client.query<Record<string, unknown>>(READ_BACK, values)).rows[0]
          assert.deepEqual(ours, theirs)
          assert.deepEqual(ours, {
            texts,
            numbers: numbers.map((n) => (n === null ? null : String(n))),
            nested: [
              [1, 2],
              [3, 4],
            ],
          })
        },
      ),
      { seed: testSeed(t), numRuns: 300 },
    )
  })
})

describe('array literals', () => {
  it('write a list of text in one piece, and quote and escape only what needs it', () => {
    assert.equal(arrayLiteral(['a', 'b c', '']), '{"a","b c",""}')
    assert.equal(arrayLiteral(['say "hi"', 'back\\slash', null, undefined]), '{"say \\"hi\\"","back\\\\slash",NULL,NULL}')
    assert.equal(arrayLiteral([1999, -2, 0]), '{1999,-2,0}')
    assert.equal(arrayLiteral([1999, 'NULL']), '{"1999","NULL"}')
    assert.equal(arrayLiteral([]), '{}')
  })
})

import assert from 'node:assert/strict'
import { it } from 'node:test'
import pg from 'pg'
import { loadMigrations } from '../../../src/store/migrations.ts'
import { storeEngines } from '../../helpers.ts'
import { createTestSchema } from '../../support/postgres.ts'
import { seededRandom, testSeed } from '../../support/seed.ts'

const postgres = storeEngines.find((engine) => engine.name === 'postgres')!

/** The migration that writes book_lexemes() as a loop (025). */
const LOOP = 25

/** Words as the search columns may hold them, and stranger: short, repeated, empty, not ASCII. */
function wordLists(seed: number, count: number): [string, string][] {
  const next = seededRandom(seed)
  const words = ['a', 'ab', 'abc', 'abcd', 'the', 'of', 'j', 'k', 'rowling', 'obrien', 'o', 'über', 'çà', '日本語', 'x1', '1984', '~', '']
  const list = () => Array.from({ length: next(0, 9) }, () => words[next(0, words.length)]).join(' ')
  return [['', ''], ['  a  b  ', ''], ['the the the', 'the'], ...Array.from({ length: count }, (): [string, string] => [list(), list()])]
}

it('stores the same lexemes for a book after book_lexemes() became a loop as before', { skip: postgres.skip }, async (t) => {
  const schema = await createTestSchema()
  t.after(() => schema.drop())
  const client = new pg.Client({ connectionString: schema.url })
  await client.connect()
  t.after(() => client.end())
  const migrations = loadMigrations('postgres')
  const run = async (which: (version: number) => boolean) => {
    for (const migration of migrations.filter(({ version }) => which(version))) await client.query(migration.sql)
  }
  const lists = wordLists(testSeed(t), 2000)
  const write = async () => {
    const { rows } = await client.query<{ words: string }>(
      `INSERT INTO books (title, author, year, title_folded, author_folded, title_words, author_words)
       SELECT 't', 'a', 2000, 't', 'a', title_words, author_words FROM unnest($1::text[], $2::text[]) AS u(title_words, author_words)
       RETURNING words::text`,
      [lists.map(([title]) => title), lists.map(([, author]) => author)],
    )
    return rows.map((row) => row.words)
  }
  await run((version) => version < LOOP)
  const before = await write()
  await run((version) => version === LOOP)
  assert.deepEqual(await write(), before)
  assert.ok(before.some((words) => words.includes("'abc~'")))
})

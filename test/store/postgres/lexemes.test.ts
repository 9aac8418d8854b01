import assert from 'node:assert/strict'
import { it, type TestContext } from 'node:test'
import pg from 'pg'
import { loadMigrations } from '../../../src/store/migrations.ts'
import { lexemesOf, wordsOf } from '../../../src/store/postgres/lexemes.ts'
import { PostgresStore } from '../../../src/store/postgres/store.ts'
import { storeEngines } from '../../helpers.ts'
import { createTestSchema } from '../../support/postgres.ts'
import { seededRandom, testSeed } from '../../support/seed.ts'
import { droppedWhenSuiteEnds } from '../../support/temporary.ts'

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

// Each test's schema goes once the file's tests are done, after what each test closes itself.
const dropAtEnd = droppedWhenSuiteEnds()

/** A schema of its own with no tables yet, and a client connected to it, closed when the test ends. */
async function emptySchema(t: TestContext) {
  const schema = await createTestSchema()
  dropAtEnd(schema)
  const client = new pg.Client({ connectionString: schema.url })
  await client.connect()
  t.after(() => client.end())
  return { schema, client }
}

it('stores the same lexemes for a book after book_lexemes() became a loop as before', { skip: postgres.skip }, async (t) => {
  const { client } = await emptySchema(t)
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

it('sends, for any words, the lexemes that book_lexemes() makes of them', { skip: postgres.skip }, async (t) => {
  const { client } = await emptySchema(t)
  for (const migration of loadMigrations('postgres')) await client.query(migration.sql)
  const lists = [...wordLists(testSeed(t), 2000), ['😀😀 😀😀😀 a😀b', '𝔘𝔫𝔦 𝔘𝔫']] as [string, string][]
  const { rows } = await client.query<{ sent: string; made: string }>(
    `SELECT ${wordsOf('lexemes')}::text AS sent, book_lexemes(title_words || ' ' || author_words)::text AS made
     FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS u(title_words, author_words, lexemes, n) ORDER BY n`,
    [lists.map(([title]) => title), lists.map(([, author]) => author), lists.map(([title, author]) => lexemesOf(title, author))],
  )
  assert.deepEqual(
    rows.map((row) => row.sent),
    rows.map((row) => row.made),
  )
  assert.ok(rows.at(-1)!.made.includes("'😀😀😀~'"))
})

it('stores the lexemes of its words with every book that each write stores or changes', { skip: postgres.skip }, async (t) => {
  const schema = await createTestSchema()
  dropAtEnd(schema)
  const store = await PostgresStore.open({ url: schema.url, poolSize: 2, connectTimeoutMs: 2000, queryTimeoutMs: 4000 })
  t.after(() => store.close())
  const created = await store.books.create('ada', { title: 'The Left Hand of Darkness', author: 'Ursula K. Le Guin', year: 1969 })
  const imported = await store.transaction(({ books }) =>
    books.createMany('ada', [
      { title: 'Cien años de soledad', author: 'Gabriel García Márquez', year: 1967 },
      { title: 'Dune', author: 'Frank Herbert', year: 1965 },
    ]),
  )
  await store.books.update('ada', created.id, { title: 'The Dispossessed' })
  await store.books.update('ada', imported[0]!, { author: 'G. García Márquez' })
  await store.books.update('ada', imported[1]!, { year: 1966 })
  await store.books.delete('ada', imported[1]!)
  await store.books.restore('ada', imported[1]!)
  const client = new pg.Client({ connectionString: schema.url })
  await client.connect()
  t.after(() => client.end())
  const { rows } = await client.query<{ title: string; words: string; made: string }>(
    `SELECT title, words::text AS words, book_lexemes(title_words || ' ' || author_words)::text AS made FROM books ORDER BY id`,
  )
  assert.deepEqual(
    rows.map(({ title }) => title),
    ['The Dispossessed', 'Cien años de soledad', 'Dune'],
  )
  for (const row of rows) assert.equal(row.words, row.made, row.title)
  assert.match(rows[0]!.words, /'dis~'/)
})

it(
  'gives a book written without lexemes, as an instance of an earlier version writes it, the lexemes of its words',
  { skip: postgres.skip },
  async (t) => {
    const { schema, client } = await emptySchema(t)
    // The store applies the migrations.
    const store = await PostgresStore.open({ url: schema.url, poolSize: 2, connectTimeoutMs: 2000, queryTimeoutMs: 4000 })
    t.after(() => store.close())
    // The statements of the version before migration 026, which left the column to its expression.
    const { rows: inserted } = await client.query<{ id: string }>(
      `INSERT INTO books (title, author, year, title_folded, author_folded, title_words, author_words)
     VALUES ('Dune', 'Frank Herbert', 1965, 'dune', 'frank herbert', 'dune', 'frank herbert') RETURNING id`,
    )
    const id = inserted[0]!.id
    const words = async () =>
      (await client.query<{ words: string }>('SELECT words::text AS words FROM books WHERE id = $1', [id])).rows[0]!.words
    assert.equal(await words(), "'dune' 'dun~' 'frank' 'fra~' 'herbert' 'her~'")
    await client.query(`UPDATE books SET title = 'Emma', title_folded = 'emma', title_words = 'emma' WHERE id = $1`, [id])
    assert.equal(await words(), "'emma' 'emm~' 'frank' 'fra~' 'herbert' 'her~'")
    await client.query('UPDATE books SET year = 1815 WHERE id = $1', [id])
    assert.equal(await words(), "'emma' 'emm~' 'frank' 'fra~' 'herbert' 'her~'")
  },
)

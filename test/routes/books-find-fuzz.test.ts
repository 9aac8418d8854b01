import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import type { Book } from '../../src/books/book.ts'
import { buildTestApp, issueToken, searchEngines, withToken } from '../helpers.ts'
import { expectedIds, type ModelQuery } from '../support/book-search-model.ts'

/** FUZZ_RUNS=n runs more or fewer cases; fast-check prints the seed of a failure. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 150)

/** What means something to FTS5, tsquery, LIKE or GLOB, beside plain letters, some accented. */
const SYNTAX = [
  '"',
  '*',
  '-',
  ':',
  '^',
  '(',
  ')',
  '%',
  '_',
  '\\',
  "'",
  '[',
  ']',
  '?',
  '&',
  '|',
  '!',
  '<',
  '>',
  '+',
  '{',
  '}',
  ',',
  '.',
  '\u0000',
]
const OPERATORS = ['NEAR', 'OR', 'AND', 'NOT', 'near', 'NEAR(', ':*']
const LETTERS = ['a', 'e', 'é', 'É', 'n', 'ñ', 'o', 'r', 's', 't', '1', '9', ' ', ' ', '😀', 'ß']

const piece = fc.oneof(fc.constantFrom(...SYNTAX), fc.constantFrom(...OPERATORS), fc.constantFrom(...LETTERS), fc.string({ maxLength: 3 }))
const text = fc.array(piece, { maxLength: 8 }).map((parts) => parts.join(''))

const BOOKS = [
  { title: 'Near or far: "Notes" (and *stars*)', author: 'Ann Or-Not', year: 1990 },
  { title: '100% _true_ tales \\ [vol. 2]?', author: 'Señor Érnesto', year: 1991 },
  { title: "Tess of the d'Urbervilles", author: 'Thomas Hardy', year: 1891 },
  { title: 'Straße ^ 9', author: 'Anne Ørsted', year: 2000 },
  { title: 'Rest & rats', author: 'Stare Tarsen', year: 1999 },
  { title: '😀 Smile', author: 'E. Noon', year: 2010 },
]

for (const engine of searchEngines) {
  describe(`search text on ${engine.name} is plain text, never syntax`, { skip: engine.skip }, () => {
    let app: FastifyInstance
    let token: string
    const books: Book[] = []

    before(async () => {
      app = await buildTestApp({}, { store: await engine.open() })
      token = await issueToken(app)
      for (const book of BOOKS) {
        books.push((await app.inject(withToken(token, { method: 'POST', url: '/book', payload: book }))).json().data)
      }
    })
    after(() => app.close())

    test('random q, title and author find what the model finds, and never fail', async () => {
      await fc.assert(
        fc.asyncProperty(fc.record({ q: text, title: text, author: text }, { requiredKeys: [] }), async (model: ModelQuery) => {
          const search = new URLSearchParams()
          for (const [name, value] of Object.entries(model)) search.append(name, value as string)
          const res = await app.inject(withToken(token, { method: 'GET', url: `/books?${search.toString()}` }))
          assert.equal(res.statusCode, 200, res.body)
          assert.deepEqual(
            res.json().data.map((book: Book) => book.id),
            expectedIds(books, model),
          )
        }),
        { numRuns: RUNS },
      )
    })
  })
}

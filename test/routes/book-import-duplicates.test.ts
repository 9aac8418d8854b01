import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, test, type TestContext } from 'node:test'
import type { FastifyInstance, InjectOptions } from 'fastify'
import type { Book, NewBook } from '../../src/books/book.ts'
import type { Store } from '../../src/store/store.ts'
import { buildTestApp, issueToken, searchEngines, withToken } from '../helpers.ts'
import { openTestPostgresStore } from '../support/postgres-store.ts'

const emma = { title: 'Emma', author: 'Jane Austen', year: 1815 }
const dune = { title: 'Dune', author: 'Frank Herbert', year: 1965 }
const cien = { title: 'Cien años de soledad', author: 'Gabriel García Márquez', year: 1967 }

/** A CSV file of these rows, under a header. */
function csv(rows: (string | number)[][]): string {
  return ['title,author,year', ...rows.map((row) => row.map((cell) => (/[",]/.test(String(cell)) ? `"${cell}"` : cell)).join(','))].join(
    '\n',
  )
}

const row = ({ title, author, year }: NewBook) => [title, author, year]

/** The answer a document prints after the first import command of `examples/books.csv` that holds `marker`. */
function shownAnswer(document: string, marker: string): unknown {
  const lines = readFileSync(new URL(`../../${document}`, import.meta.url), 'utf8').split('\n')
  const command = lines.findIndex((line) => line.includes('/books/import') && line.includes('@examples/books.csv') && line.includes(marker))
  return JSON.parse(lines.slice(command + 1).find((line) => line.startsWith('{'))!)
}

// Both engines, and SQLite with books both in its indexes and in the tail that they have not taken yet.
for (const engine of searchEngines) {
  describe(`duplicates=skip on ${engine.name}`, { skip: engine.skip }, () => {
    async function service(t: TestContext, store?: Store) {
      const app: FastifyInstance = await buildTestApp({}, { store: store ?? (await engine.open()) })
      t.after(() => app.close())
      const token = await issueToken(app)
      const call = (options: InjectOptions) => app.inject(withToken(token, options))
      const importCsv = (file: string, query = 'duplicates=skip') =>
        call({ method: 'POST', url: `/books/import?${query}`, payload: file, headers: { 'content-type': 'text/csv' } })
      const create = async (book: NewBook): Promise<Book> => {
        const res = await call({ method: 'POST', url: '/book', payload: book })
        assert.equal(res.statusCode, 201, res.body)
        return res.json().data
      }
      const stored = async (): Promise<Book[]> => (await call({ method: 'GET', url: '/books' })).json().data
      return { call, importCsv, create, stored }
    }

    test('a row that repeats a stored book is left out and listed with its id; the others are stored', async (t) => {
      const { importCsv, create, stored } = await service(t)
      const kept = await create(emma)
      const before = await stored()
      const res = await importCsv(csv([row(dune), row(emma), row({ title: 'Carrie', author: 'Stephen King', year: 1974 })]))
      assert.equal(res.statusCode, 201, res.body)
      const { data } = res.json()
      assert.deepEqual(data, { imported: 2, ids: data.ids, duplicates: [{ row: 2, id: kept.id }] })
      const after = await stored()
      assert.deepEqual(
        after.map((book) => book.title),
        [...before.map((book) => book.title), 'Dune', 'Carrie'],
      )
      assert.deepEqual(
        data.ids,
        after.slice(-2).map((book) => book.id),
      )
    })

    test('a row that repeats an earlier row is listed with id null, and only the first is stored', async (t) => {
      const { importCsv, stored } = await service(t)
      const res = await importCsv(csv([row(dune), row(emma), row(dune), row(dune), row(emma)]))
      assert.equal(res.statusCode, 201, res.body)
      assert.deepEqual(res.json().data.duplicates, [
        { row: 3, id: null },
        { row: 4, id: null },
        { row: 5, id: null },
      ])
      assert.deepEqual(
        (await stored()).map((book) => book.title),
        ['Dune', 'Emma'],
      )
    })

    test('title and author compare as search folds them, case and accents aside; the year exactly', async (t) => {
      const { importCsv, create, stored } = await service(t)
      const kept = await create(cien)
      const res = await importCsv(
        csv([
          ['CIEN ANOS DE SOLEDAD', 'gabriel garcia marquez', 1967],
          ['Cien Años de Soledad', 'Gabriel García Márquez', 1968],
          ['Cien años de soledad', 'Gabriel García', 1967],
          ['Die Straße', 'Ａｎｎａ Ｓｅｇｈｅｒｓ', 1950],
          ['DIE STRASSE', 'Anna Seghers', 1950],
          ['Cien años', 'de soledad Gabriel García Márquez', 1967],
        ]),
      )
      assert.equal(res.statusCode, 201, res.body)
      assert.deepEqual(res.json().data.duplicates, [
        { row: 1, id: kept.id },
        { row: 5, id: null },
      ])
      assert.deepEqual(
        (await stored()).map((book) => `${book.title}, ${book.year}`),
        ['Cien años de soledad, 1967', 'Cien Años de Soledad, 1968', 'Cien años de soledad, 1967', 'Die Straße, 1950', 'Cien años, 1967'],
      )
    })

    test('a book in the trash is no duplicate; once restored, it is', async (t) => {
      const { call, importCsv, create, stored } = await service(t)
      const trashed = await create(emma)
      assert.equal((await call({ method: 'DELETE', url: `/book/${trashed.id}` })).statusCode, 200)
      const res = await importCsv(csv([row(emma)]))
      assert.equal(res.statusCode, 201, res.body)
      assert.deepEqual(res.json().data.duplicates, [])
      assert.deepEqual(
        (await stored()).map((book) => book.title),
        ['Emma'],
      )
      assert.equal((await call({ method: 'POST', url: `/book/${trashed.id}/restore` })).statusCode, 200)
      const again = await importCsv(csv([row(emma)]))
      assert.deepEqual(again.json().data, { imported: 0, ids: [], duplicates: [{ row: 1, id: trashed.id }] })
    })

    test('with invalid=skip, both lists, rows counted as in the file', async (t) => {
      const { importCsv, create, stored } = await service(t)
      const kept = await create(dune)
      const res = await importCsv(
        csv([row(emma), ['No year', 'Someone', ''], row(dune), ['', 'Nobody', 2000], row(emma), row({ ...emma, year: 1816 })]),
        'invalid=skip&duplicates=skip',
      )
      assert.equal(res.statusCode, 201, res.body)
      const { data } = res.json()
      assert.equal(data.imported, 2)
      assert.deepEqual(
        data.errors.map((error: { row: number }) => error.row),
        [2, 4],
      )
      assert.deepEqual(data.duplicates, [
        { row: 3, id: kept.id },
        { row: 5, id: null },
      ])
      assert.deepEqual(
        (await stored()).map((book) => `${book.title}, ${book.year}`),
        ['Dune, 1965', 'Emma, 1815', 'Emma, 1816'],
      )
    })

    test('without invalid=skip, an invalid row still stores nothing', async (t) => {
      const { importCsv, stored } = await service(t)
      const res = await importCsv(csv([row(emma), row(emma), ['No year', 'Someone', '']]))
      assert.equal(res.statusCode, 400)
      assert.deepEqual(res.json().data.errors, [{ row: 3, message: 'year is missing' }])
      assert.deepEqual(await stored(), [])
    })

    test('a dry run lists the duplicates whether or not they are to be skipped, and stores nothing', async (t) => {
      const { importCsv, create, stored } = await service(t)
      const kept = await create(emma)
      const file = csv([row(dune), row(emma), ['Bad', 'Year', 'x'], row(dune), row(emma)])
      for (const query of ['dry_run=true', 'dry_run=true&duplicates=skip', 'dry_run=true&invalid=skip']) {
        const res = await importCsv(file, query)
        assert.equal(res.statusCode, 200, res.body)
        const { importable, errors, duplicates, preview } = res.json().data
        assert.equal(importable, 4, 'duplicates are among the rows that pass the rules')
        assert.equal(errors.length, 1)
        // The stored Emma is repeated by row 5 too: row 2, repeating it, is not stored.
        assert.deepEqual(
          duplicates,
          [
            { row: 2, id: kept.id },
            { row: 4, id: null },
            { row: 5, id: kept.id },
          ],
          query,
        )
        assert.equal(preview.length, 4)
      }
      assert.equal((await stored()).length, 1)
    })

    test('without duplicates=skip every row is stored, and the answer lists none', async (t) => {
      const { importCsv, create, stored } = await service(t)
      await create(emma)
      const res = await importCsv(csv([row(emma), row(emma), row(dune)]), '')
      assert.equal(res.statusCode, 201, res.body)
      assert.deepEqual(Object.keys(res.json().data), ['imported', 'ids'])
      assert.deepEqual(
        (await stored()).map((book) => book.title),
        ['Emma', 'Emma', 'Emma', 'Dune'],
      )
    })

    test('a file of thousands of rows: duplicates found across batches, the first 100 listed, the rest left out too', async (t) => {
      const { importCsv, create, stored } = await service(t)
      const book = (n: number) => ({ title: `Volume ${n}`, author: `Writer ${n % 13}`, year: 1900 + (n % 100) })
      const kept = await create(book(2999))
      // Rows 1 to 1,500 are new; rows 1,501 to 3,000 repeat them (the last repeats the stored book).
      const rows = [...Array.from({ length: 1500 }, (_, n) => book(n)), ...Array.from({ length: 1500 }, (_, n) => book(n))]
      rows[2999] = book(2999)
      const res = await importCsv(csv(rows.map(row)), 'duplicates=skip')
      assert.equal(res.statusCode, 201, res.body)
      const { data } = res.json()
      assert.equal(data.imported, 1500)
      assert.equal(data.duplicates.length, 100)
      assert.deepEqual(
        data.duplicates,
        Array.from({ length: 100 }, (_, n) => ({ row: 1501 + n, id: null })),
      )
      const all = await stored()
      assert.equal(all.length, 1501)
      assert.equal(all.filter((found) => found.title === 'Volume 2999').length, 1)
      assert.equal(all[0]!.id, kept.id)
      const again = await importCsv(csv([row(book(2999)), row(book(7))]), 'duplicates=skip')
      assert.deepEqual(again.json().data.duplicates, [
        { row: 1, id: kept.id },
        { row: 2, id: data.ids[7] },
      ])
    })

    test('JSON and NDJSON bodies count their rows from 1 too', async (t) => {
      const { call, create } = await service(t)
      const kept = await create(dune)
      for (const [contentType, payload] of [
        ['application/json', JSON.stringify([emma, dune, emma])],
        ['application/x-ndjson', [emma, dune, emma].map((book) => JSON.stringify(book)).join('\n')],
      ]) {
        const res = await call({
          method: 'POST',
          url: '/books/import?dry_run=true',
          payload,
          headers: { 'content-type': contentType! },
        })
        assert.deepEqual(res.json().data.duplicates, [
          { row: 2, id: kept.id },
          { row: 3, id: null },
        ])
      }
    })

    test('the example of the README and docs/api.md answers as they show: examples/books.csv sent twice', async (t) => {
      const { importCsv, create } = await service(t)
      await create(dune)
      const file = readFileSync(new URL('../../examples/books.csv', import.meta.url), 'utf8')
      assert.deepEqual((await importCsv(file, '')).json(), shownAnswer('README.md', 'examples/books.csv'))
      const again = (await importCsv(file)).json()
      assert.deepEqual(again, shownAnswer('README.md', '?duplicates=skip'))
      assert.deepEqual(again, shownAnswer('docs/api.md', '?duplicates=skip'))
    })

    test('two imports of the same rows at once store each book once: the later lists them all as duplicates', async (t) => {
      // With connections enough for both transactions at once.
      const { importCsv, stored } = await service(t, engine.name === 'postgres' ? await openTestPostgresStore({ poolSize: 8 }) : undefined)
      const file = csv(Array.from({ length: 200 }, (_, n) => [`Twin ${n}`, 'Writer', 2000]))
      const answers = await Promise.all([importCsv(file), importCsv(file)])
      for (const res of answers) assert.equal(res.statusCode, 201, res.body)
      const [first, later] = answers.map((res) => res.json().data).sort((a, b) => b.imported - a.imported)
      assert.deepEqual([first.imported, later.imported], [200, 0])
      assert.deepEqual(
        later.duplicates,
        first.ids.slice(0, 100).map((id: number, n: number) => ({ row: n + 1, id })),
      )
      assert.equal((await stored()).length, 200)
    })

    test('duplicates= takes skip only', async (t) => {
      const { importCsv, stored } = await service(t)
      for (const query of ['duplicates=keep', 'duplicates=', 'duplicates=skip&duplicates=skip']) {
        const res = await importCsv(csv([row(emma)]), query)
        assert.equal(res.statusCode, 400, query)
        assert.deepEqual(res.json().data.errors, [
          { message: query.endsWith('=skip') ? 'duplicates= is given more than once' : 'duplicates= takes skip' },
        ])
      }
      assert.deepEqual(await stored(), [])
    })
  })
}

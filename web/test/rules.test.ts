import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { checkBook } from '../src/book-rules.ts'
import { describeOrder, EVERY_BOOK, exportQuery, firstPageUrl, isFiltered, parseSort, sameQuery } from '../src/find-query.ts'
import { importFormat } from '../src/import-plan.ts'

const DUNE = { title: 'Dune', author: 'Frank Herbert', year: '1965' }

describe('the book rules the page checks before sending (docs/api.md, Books)', () => {
  it('accepts a valid book and sends its text exactly as typed', () => {
    assert.deepEqual(checkBook({ ...DUNE, title: '  Dune ' }), { book: { title: '  Dune ', author: 'Frank Herbert', year: 1965 } })
    assert.deepEqual(checkBook({ ...DUNE, year: '-9999' }), { book: { title: 'Dune', author: 'Frank Herbert', year: -9999 } })
    assert.deepEqual(checkBook({ ...DUNE, year: ' 9999 ' }), { book: { title: 'Dune', author: 'Frank Herbert', year: 9999 } })
  })

  it('refuses blank text, naming the field', () => {
    assert.deepEqual(checkBook({ title: ' \t', author: '', year: '1965' }), {
      errors: { title: 'Title is required.', author: 'Author is required.' },
    })
  })

  it('counts 500 characters, not UTF-16 units', () => {
    assert.ok('book' in checkBook({ ...DUNE, title: '😀'.repeat(500) }))
    assert.deepEqual(checkBook({ ...DUNE, author: 'a'.repeat(501) }), { errors: { author: 'Author must be at most 500 characters.' } })
  })

  it('refuses NUL and lone surrogates', () => {
    assert.ok('errors' in checkBook({ ...DUNE, title: 'a\u0000b' }))
    assert.ok('errors' in checkBook({ ...DUNE, author: 'a\ud800' }))
  })

  it('takes a whole year from -9999 to 9999 only', () => {
    for (const year of ['', '1965.5', '1e3', 'MCMLXV', '10000', '-10000', '0x10']) {
      assert.ok('errors' in checkBook({ ...DUNE, year }), `accepted ${JSON.stringify(year)}`)
    }
  })
})

describe('the query of "Finding books" (docs/api.md, Finding books)', () => {
  it('asks for a counted first page of every book by default', () => {
    assert.equal(firstPageUrl(EVERY_BOOK, 50), '/books?limit=50&count=true')
    assert.equal(isFiltered(EVERY_BOOK), false)
  })

  it('sends words, filters and the sort, leaving blank ones out', () => {
    const query = { q: 'harr pott', author: ' ', yearFrom: '1990 ', yearTo: '', sort: { field: 'title' as const, descending: true } }
    const params = new URL(firstPageUrl(query, 1000), 'http://x').searchParams
    assert.deepEqual(Object.fromEntries(params), { q: 'harr pott', year_from: '1990', sort: '-title', limit: '1000', count: 'true' })
    assert.equal(isFiltered(query), true)
    assert.equal(sameQuery(query, { ...query, author: '', yearFrom: '1990' }), true)
    assert.equal(sameQuery(query, { ...query, sort: undefined }), false)
  })

  it('exports with the same words, filters and sort, without paging', () => {
    const query = { q: 'harr pott', author: 'rowling', yearFrom: '', yearTo: '2000', sort: { field: 'year' as const, descending: false } }
    assert.deepEqual(exportQuery(query), {
      q: 'harr pott',
      author: 'rowling',
      year_to: '2000',
      sort: 'year',
      format: 'csv',
    })
    assert.deepEqual(exportQuery(EVERY_BOOK), { format: 'csv' })
  })

  it('reads the sorts of one column the table offers, and no other', () => {
    assert.deepEqual(parseSort('title'), { field: 'title', descending: false })
    assert.deepEqual(parseSort('-year'), { field: 'year', descending: true })
    for (const text of ['id', '-id', 'title,year', '--title', 'Title', ' title', '']) assert.equal(parseSort(text), undefined, text)
  })

  it('says the order in words', () => {
    assert.equal(describeOrder(EVERY_BOOK), 'in the order they were added')
    assert.equal(describeOrder({ ...EVERY_BOOK, q: 'dune' }), 'best matches first')
    assert.equal(describeOrder({ ...EVERY_BOOK, sort: { field: 'title', descending: false } }), 'by title, A to Z')
    assert.equal(describeOrder({ ...EVERY_BOOK, sort: { field: 'author', descending: true } }), 'by author, Z to A')
    assert.equal(describeOrder({ ...EVERY_BOOK, sort: { field: 'year', descending: false } }), 'by year, oldest first')
    assert.equal(describeOrder({ ...EVERY_BOOK, sort: { field: 'year', descending: true } }), 'by year, newest first')
  })

  it('sends an import in the format its name ends in, and as CSV when the name says none', () => {
    assert.deepEqual(['books.csv', 'books.txt', 'Books.NDJSON', 'books.json', 'books.tsv', 'export'].map(importFormat), [
      'csv',
      'csv',
      'ndjson',
      'json',
      'tsv',
      'csv',
    ])
  })
})

import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { canonicalQuery, findQueryOf, findsBooks, parseBookQuery, type RawBookQuery } from '../../src/books/list-parameters.ts'
import { Refusal } from '../../src/errors.ts'

function refused(raw: RawBookQuery) {
  assert.throws(
    () => parseBookQuery(raw),
    (err) => err instanceof Refusal && err.statusCode === 400 && err.message === 'Invalid input',
    JSON.stringify(raw),
  )
}

describe('parsing the query of GET /books', () => {
  it('reads every parameter', () => {
    assert.deepEqual(
      parseBookQuery({
        q: 'harr pott',
        title: 'Stone',
        author: 'Rowling',
        year: '1997',
        year_from: '-44',
        year_to: '2000',
        sort: '-year,title',
        count: 'true',
        limit: '20',
      }),
      {
        q: 'harr pott',
        title: 'Stone',
        author: 'Rowling',
        year: 1997,
        yearFrom: -44,
        yearTo: 2000,
        sort: [
          { field: 'year', descending: true },
          { field: 'title', descending: false },
        ],
        count: true,
        limit: 20,
      },
    )
  })

  it('counts blank text as absent', () => {
    assert.deepEqual(parseBookQuery({ q: '', title: '   ', author: '\t\u3000' }), { count: false })
  })

  it('keeps 200 characters of text and refuses 201, counting emoji as one character each', () => {
    for (const name of ['q', 'title', 'author'] as const) {
      assert.equal(parseBookQuery({ [name]: '😀'.repeat(200) })[name], '😀'.repeat(200))
      refused({ [name]: 'x'.repeat(201) })
      refused({ [name]: ' '.repeat(201) })
    }
  })

  it('accepts years from -9999 to 9999 and refuses anything else', () => {
    for (const year of ['-9999', '9999', '0', '-1', '2024']) assert.equal(parseBookQuery({ year }).year, Number(year))
    for (const name of ['year', 'year_from', 'year_to'] as const) {
      for (const bad of ['10000', '-10000', '1.5', '1e3', 'abc', '', ' 1', '+1', '-0', '01', '0x10', '２０２０']) refused({ [name]: bad })
    }
  })

  it('refuses year_from after year_to, and accepts them equal', () => {
    refused({ year_from: '2001', year_to: '2000' })
    assert.deepEqual(parseBookQuery({ year_from: '2000', year_to: '2000' }), { yearFrom: 2000, yearTo: 2000, count: false })
  })

  it('accepts count true or false only', () => {
    assert.equal(parseBookQuery({ count: 'true' }).count, true)
    assert.equal(parseBookQuery({ count: 'false' }).count, false)
    for (const bad of ['', 'TRUE', '1', 'yes', 'false ']) refused({ count: bad })
  })

  it('refuses unknown, repeated or empty sort fields', () => {
    for (const bad of [
      '',
      ',',
      'name',
      'title,',
      ',title',
      'title,,year',
      'title,title',
      'title,-title',
      '--year',
      '+year',
      'Title',
      ' title',
    ])
      refused({ sort: bad })
    assert.deepEqual(parseBookQuery({ sort: 'author,-id,year,title' }).sort, [
      { field: 'author', descending: false },
      { field: 'id', descending: true },
      { field: 'year', descending: false },
      { field: 'title', descending: false },
    ])
  })

  it('allows after only in id order', () => {
    for (const sort of [undefined, 'id', 'id,title']) assert.equal(parseBookQuery({ after: '5', sort, title: 'x' }).after, 5)
    refused({ after: '5', q: 'dune' })
    for (const sort of ['title', '-id', 'year,id']) refused({ after: '5', sort })
    assert.equal(parseBookQuery({ after: '5', q: '  ' }).after, 5)
  })

  it('keeps the rules of limit and after', () => {
    for (const bad of ['0', '1001', '-1', 'abc', '1.5', '01', '', '1e2']) refused({ limit: bad })
    for (const bad of ['-1', 'abc', '1.5', '01', '', '1e3', '9007199254740992']) refused({ after: bad })
  })

  it('tells a plain list from a search', () => {
    for (const raw of [{}, { limit: '5', after: '3' }, { q: ' ' }, { count: 'false' }]) assert.equal(findsBooks(parseBookQuery(raw)), false)
    for (const raw of [{ q: 'a' }, { title: 'a' }, { year: '1' }, { year_to: '1' }, { sort: 'id' }, { count: 'true' }, { cursor: 'x' }])
      assert.equal(findsBooks(parseBookQuery(raw)), true, JSON.stringify(raw))
  })
})

describe('the canonical form of a query', () => {
  it('is the same for the same query however it was written', () => {
    const a = parseBookQuery({ limit: '20', sort: 'title', q: 'harr pott', count: 'false', title: ' ' })
    const b = parseBookQuery({ q: 'harr pott', sort: 'title', limit: '20' })
    assert.equal(canonicalQuery(a), canonicalQuery(b))
    assert.equal(canonicalQuery(a), 'q=harr+pott&sort=title&limit=20')
  })

  it('encodes characters that mean something in a URL, and reads back to the same query', () => {
    const raw = { q: 'a&b=c #1 100% +x', author: 'Ö/?', year_from: '-5', sort: '-year,id', count: 'true', limit: '3', cursor: 'ignored' }
    const canonical = canonicalQuery(parseBookQuery(raw))
    assert.doesNotMatch(canonical, /[ #<>]/)
    const again = parseBookQuery(Object.fromEntries(new URLSearchParams(canonical)))
    assert.equal(canonicalQuery(again), canonical)
    assert.equal(again.q, raw.q)
    assert.equal(again.author, raw.author)
  })
})

describe('what the engines are asked', () => {
  it('folds the text and merges the year bounds', () => {
    const found = findQueryOf(parseBookQuery({ q: 'García MÁRQUEZ', title: 'SOLEDAD', year: '1967', year_from: '1900' }), undefined, 21)
    assert.deepEqual(found.filter, {
      words: ['garcia', 'marquez'],
      titleContains: 'soledad',
      authorContains: undefined,
      yearFrom: 1967,
      yearTo: 1967,
      afterId: undefined,
    })
    assert.deepEqual(found.order, { relevance: true })
    assert.equal(found.limit, 21)
  })

  it('orders by the sort when given, by relevance with q, else by id', () => {
    assert.deepEqual(findQueryOf(parseBookQuery({ q: 'x', sort: '-year' }), undefined, 1).order, {
      relevance: false,
      keys: [{ field: 'year', descending: true }],
    })
    assert.deepEqual(findQueryOf(parseBookQuery({ title: 'x' }), undefined, 1).order, {
      relevance: false,
      keys: [{ field: 'id', descending: false }],
    })
  })
})

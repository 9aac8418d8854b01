import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { FIRST_VIEW, readAddress, writeAddress, type ViewState } from '../src/address.ts'
import { EVERY_BOOK } from '../src/find-query.ts'

const SEARCHED: ViewState = {
  query: { q: 'harr pott', author: 'rowling', yearFrom: '1990', yearTo: '2000', sort: { field: 'title', descending: true } },
  page: 3,
  size: 100,
}

describe("the page's address", () => {
  it('is empty for the first page of every book', () => {
    assert.equal(writeAddress(FIRST_VIEW), '')
    assert.deepEqual(readAddress(''), { state: FIRST_VIEW, ignored: [] })
  })

  it('holds every parameter of the docs, and reads back what it wrote', () => {
    const address = writeAddress(SEARCHED)
    assert.equal(address, '?q=harr+pott&author=rowling&year_from=1990&year_to=2000&sort=-title&page=3&size=100')
    assert.deepEqual(readAddress(address), { state: SEARCHED, ignored: [] })
  })

  it('reads each sort the table offers, ascending and descending', () => {
    for (const field of ['title', 'author', 'year'] as const) {
      for (const descending of [false, true]) {
        const state = { ...FIRST_VIEW, query: { ...EVERY_BOOK, sort: { field, descending } } }
        assert.deepEqual(readAddress(writeAddress(state)), { state, ignored: [] })
      }
    }
  })

  it('reads each page size the page offers', () => {
    for (const size of [25, 50, 100]) assert.equal(readAddress(`?size=${size}`).state.size, size)
  })

  it('keeps blank values out, and takes them as absent', () => {
    const state = { ...FIRST_VIEW, query: { ...EVERY_BOOK, q: '  ', author: '' } }
    assert.equal(writeAddress(state), '')
    assert.deepEqual(readAddress('?q=&author=&year_from=&year_to=&sort=&page=&size='), { state: FIRST_VIEW, ignored: [] })
  })

  it('keeps the words of a search exactly as typed', () => {
    const { state } = readAddress(`?q=${encodeURIComponent(' García  &  <b> ')}`)
    assert.equal(state.query.q, ' García  &  <b> ')
  })
})

describe('an address edited by hand', () => {
  const cases: [address: string, ignored: RegExp, state: Partial<ViewState['query']> & { page?: number; size?: number }][] = [
    ['?sort=bogus', /^sort=“bogus”: the table sorts by title, author or year$/, {}],
    ['?sort=title,year', /^sort=“title,year”/, {}],
    ['?sort=id', /^sort=“id”/, {}],
    ['?year_from=abc', /^year_from=“abc”: a year is a whole number/, {}],
    ['?year_to=10000', /^year_to=“10000”/, {}],
    ['?year_from=2000&year_to=1990', /^year_from=2000 with year_to=1990: no year lies in that range$/, {}],
    ['?page=0', /^page=“0”: pages are numbered from 1$/, {}],
    ['?page=-2', /^page=“-2”/, {}],
    ['?page=two', /^page=“two”/, {}],
    ['?page=1.5', /^page=“1.5”/, {}],
    ['?size=7', /^size=“7”: a page holds 25, 50 or 100 books$/, {}],
    ['?size=200', /^size=“200”/, {}],
    ['?size=50.0', /^size=“50.0”/, {}],
    ['?colour=red', /^“colour”, which is not a setting of this page$/, {}],
    ['?title=dune', /^“title”, which is not a setting/, {}],
    [`?q=${'a'.repeat(201)}`, /^the search of over 200 characters$/, {}],
    [`?author=${'a'.repeat(201)}`, /^the author filter of over 200 characters$/, {}],
    ['?q=dune&q=emma', /^q given 2 times: only the first was used$/, { q: 'dune' }],
    ['?sort=bogus&year=1965&page=4', /^“year”, which/, { page: 4 }],
  ]
  for (const [address, ignored, expected] of cases) {
    it(`${address.slice(0, 60)} is read as a valid state, saying what was left out`, () => {
      const read = readAddress(address)
      assert.ok(
        read.ignored.some((text) => ignored.test(text)),
        `${JSON.stringify(read.ignored)} does not say ${ignored}`,
      )
      const { page = 1, size = 50, ...query } = expected
      assert.deepEqual(read.state, { query: { ...EVERY_BOOK, ...query }, page, size })
    })
  }

  it('keeps what is valid beside what it ignores', () => {
    const read = readAddress('?q=dune&year_from=1960&year_to=abc&sort=-year&size=25&page=2&utm_source=mail')
    assert.deepEqual(read.state, {
      query: { q: 'dune', author: '', yearFrom: '1960', yearTo: '', sort: { field: 'year', descending: true } },
      page: 2,
      size: 25,
    })
    assert.equal(read.ignored.length, 2)
  })

  it('quotes a long value shortly', () => {
    const [said] = readAddress(`?sort=${'x'.repeat(100)}`).ignored
    assert.ok(said!.length < 100, said)
  })
})

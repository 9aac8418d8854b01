import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ImportCheck } from 'book-catalogue-client'
import { describeCheck, describeImported, importLabel, planImport } from '../src/import-plan.ts'

const book = { title: 'Dune', author: 'Frank Herbert', year: 1965 }
const rowErrors = (count: number) => Array.from({ length: count }, (_, n) => ({ row: n + 1, message: 'year is missing' }))
const duplicates = (count: number) => Array.from({ length: count }, (_, n) => ({ row: n + 1, id: n % 2 === 0 ? n + 1 : null }))

function check(parts: Partial<ImportCheck>): ImportCheck {
  return { importable: 8, errors: [], duplicates: [], preview: [book], ...parts }
}

const neither = { skipInvalid: false, skipDuplicates: false }
const both = { skipInvalid: true, skipDuplicates: true }

describe('what "Import" would store', () => {
  it('imports every importable book of a clean file, whatever is chosen', () => {
    for (const choices of [neither, both]) assert.deepEqual(planImport(check({}), choices), { kind: 'ready', count: 8, exact: true })
    assert.equal(importLabel(planImport(check({ importable: 1 }), neither)), 'Import 1 book')
    assert.equal(importLabel(planImport(check({}), neither)), 'Import 8 books')
  })

  it('stores nothing while a row is invalid, until invalid rows are skipped', () => {
    const found = check({ importable: 5, errors: rowErrors(3) })
    const blocked = planImport(found, neither)
    assert.equal(blocked.kind, 'blocked')
    assert.match((blocked as { reason: string }).reason, /Skip invalid rows/)
    assert.equal(importLabel(blocked), 'Import books')
    assert.deepEqual(planImport(found, { skipInvalid: true, skipDuplicates: false }), { kind: 'ready', count: 5, exact: true })
  })

  it('counts the duplicates out only when they are skipped', () => {
    const found = check({ importable: 8, duplicates: duplicates(3) })
    assert.equal(importLabel(planImport(found, neither)), 'Import 8 books')
    assert.equal(importLabel(planImport(found, { skipInvalid: false, skipDuplicates: true })), 'Import 5 books')
    assert.equal(importLabel(planImport(check({ importable: 4, duplicates: duplicates(3) }), both)), 'Import 1 book')
  })

  it('says "up to" when the list of duplicates may have been cut', () => {
    const found = check({ importable: 1000, duplicates: duplicates(100) })
    assert.deepEqual(planImport(found, both), { kind: 'ready', count: 900, exact: false })
    assert.equal(importLabel(planImport(found, both)), 'Import up to 900 books')
    assert.equal(importLabel(planImport(found, neither)), 'Import 1,000 books')
  })

  it('has nothing to import from a file of invalid rows, or when every book is a skipped duplicate', () => {
    const nothing = planImport(check({ importable: 0, errors: rowErrors(2), preview: [] }), both)
    assert.equal(nothing.kind, 'nothing')
    const allRepeated = planImport(check({ importable: 2, duplicates: duplicates(2) }), both)
    assert.equal(allRepeated.kind, 'blocked')
    assert.equal(planImport(check({ importable: 2, duplicates: duplicates(2) }), neither).kind, 'ready')
  })
})

describe('what the page says of a check and of an import', () => {
  it('sums a check up', () => {
    assert.equal(describeCheck(check({}), 'books.csv'), '“books.csv” holds 8 books that can be imported. Nothing is stored yet.')
    assert.equal(
      describeCheck(check({ importable: 1, errors: rowErrors(1) }), 'a.csv'),
      '“a.csv” holds 1 book that can be imported and 1 invalid row. Nothing is stored yet.',
    )
    assert.equal(
      describeCheck(check({ duplicates: duplicates(1), errors: rowErrors(2) }), 'a.csv'),
      '“a.csv” holds 8 books that can be imported, 1 of them a duplicate, and 2 invalid rows. Nothing is stored yet.',
    )
    assert.equal(
      describeCheck(check({ importable: 500, duplicates: duplicates(100), errors: rowErrors(100) }), 'a.csv'),
      '“a.csv” holds 500 books that can be imported, 100 or more of them duplicates, and 100 or more invalid rows. Nothing is stored yet.',
    )
  })

  it('says how many books came in and how many rows were skipped', () => {
    assert.equal(describeImported({ imported: 2, ids: [1, 2] }, 'books.csv'), 'Imported 2 books from “books.csv”.')
    assert.equal(
      describeImported({ imported: 1, ids: [1], errors: rowErrors(2), duplicates: duplicates(1) }, 'books.csv'),
      'Imported 1 book from “books.csv”; skipped 2 invalid rows and 1 duplicate.',
    )
    assert.equal(
      describeImported({ imported: 7, ids: [], errors: rowErrors(100), duplicates: [] }, 'books.csv'),
      'Imported 7 books from “books.csv”; skipped 100 or more invalid rows.',
    )
  })
})

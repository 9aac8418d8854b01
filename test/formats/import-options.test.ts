import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { importOptionsOf } from '../../src/formats/import-options.ts'

const FORM = 'columns= takes title:<header>,author:<header>,year:<header>, each at most once'

describe('the options of an import', () => {
  test('none: all or nothing, stored, columns found by name', () => {
    assert.deepEqual(importOptionsOf({}), { ok: true, options: { dryRun: false, skipInvalid: false, columns: undefined } })
    assert.deepEqual(importOptionsOf({ duplicates: 'skip', other: ['a', 'b'] }), {
      ok: true,
      options: { dryRun: false, skipInvalid: false, columns: undefined },
    })
  })

  test('dry_run, invalid=skip and columns=, members in any case, headers trimmed', () => {
    assert.deepEqual(importOptionsOf({ dry_run: 'true', invalid: 'skip', columns: ' Title : Book Name ,year:Published:On' }), {
      ok: true,
      options: { dryRun: true, skipInvalid: true, columns: { title: 'Book Name', year: 'Published:On' } },
    })
    assert.deepEqual(importOptionsOf({ dry_run: 'false' }), {
      ok: true,
      options: { dryRun: false, skipInvalid: false, columns: undefined },
    })
  })

  test('anything else is refused, saying what each takes', () => {
    for (const [query, message] of [
      [{ dry_run: '1' }, 'dry_run= takes true or false'],
      [{ dry_run: '' }, 'dry_run= takes true or false'],
      [{ invalid: 'reject' }, 'invalid= takes skip'],
      [{ dry_run: ['true', 'true'] }, 'dry_run= is given more than once'],
      [{ columns: ['title:a', 'year:b'] }, 'columns= is given more than once'],
      [{ columns: '' }, FORM],
      [{ columns: 'title' }, FORM],
      [{ columns: 'title:a,' }, FORM],
      [{ columns: 'isbn:ISBN' }, FORM],
      [{ columns: ':a' }, FORM],
      [{ columns: 'author: ' }, FORM],
      [{ columns: 'title:a,Title:b' }, `columns= maps title twice: ${FORM}`],
    ] as const) {
      assert.deepEqual(importOptionsOf(query), { ok: false, message }, JSON.stringify(query))
    }
  })
})

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { importOptionsOf } from '../../src/formats/import-options.ts'

const FORM = 'columns= takes title:<header>,author:<header>,year:<header>, each at most once'

describe('the options of an import', () => {
  const NONE = { dryRun: false, skipInvalid: false, skipDuplicates: false, columns: undefined }

  test('none: all or nothing, duplicates stored, columns found by name', () => {
    assert.deepEqual(importOptionsOf({}), { ok: true, options: NONE })
    assert.deepEqual(importOptionsOf({ other: ['a', 'b'] }), { ok: true, options: NONE })
  })

  test('dry_run, invalid=skip, duplicates=skip and columns=, members in any case, headers trimmed', () => {
    assert.deepEqual(
      importOptionsOf({ dry_run: 'true', invalid: 'skip', duplicates: 'skip', columns: ' Title : Book Name ,year:Published:On' }),
      {
        ok: true,
        options: { dryRun: true, skipInvalid: true, skipDuplicates: true, columns: { title: 'Book Name', year: 'Published:On' } },
      },
    )
    assert.deepEqual(importOptionsOf({ dry_run: 'false' }), { ok: true, options: NONE })
    assert.deepEqual(importOptionsOf({ duplicates: 'skip' }), { ok: true, options: { ...NONE, skipDuplicates: true } })
  })

  test('anything else is refused, saying what each takes', () => {
    for (const [query, message] of [
      [{ dry_run: '1' }, 'dry_run= takes true or false'],
      [{ dry_run: '' }, 'dry_run= takes true or false'],
      [{ invalid: 'reject' }, 'invalid= takes skip'],
      [{ duplicates: 'keep' }, 'duplicates= takes skip'],
      [{ duplicates: '' }, 'duplicates= takes skip'],
      [{ duplicates: ['skip', 'skip'] }, 'duplicates= is given more than once'],
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

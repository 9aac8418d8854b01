import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { changedFields, changes, rebase } from '../src/book-changes.ts'

const dune = { title: 'Dune', author: 'Frank Herbert', year: 1965 }

describe('the changes of a book', () => {
  it('names the fields that differ, and what a PUT sends to make one version into another', () => {
    assert.deepEqual(changedFields(dune, dune), [])
    assert.deepEqual(changedFields(dune, { ...dune, year: 1966, title: 'Dune Messiah' }), ['title', 'year'])
    assert.deepEqual(changes(dune, { ...dune, year: 1966 }), { year: 1966 })
    assert.deepEqual(changes(dune, dune), {})
  })

  it('puts the fields the person changed on top of the version someone else saved meanwhile', () => {
    const edited = { ...dune, title: 'Children of Dune' }
    const current = { ...dune, author: 'F. Herbert' }
    const rebased = rebase(dune, edited, current)
    assert.deepEqual(rebased, {
      theirs: ['author'],
      mine: ['title'],
      form: { title: 'Children of Dune', author: 'F. Herbert', year: 1965 },
    })
    // Saving again sends only the person's field: the other change survives.
    assert.deepEqual(changes(current, rebased.form), { title: 'Children of Dune' })
  })

  it('keeps the person’s value of a field both changed', () => {
    const rebased = rebase(dune, { ...dune, year: 1966 }, { ...dune, year: 1970, title: 'Dune (new edition)' })
    assert.deepEqual(rebased.theirs, ['title', 'year'])
    assert.deepEqual(rebased.mine, ['year'])
    assert.deepEqual(rebased.form, { title: 'Dune (new edition)', author: 'Frank Herbert', year: 1966 })
  })
})

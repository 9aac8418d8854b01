import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ApiError, type Book } from 'book-catalogue-client'
import { actOnBooks } from '../src/book-batch.ts'

const books = Array.from({ length: 20 }, (_, n): Book => ({ id: n + 1, title: `Book ${n + 1}`, author: 'A', year: 2000 }))
const tick = () => new Promise((resolve) => setTimeout(resolve, 1))

describe('acting on several books', () => {
  it('acts on each, a few at a time, and says how many are done', async () => {
    let running = 0
    let most = 0
    const asked: number[] = []
    const progress: number[] = []
    const result = await actOnBooks(
      async (id) => {
        asked.push(id)
        most = Math.max(most, ++running)
        await tick()
        running -= 1
      },
      books,
      (done) => progress.push(done),
    )
    assert.deepEqual(
      asked.toSorted((a, b) => a - b),
      books.map(({ id }) => id),
    )
    assert.equal(most, 4)
    assert.deepEqual(result, { done: result.done, failure: undefined })
    assert.deepEqual(
      result.done.map(({ id }) => id).toSorted((a, b) => a - b),
      books.map(({ id }) => id),
    )
    assert.deepEqual(
      progress,
      Array.from({ length: 20 }, (_, n) => n + 1),
    )
  })

  it('counts a book someone else deleted or restored already as done', async () => {
    const result = await actOnBooks(
      async (id) => {
        if (id === 2) throw new ApiError(404, 'Book not found')
      },
      books.slice(0, 3),
      () => {},
    )
    assert.equal(result.done.length, 3)
    assert.equal(result.failure, undefined)
  })

  it('stops at the first refusal, leaving the rest as they were', async () => {
    const unavailable = new ApiError(503, 'Service unavailable', null, 5)
    const asked: number[] = []
    const result = await actOnBooks(
      async (id) => {
        asked.push(id)
        await tick()
        if (id >= 6) throw unavailable
      },
      books,
      () => {},
    )
    assert.equal(result.failure, unavailable)
    assert.deepEqual(
      result.done.map(({ id }) => id).toSorted((a, b) => a - b),
      [1, 2, 3, 4, 5],
    )
    assert.ok(asked.length < 10, `asked ${asked.length} times after the store refused`)
  })
})

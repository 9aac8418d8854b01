import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Book, Page } from 'book-catalogue-client'
import { EVERY_BOOK } from '../src/find-query.ts'
import { createResults } from '../src/results.ts'

const book = (id: number): Book => ({ id, title: `Book ${id}`, author: 'A', year: 2000 })

/**
 * The service's keyset pages over `count` books: the link of each answer holds the parameters
 * of the first request, its `limit` included, and where the next page starts.
 */
function fakeService(count: number) {
  const stored = Array.from({ length: count }, (_, n) => book(n + 1))
  const asked: string[] = []
  const signals: (AbortSignal | undefined)[] = []
  let failNext = false
  return {
    stored,
    asked,
    signals,
    failOnce() {
      failNext = true
    },
    async findBooks(url: string, signal?: AbortSignal): Promise<Page<Book>> {
      asked.push(url)
      signals.push(signal)
      await Promise.resolve()
      if (failNext) {
        failNext = false
        throw new Error('the network is down')
      }
      const params = new URL(url, 'http://x').searchParams
      const limit = Number(params.get('limit'))
      const after = Number(params.get('cursor') ?? 0)
      const page = stored.filter((held) => held.id > after).slice(0, limit)
      const last = page.at(-1)
      const more = last !== undefined && stored.some((held) => held.id > last.id)
      params.set('cursor', String(last?.id))
      return { items: page, next: more ? `/books?${params}` : undefined, total: stored.length }
    },
  }
}

const limits = (asked: string[]) => asked.map((url) => Number(new URL(url, 'http://x').searchParams.get('limit')))

describe("the books of one query, read as the page's pages need them", () => {
  it('asks first for what the page shown needs, counted', async () => {
    const service = fakeService(120)
    const results = createResults(service.findBooks, EVERY_BOOK, 50)
    assert.equal(results.total(), 0)
    await results.ensure(50)
    assert.deepEqual(service.asked, ['/books?limit=50&count=true'])
    assert.equal(results.books().length, 50)
    assert.equal(results.total(), 120)
    assert.equal(results.complete(), false)
  })

  it('follows the link as it is for the next page', async () => {
    const service = fakeService(120)
    const results = createResults(service.findBooks, EVERY_BOOK, 50)
    await results.ensure(50)
    await results.ensure(100)
    assert.deepEqual(service.asked, ['/books?limit=50&count=true', '/books?limit=50&count=true&cursor=50'])
    await results.ensure(150)
    assert.equal(service.asked.length, 3)
    assert.deepEqual(
      results.books().map(({ id }) => id),
      service.stored.map(({ id }) => id),
    )
    assert.equal(results.complete(), true)
    await results.ensure(200)
    assert.equal(service.asked.length, 3, 'nothing more is asked once every match is read')
  })

  it('reads again with the largest requests for a jump further than two steps, keeping the books shown meanwhile', async () => {
    const service = fakeService(2600)
    const held: number[] = []
    const results = createResults(
      (url, signal) => {
        held.push(results.books().length)
        return service.findBooks(url, signal)
      },
      EVERY_BOOK,
      50,
    )
    await results.ensure(50)
    await results.ensure(2501)
    assert.deepEqual(limits(service.asked), [50, 1000, 1000, 1000])
    assert.deepEqual(
      results.books().map(({ id }) => id),
      service.stored.map(({ id }) => id),
    )
    assert.deepEqual(held, [0, 50, 1000, 2000], 'the books shown stay until the new reading holds as many')
  })

  it('starts with larger requests for a page further on, up to the largest', async () => {
    const service = fakeService(5000)
    await createResults(service.findBooks, EVERY_BOOK, 150).ensure(150)
    await createResults(service.findBooks, EVERY_BOOK, 4000).ensure(4000)
    assert.deepEqual(limits(service.asked), [150, 1000, 1000, 1000, 1000])
  })

  it('shares one request between two that need it', async () => {
    const service = fakeService(120)
    const results = createResults(service.findBooks, EVERY_BOOK, 50)
    await Promise.all([results.ensure(50), results.ensure(50)])
    assert.equal(service.asked.length, 1)
  })

  it('keeps a book added here where it was shown, and once', async () => {
    const service = fakeService(60)
    const results = createResults(service.findBooks, EVERY_BOOK, 50)
    await results.ensure(50)
    const added = book(61)
    service.stored.push(added)
    results.insert(added, 0)
    assert.equal(results.books()[0], added)
    assert.equal(results.total(), 61)
    await results.ensure(100)
    assert.equal(results.books().filter(({ id }) => id === 61).length, 1)
    assert.equal(results.books().length, 61)
    assert.equal(results.total(), 61)
  })

  it('forgets deleted books, also when an answer sent before the deletion still holds them', async () => {
    const service = fakeService(120)
    const results = createResults(service.findBooks, EVERY_BOOK, 50)
    await results.ensure(50)
    results.forget(new Set([3, 70]))
    assert.equal(results.books().length, 49)
    assert.equal(results.total(), 119)
    await results.ensure(100)
    assert.ok(!results.books().some(({ id }) => id === 3 || id === 70))
  })

  it('takes edited values in place', async () => {
    const service = fakeService(10)
    const results = createResults(service.findBooks, EVERY_BOOK, 50)
    await results.ensure(50)
    results.replace({ ...book(4), title: 'Renamed' })
    assert.equal(results.books()[3]!.title, 'Renamed')
  })

  it('asks again after a failed request, from where it stopped', async () => {
    const service = fakeService(120)
    const results = createResults(service.findBooks, EVERY_BOOK, 50)
    await results.ensure(50)
    service.failOnce()
    await assert.rejects(results.ensure(100), /the network is down/)
    await results.ensure(100)
    assert.equal(service.asked[1], service.asked[2])
    assert.equal(results.books().length, 100)
  })

  it('abandons its request when closed', async () => {
    const service = fakeService(120)
    const results = createResults(service.findBooks, EVERY_BOOK, 50)
    const reading = results.ensure(50)
    results.close()
    await reading
    assert.equal(service.signals[0]?.aborted, true)
  })
})

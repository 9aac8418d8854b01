import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ApiError, BookCatalogue, ConnectionError } from '../src/index.ts'
import { serviceFor, storeEngines } from './support/service.ts'
import { closedPort } from '../../../test/support/closed-port.ts'

const dune = { title: 'Dune', author: 'Frank Herbert', year: 1965 }

interface Sent {
  method: string
  path: string
  headers: Headers
}

/**
 * A fetch that records what is sent and lets a test interfere: `lose` makes the answer of a
 * request that matches get lost after the service handled it, as a cut connection does.
 */
function spy(interfere: { lose?: (sent: Sent) => boolean; answer?: (sent: Sent) => Response | undefined } = {}) {
  const sent: Sent[] = []
  const fetcher: typeof fetch = async (input, init) => {
    const url = new URL(String(input))
    const request = { method: init?.method ?? 'GET', path: `${url.pathname}${url.search}`, headers: new Headers(init?.headers) }
    sent.push(request)
    const instead = interfere.answer?.(request)
    if (instead !== undefined) return instead
    const response = await fetch(input, init)
    if (interfere.lose?.(request)) {
      await response.arrayBuffer()
      throw new TypeError('fetch failed', { cause: new Error('read ECONNRESET') })
    }
    return response
  }
  return { sent, fetch: fetcher }
}

function firstMatch(matches: (sent: Sent) => boolean): (sent: Sent) => boolean {
  let done = false
  return (sent) => {
    if (done || !matches(sent)) return false
    done = true
    return true
  }
}

const unavailable = (retryAfter = '0') =>
  new Response(JSON.stringify({ status: 503, message: 'Service unavailable', data: null }), {
    status: 503,
    headers: { 'content-type': 'application/json; charset=utf-8', 'retry-after': retryAfter },
  })

/** A token whose claims say what a test needs; its signature is not the service's. */
function tokenExpiringIn(seconds: number): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')
  const now = Math.floor(Date.now() / 1000)
  return `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ sub: 'librarian', iat: now - 60, exp: now + seconds })}.c2lnbmF0dXJl`
}

for (const engine of storeEngines) {
  describe(`the client's requests (${engine.name})`, { skip: engine.skip }, () => {
    it('a book created again after its answer was lost is stored once: the retry carries the same Idempotency-Key', async (t) => {
      const service = await serviceFor(t, engine)
      const { sent, fetch } = spy({ lose: firstMatch((request) => request.path === '/book') })
      const catalogue = await service.admin({ fetch })
      const created = (await catalogue.books.create(dune)).book
      const posts = sent.filter((request) => request.path === '/book')
      assert.equal(posts.length, 2)
      assert.match(posts[0]!.headers.get('idempotency-key')!, /^[0-9a-f]{32}$/)
      assert.equal(posts[1]!.headers.get('idempotency-key'), posts[0]!.headers.get('idempotency-key'))
      assert.deepEqual(await catalogue.books.find().all(), [created])
    })

    it('an import sent again after its answer was lost stores its books once', async (t) => {
      const service = await serviceFor(t, engine)
      const { sent, fetch } = spy({ lose: firstMatch((request) => request.path === '/books/import') })
      const catalogue = await service.admin({ fetch })
      const result = await catalogue.books.import(new Blob(['title,author,year\nDune,Frank Herbert,1965\nEmma,Jane Austen,1815\n']))
      assert.equal(sent.filter((request) => request.path === '/books/import').length, 2)
      assert.equal(result.imported, 2)
      assert.equal(await catalogue.books.count(), 2)
    })

    it('reads are retried after a 503, as Retry-After says', async (t) => {
      const service = await serviceFor(t, engine)
      let refusals = 2
      const { sent, fetch } = spy({
        answer: (request) => (request.path.startsWith('/books') && refusals-- > 0 ? unavailable() : undefined),
      })
      const catalogue = await service.admin({ fetch })
      await catalogue.books.create(dune)
      assert.equal((await catalogue.books.find().all()).length, 1)
      assert.equal(sent.filter((request) => request.path.startsWith('/books?')).length, 3)
    })

    it('a change that cannot be told apart from its retry is not retried: the lost answer is a ConnectionError', async (t) => {
      const service = await serviceFor(t, engine)
      const { sent, fetch } = spy({ lose: (request) => request.method === 'DELETE' || request.headers.has('if-match') })
      const catalogue = await service.admin({ fetch })
      const { book, etag } = await catalogue.books.create(dune)
      const { id } = book
      await assert.rejects(catalogue.books.update(id, { year: 1 }, { ifMatch: etag }), ConnectionError)
      await assert.rejects(catalogue.books.delete(id), ConnectionError)
      assert.equal(sent.filter((request) => request.method === 'PUT' || request.method === 'DELETE').length, 2)
      // Both were done, once each.
      assert.deepEqual(
        (await catalogue.books.trash().all()).map((book) => [book.id, book.year]),
        [[id, 1]],
      )
    })

    it('a 503 that lasts is an ApiError once the retries are spent', async (t) => {
      const service = await serviceFor(t, engine)
      const { sent, fetch } = spy({ answer: (request) => (request.path.startsWith('/books') ? unavailable() : undefined) })
      const catalogue = await service.admin({ fetch, retries: 2 })
      await assert.rejects(catalogue.books.find().all(), { name: 'ApiError', status: 503, message: 'Service unavailable', retryAfter: 0 })
      assert.equal(sent.filter((request) => request.path.startsWith('/books')).length, 3)
    })

    it("a 503 asking for a longer wait than longestWaitSeconds is the caller's at once; a shorter one is waited for", async (t) => {
      const service = await serviceFor(t, engine)
      let retryAfter = '2'
      const { sent, fetch } = spy({ answer: (request) => (request.path.startsWith('/books?') ? unavailable(retryAfter) : undefined) })
      const catalogue = await service.admin({ fetch, retries: 1, longestWaitSeconds: 1 })
      await assert.rejects(catalogue.books.find().all(), { status: 503, retryAfter: 2 })
      assert.equal(sent.filter((request) => request.path.startsWith('/books?')).length, 1)
      retryAfter = '1'
      const started = performance.now()
      await assert.rejects(catalogue.books.find().all(), { status: 503, retryAfter: 1 })
      assert.equal(sent.filter((request) => request.path.startsWith('/books?')).length, 1 + 2)
      // A timer may fire a fraction of a millisecond before the clock says its time is up.
      assert.ok(performance.now() - started >= 990, 'the retry waited the second asked for')
    })

    it('renews the token with POST /token/refresh before it expires, and hears of every new token', async (t) => {
      const service = await serviceFor(t, engine)
      const { sent, fetch } = spy()
      const heard: (string | undefined)[] = []
      // A token renewed within its whole lifetime is renewed at the first request after the login.
      const catalogue = await service.admin({ fetch, renewWithinSeconds: 900, onToken: (token) => heard.push(token) })
      await catalogue.books.create(dune)
      assert.deepEqual(
        sent.map((request) => request.path),
        ['/token', '/token/refresh', '/book'],
      )
      assert.equal(heard.length, 2)
      assert.equal(sent[2]!.headers.get('authorization'), heard[1])
      assert.equal(catalogue.token, heard[1])
      assert.equal((await new BookCatalogue({ url: service.url, token: heard[1] }).books.find().all()).length, 1)
    })

    it('an expired token is not renewed, and one the service would not renew is asked about once: the requests say why', async (t) => {
      const service = await serviceFor(t, engine)
      const expired = spy()
      const late = new BookCatalogue({ url: service.url, token: tokenExpiringIn(-10), fetch: expired.fetch })
      await assert.rejects(late.books.find().all(), { status: 401, message: 'Invalid token' })
      assert.deepEqual(
        expired.sent.map((request) => request.path),
        ['/books?limit=1000'],
      )
      const refused = spy()
      const forged = new BookCatalogue({ url: service.url, token: tokenExpiringIn(60), fetch: refused.fetch })
      await assert.rejects(forged.books.find().all(), { status: 401, message: 'Invalid token' })
      await assert.rejects(forged.books.find().all(), { status: 401, message: 'Invalid token' })
      assert.deepEqual(
        refused.sent.map((request) => request.path),
        ['/token/refresh', '/books?limit=1000', '/books?limit=1000'],
      )
    })

    it('a key is sent instead of a token, as it is, and never renewed', async (t) => {
      const service = await serviceFor(t, engine)
      const admin = await service.admin()
      const { key } = await admin.keys.create({ name: 'nightly import', role: 'editor' })
      const { sent, fetch } = spy()
      const program = new BookCatalogue({ url: service.url, key, fetch })
      const created = (await program.books.create(dune)).book
      assert.deepEqual((await program.books.get(created.id)).book, created)
      assert.deepEqual(
        sent.map((request) => [request.path, request.headers.get('authorization')]),
        [
          ['/book', key],
          [`/book/${created.id}`, key],
        ],
      )
      const [change] = await admin.books.history(created.id).all()
      assert.equal(change?.actor, 'key:nightly import')
    })

    it('a refused token is told to onRefused, and the request sent once more with the token it puts in place', async (t) => {
      const service = await serviceFor(t, engine)
      const valid = (await service.admin()).token!
      let current = tokenExpiringIn(600)
      const refusals: string[] = []
      const { sent, fetch } = spy()
      const page = new BookCatalogue({
        url: service.url,
        fetch,
        currentToken: () => current,
        onRefused: async (error) => {
          refusals.push(error.message)
          current = valid
          return true
        },
      })
      const file = new Blob(['title,author,year\nDune,Frank Herbert,1965\n'])
      assert.equal((await page.books.import(file, { onProgress: () => {} })).imported, 1)
      assert.deepEqual(refusals, ['Invalid token'])
      assert.deepEqual(
        sent.map((request) => request.path),
        ['/books/import', '/books/import'],
      )
      const giveUp = new BookCatalogue({ url: service.url, currentToken: () => tokenExpiringIn(600), onRefused: async () => false })
      await assert.rejects(giveUp.books.find().all(), { status: 401, message: 'Invalid token' })
      // A renewal refused is the caller's to hear: it knows a password is needed again.
      let asked = 0
      const renewing = new BookCatalogue({ url: service.url, currentToken: () => tokenExpiringIn(600), onRefused: async () => ++asked > 0 })
      await assert.rejects(renewing.refresh(), { status: 401, message: 'Invalid token' })
      assert.equal(asked, 0)
    })

    it('an unreachable service is a ConnectionError that names it', async () => {
      const url = `http://127.0.0.1:${await closedPort()}`
      const catalogue = new BookCatalogue({ url, retries: 1 })
      const err = await catalogue.login('someone', 'something').catch((error: unknown) => error)
      assert.ok(err instanceof ConnectionError)
      assert.equal(err.message, `Cannot reach ${url}: connect ECONNREFUSED ${url.slice('http://'.length)}`)
      assert.ok(!(err instanceof ApiError))
    })
  })
}

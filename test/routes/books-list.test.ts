import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { SqliteStore } from '../../src/store/sqlite/store.ts'
import type { Store } from '../../src/store/store.ts'
import { buildTestApp, issueToken, storeEngines, withToken } from '../helpers.ts'
import { listById } from '../support/reads.ts'

interface ListBody {
  status: number
  message: string
  data: { id: number; title: string; author: string; year: number }[] | null
}

for (const engine of storeEngines) {
  describe(`GET /books on ${engine.name}`, { skip: engine.skip }, () => {
    let app: FastifyInstance
    let store: Store
    let token: string

    before(async () => {
      store = await engine.open()
      app = await buildTestApp({}, { store })
      token = await issueToken(app)
    })
    after(() => app.close())

    const list = (query = '') => app.inject(withToken(token, { method: 'GET', url: `/books${query}` }))

    /** Adds books until the store holds `count`, and returns every id, ascending. */
    async function fill(count: number): Promise<number[]> {
      const ids = (await listById(store, 0, Number.MAX_SAFE_INTEGER)).map((book) => book.id)
      for (let n = ids.length; n < count; n++) {
        ids.push((await store.books.create('tester', { title: `Title ${n}`, author: `Author ${n}`, year: 1900 + (n % 100) })).id)
      }
      return ids.slice(0, count)
    }

    test('without books, data is an empty array and there is no Link', async () => {
      const res = await list()
      assert.equal(res.statusCode, 200)
      assert.deepEqual(res.json(), { status: 200, message: 'Books retrieved successfully', data: [] })
      assert.equal(res.headers.link, undefined)
      assert.deepEqual((await list('?limit=5')).json<ListBody>().data, [])
    })

    test('by default every book comes back, ascending by id, with no Link', async () => {
      const ids = await fill(7)
      const res = await list()
      assert.equal(res.statusCode, 200)
      const body = res.json<ListBody>()
      assert.equal(body.message, 'Books retrieved successfully')
      assert.deepEqual(
        body.data!.map((book) => book.id),
        ids,
      )
      assert.deepEqual(Object.keys(body.data![0]!), ['id', 'title', 'author', 'year'])
      assert.equal(res.headers.link, undefined)
    })

    test('a list that one page holds comes whole, with its length', async () => {
      await fill(7)
      const short = await list()
      assert.equal(short.headers['content-length'], String(Buffer.byteLength(short.body)))
      assert.equal(short.headers['transfer-encoding'], undefined)
      assert.equal(short.json<ListBody>().data!.length, 7)
      assert.ok(Number(short.headers['x-change-seq']) > 0)
    })

    test('limit and after walk the list a page at a time, following Link', async () => {
      const ids = await fill(7)
      const seen: number[] = []
      let url: string | undefined = '/books?limit=3'
      const links: string[] = []
      while (url !== undefined) {
        const res: LightMyRequestResponse = await app.inject(withToken(token, { method: 'GET', url }))
        assert.equal(res.statusCode, 200)
        const page = res.json<ListBody>().data!
        assert.ok(page.length <= 3)
        seen.push(...page.map((book) => book.id))
        const link = res.headers.link as string | undefined
        if (link !== undefined) links.push(link)
        url = link === undefined ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)![1]
      }
      assert.deepEqual(seen, ids)
      assert.deepEqual(links, [`</books?limit=3&after=${ids[2]}>; rel="next"`, `</books?limit=3&after=${ids[5]}>; rel="next"`])
    })

    test('a page that ends exactly at the last book has no Link', async () => {
      const ids = await fill(7)
      const res = await list(`?limit=3&after=${ids[3]}`)
      assert.deepEqual(
        res.json<ListBody>().data!.map((book) => book.id),
        ids.slice(4),
      )
      assert.equal(res.headers.link, undefined)
      const whole = await list('?limit=7')
      assert.equal(whole.json<ListBody>().data!.length, 7)
      assert.equal(whole.headers.link, undefined)
    })

    test('after alone returns every book after that id', async () => {
      const ids = await fill(7)
      assert.deepEqual(
        (await list(`?after=${ids[4]}`)).json<ListBody>().data!.map((book) => book.id),
        ids.slice(5),
      )
      assert.deepEqual(
        (await list('?after=0')).json<ListBody>().data!.map((book) => book.id),
        ids,
      )
      assert.deepEqual((await list(`?after=${ids[6]! + 1000}`)).json<ListBody>().data, [])
    })

    test('limit accepts 1 to 1000', async () => {
      const ids = await fill(7)
      const one = await list('?limit=1')
      assert.deepEqual(
        one.json<ListBody>().data!.map((book) => book.id),
        [ids[0]],
      )
      assert.equal(one.headers.link, `</books?limit=1&after=${ids[0]}>; rel="next"`)
      const most = await list('?limit=1000')
      assert.equal(most.statusCode, 200)
      assert.equal(most.json<ListBody>().data!.length, 7)
    })

    for (const query of ['limit=0', 'limit=1001', 'limit=-1', 'limit=abc', 'limit=1.5', 'limit=01', 'limit=', 'limit=1e2', 'limit=%201']) {
      test(`?${query} is invalid input`, async () => {
        const res = await list(`?${query}`)
        assert.equal(res.statusCode, 400)
        assert.deepEqual(res.json(), { status: 400, message: 'Invalid input', data: null })
      })
    }

    for (const query of [
      'after=-1',
      'after=abc',
      'after=1.5',
      'after=01',
      'after=',
      'after=1e3',
      'after=9007199254740992',
      'after=99999999999999999',
    ]) {
      test(`?${query} is invalid input`, async () => {
        const res = await list(`?${query}`)
        assert.equal(res.statusCode, 400)
        assert.deepEqual(res.json(), { status: 400, message: 'Invalid input', data: null })
      })
    }

    test('unknown parameters are ignored', async () => {
      const ids = await fill(7)
      assert.deepEqual(
        (await list('?page=2&order=desc')).json<ListBody>().data!.map((book) => book.id),
        ids,
      )
      const paged = await list('?limit=2&offset=4')
      assert.deepEqual(
        paged.json<ListBody>().data!.map((book) => book.id),
        ids.slice(0, 2),
      )
      assert.equal(paged.headers.link, `</books?limit=2&after=${ids[1]}>; rel="next"`)
    })

    test('paging still needs a token', async () => {
      const res = await app.inject({ method: 'GET', url: '/books?limit=2' })
      assert.equal(res.statusCode, 401)
      assert.deepEqual(res.json(), { status: 401, message: 'Authorization token required', data: null })
    })

    test('text that JSON must escape comes back exactly as it was sent', async () => {
      const awkward = { title: 'Quote " backslash \\ tab \t newline \n unit \u001f', author: 'é 😀 \u2028 \u2029 </script>', year: -44 }
      const created = await app.inject(withToken(token, { method: 'POST', url: '/book', payload: awkward }))
      assert.equal(created.statusCode, 201)
      const id = created.json().data.id as number
      for (const query of ['', '?limit=1000']) {
        const found = (await list(query)).json<ListBody>().data!.find((book) => book.id === id)
        assert.deepEqual(found, { id, ...awkward })
      }
      assert.equal((await app.inject(withToken(token, { method: 'DELETE', url: `/book/${id}` }))).statusCode, 200)
    })

    test('a list longer than one batch comes back whole, ascending, as valid JSON', async () => {
      const ids = await fill(2345)
      const res = await list()
      assert.equal(res.statusCode, 200)
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8')
      assert.equal(res.headers.link, undefined)
      // Streamed a page at a time: its length is not known when it starts.
      assert.equal(res.headers['content-length'], undefined)
      const body = JSON.parse(res.body) as ListBody
      assert.deepEqual(Object.keys(body), ['status', 'message', 'data'])
      assert.equal(body.status, 200)
      assert.equal(body.message, 'Books retrieved successfully')
      assert.deepEqual(
        body.data!.map((book) => book.id),
        ids,
      )
      assert.deepEqual(body.data![2000], { id: ids[2000], title: 'Title 2000', author: 'Author 2000', year: 1900 })
      const tail = await list(`?after=${ids[1499]}`)
      assert.deepEqual(
        tail.json<ListBody>().data!.map((book) => book.id),
        ids.slice(1500),
      )
    })
  })
}

describe('GET /books, short or long', () => {
  let app: FastifyInstance
  let store: Store
  let token: string

  before(async () => {
    store = new SqliteStore({ path: ':memory:' })
    app = await buildTestApp({}, { store })
    token = await issueToken(app)
  })
  after(() => app.close())

  test('short and long lists carry only the members of a book', async () => {
    for (let n = 0; n < 1500; n++) await store.books.create('tester', { title: `Title ${n}`, author: 'Author', year: 2000 })
    for (const url of ['/books?after=1000', '/books']) {
      const res = await app.inject(withToken(token, { method: 'GET', url }))
      assert.equal(res.statusCode, 200)
      const body = JSON.parse(res.body) as ListBody
      assert.equal(body.data!.length, url === '/books' ? 1500 : 500)
      assert.deepEqual(
        body.data![0],
        url === '/books'
          ? { id: 1, title: 'Title 0', author: 'Author', year: 2000 }
          : { id: 1001, title: 'Title 1000', author: 'Author', year: 2000 },
      )
      assert.ok(body.data!.every((book, i) => Object.keys(book).length === 4 && (i === 0 || book.id > body.data![i - 1]!.id)))
    }
  })
})

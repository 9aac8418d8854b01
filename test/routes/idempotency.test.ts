import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { after, describe, test, type TestContext } from 'node:test'
import type { FastifyInstance, InjectOptions } from 'fastify'
import type { Store } from '../../src/store/store.ts'
import { buildTestApp, dune, issueToken, listenOnLoopback, storeEngines, storeWith, withToken } from '../helpers.ts'
import { call, login, serviceEnv, startService } from '../support/service.ts'

const emma = { title: 'Emma', author: 'Jane Austen', year: 1815 }

/** A promise and the function that settles it, for a test to wait on an event. */
function signal<T = void>() {
  let fire!: (value: T) => void
  const fired = new Promise<T>((resolve) => (fire = resolve))
  return { fire, fired }
}

/** The same store, whose transactions wait for `hold` before they begin, or after they commit. */
function heldStore(store: Store, where: 'before' | 'after') {
  const entered = signal()
  const release = signal()
  const held = storeWith(store, {
    async transaction(work) {
      if (where === 'before') {
        entered.fire()
        await release.fired
        return store.transaction(work)
      }
      const result = await store.transaction(work)
      entered.fire()
      await release.fired
      return result
    },
  })
  return { held, entered: entered.fired, release: release.fire }
}

for (const engine of storeEngines) {
  describe(`Idempotency-Key on ${engine.name}`, { skip: engine.skip }, () => {
    async function service(t: TestContext, store?: Store) {
      const app: FastifyInstance = await buildTestApp({}, { store: store ?? (await engine.open()) })
      t.after(() => app.close())
      const token = await issueToken(app)
      const send = (options: InjectOptions) => app.inject(withToken(token, options))
      const create = (key: string | undefined, book: object = dune) =>
        send({ method: 'POST', url: '/book', payload: book, headers: key === undefined ? {} : { 'idempotency-key': key } })
      const count = async () => (await send({ method: 'GET', url: '/books' })).json().data.length
      return { app, token, send, create, count }
    }

    test('POST /book: the same key and body answer the first answer again and store nothing new', async (t) => {
      const { create, count } = await service(t)
      const first = await create('order-1')
      assert.equal(first.statusCode, 201)
      const again = await create('order-1')
      assert.equal(again.statusCode, 201)
      assert.equal(again.body, first.body)
      assert.equal(again.headers.location, first.headers.location)
      assert.equal(again.headers.etag, first.headers.etag)
      assert.equal(again.headers['content-type'], 'application/json; charset=utf-8')
      assert.equal(again.headers['idempotent-replayed'], 'true')
      assert.equal(await count(), 1)
    })

    test('another key, or no key, creates another book', async (t) => {
      const { create, count } = await service(t)
      assert.equal((await create('a')).statusCode, 201)
      assert.equal((await create('b')).statusCode, 201)
      assert.equal((await create(undefined)).statusCode, 201)
      assert.equal((await create(undefined)).statusCode, 201)
      assert.equal(await count(), 4)
    })

    test('the same key with a different body is 422, and stores nothing', async (t) => {
      const { create, count } = await service(t)
      await create('k')
      const res = await create('k', emma)
      assert.equal(res.statusCode, 422)
      assert.deepEqual(res.json(), { status: 422, message: 'Idempotency key reused with a different request', data: null })
      assert.equal(await count(), 1)
    })

    test('a key is scoped to its route: the same key on the import is a request of its own', async (t) => {
      const { send, create, count } = await service(t)
      await create('shared')
      const res = await send({ method: 'POST', url: '/books/import', payload: [emma], headers: { 'idempotency-key': 'shared' } })
      assert.equal(res.statusCode, 201, res.body)
      assert.equal(await count(), 2)
    })

    test('while the first request with a key runs, another with it is 409', async (t) => {
      const { held, entered, release } = heldStore(await engine.open(), 'before')
      const { create, count } = await service(t, held)
      const first = create('slow')
      await entered
      const second = await create('slow')
      assert.equal(second.statusCode, 409)
      assert.deepEqual(second.json(), { status: 409, message: 'Request with this idempotency key is in progress', data: null })
      release()
      assert.equal((await first).statusCode, 201)
      assert.equal((await create('slow')).statusCode, 201)
      assert.equal(await count(), 1)
    })

    test('an answer that is not a success keeps nothing: a retry with the key runs afresh', async (t) => {
      const { send, count } = await service(t)
      const headers = { 'idempotency-key': 'retry-me', 'content-type': 'application/json' }
      const bad = await send({ method: 'POST', url: '/books/import', payload: [{ ...dune, year: 'x' }], headers })
      assert.equal(bad.statusCode, 400)
      const good = await send({ method: 'POST', url: '/books/import', payload: [dune, emma], headers })
      assert.equal(good.statusCode, 201, good.body)
      assert.equal(await count(), 2)
    })

    test('POST /books/import: a retried import stores its books once, and answers the same ids', async (t) => {
      const { send, count } = await service(t)
      const csv = 'title,author,year\nDune,Frank Herbert,1965\nEmma,Jane Austen,1815\n'
      const options = {
        method: 'POST',
        url: '/books/import',
        payload: csv,
        headers: { 'content-type': 'text/csv', 'idempotency-key': 'import-1' },
      } as const
      const first = await send(options)
      assert.equal(first.statusCode, 201)
      const again = await send(options)
      assert.equal(again.statusCode, 201)
      assert.equal(again.body, first.body)
      assert.equal(await count(), 2)
      const changed = await send({ ...options, payload: csv.replace('1815', '1816') })
      assert.equal(changed.statusCode, 422)
      assert.equal(await count(), 2)
    })

    test('POST /books/import: the same key and body with other options is 422; the same options in another order answer again', async (t) => {
      const { send, count } = await service(t)
      const csv = 'title,author,year\nDune,Frank Herbert,1965\nEmma,Jane Austen,1815\nEmma,Jane Austen,1815\nBad,Someone,x\n'
      const headers = { 'content-type': 'text/csv', 'idempotency-key': 'import-options' }
      const importing = (query: string) => send({ method: 'POST', url: `/books/import?${query}`, payload: csv, headers })
      const first = await importing('invalid=skip&duplicates=skip')
      assert.equal(first.statusCode, 201, first.body)
      assert.equal(first.json().data.imported, 2)
      const again = await importing('duplicates=skip&invalid=skip')
      assert.equal(again.statusCode, 201)
      assert.equal(again.headers['idempotent-replayed'], 'true')
      // The same bytes, not only the same JSON: the members of each error in the same order.
      assert.equal(again.body, first.body)
      for (const query of [
        'invalid=skip',
        'invalid=skip&duplicates=skip&dry_run=false',
        'invalid=skip&duplicates=skip&columns=title:title',
        '',
      ]) {
        const other = await importing(query)
        assert.equal(other.statusCode, 422, query)
        assert.deepEqual(other.json(), { status: 422, message: 'Idempotency key reused with a different request', data: null })
      }
      assert.equal(await count(), 2)
    })

    test('an invalid key is 400 Invalid input, and stores nothing', async (t) => {
      const { app, create, count } = await service(t)
      for (const key of ['', 'x'.repeat(256), 'with space', 'caf\u00e9', 'tab\there']) {
        const res = await create(key)
        assert.equal(res.statusCode, 400, JSON.stringify(key))
        assert.equal(res.json().message, 'Invalid input')
      }
      assert.equal((await create('x'.repeat(255))).statusCode, 201)
      assert.equal((await create('!~"#$%&()*+,-./:;<=>?@[\\]^_`{|}')).statusCode, 201)
      assert.equal(await count(), 2)
      const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json()
      const parameters = document.paths['/book'].post.parameters as { name: string; in: string }[]
      assert.ok(
        parameters.some((p) => p.name === 'idempotency-key' && p.in === 'header'),
        'OpenAPI documents the header',
      )
    })

    test('a client cut off after the server committed retries, and finds exactly one book', async (t) => {
      const { held, entered, release } = heldStore(await engine.open(), 'after')
      const { app, token, count, create } = await service(t, held)
      const port = await listenOnLoopback(app)
      const body = JSON.stringify(dune)
      const socket = connect(port, '127.0.0.1')
      socket.write(
        `POST /book HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nContent-Type: application/json\r\n` +
          `Idempotency-Key: cut-1\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      )
      await entered
      socket.destroy()
      release()
      const retry = await create('cut-1')
      assert.equal(retry.statusCode, 201)
      assert.equal(retry.headers['idempotent-replayed'], 'true')
      assert.equal(await count(), 1)
      assert.equal(retry.json().data.title, dune.title)
    })
  })

  describe(`Idempotency-Key across two processes on one ${engine.name} store`, { skip: engine.skip }, () => {
    const cleanup: (() => Promise<unknown>)[] = []
    after(async () => {
      for (const step of cleanup.reverse()) await step()
    })

    test('a retry that reaches the other process answers the first answer; another body is 422', async () => {
      const database = await engine.freshDatabase()
      cleanup.push(() => database.drop())
      const env = serviceEnv(database.dbUrl)
      const first = await startService(env)
      cleanup.push(() => first.stop())
      const second = await startService(env)
      cleanup.push(() => second.stop())
      const token = await login(first)
      const headers = { 'idempotency-key': 'two-processes' }
      const created = await call(first, 'POST', '/book', { token, body: dune, headers })
      assert.equal(created.status, 201)
      const retried = await call(second, 'POST', '/book', { token, body: dune, headers })
      assert.equal(retried.status, 201)
      assert.deepEqual(retried.body, created.body)
      assert.equal(retried.headers.get('location'), created.headers.get('location'))
      const other = await call(second, 'POST', '/book', { token, body: emma, headers })
      assert.equal(other.status, 422)
      const list = await call(second, 'GET', '/books', { token })
      assert.equal(list.body.data.length, 1)
    })
  })
}

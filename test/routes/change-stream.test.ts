import assert from 'node:assert/strict'
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { describe, it, type TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { createSigner } from 'fast-jwt'
import type { InjectOptions } from 'fastify'
import type { AppParts } from '../../src/app.ts'
import { DEFAULT_LIMITS, type Config } from '../../src/config.ts'
import { drain, Lifecycle } from '../../src/lifecycle.ts'
import {
  assertEnvelope,
  buildTestApp,
  dune,
  issueToken,
  listenOnLoopback,
  storeEngines,
  TEST_SECRET,
  TEST_USERNAME,
  withToken,
} from '../helpers.ts'
import { openStream, type OpenStream } from '../support/event-streams.ts'
import { droppedWhenSuiteEnds } from '../support/temporary.ts'

const solaris = { title: 'Solaris', author: 'Stanisław Lem', year: 1961 }

async function serve(t: TestContext, overrides: Partial<Config> = {}, parts: AppParts = {}) {
  const app = await buildTestApp(overrides, parts)
  t.after(() => app.close())
  const port = await listenOnLoopback(app)
  const token = await issueToken(app)
  const call = (options: InjectOptions) => app.inject(withToken(token, options))
  const stream = (path = '/books/changes', headers: Record<string, string> = {}) =>
    openStream(port, path, { authorization: token, ...headers })
  return { app, port, token, call, stream }
}

/** Closes `stream` when the test ends, whatever became of it. */
function closing(t: TestContext, stream: OpenStream): OpenStream {
  t.after(() => stream.close())
  return stream
}

const isChange = (item: { event?: string }) => item.event === 'change'

for (const engine of storeEngines) {
  describe(`GET /books/changes as Server-Sent Events (${engine.name})`, { skip: engine.skip }, () => {
    it('streams every change after since, then each one as it commits: its seq as the id, the change as the data', async (t) => {
      const { call, stream } = await serve(t, {}, { store: await engine.open() })
      const { id } = (await call({ method: 'POST', url: '/book', payload: dune })).json().data
      await call({ method: 'PUT', url: `/book/${id}`, payload: { year: 1966 } })
      const events = closing(t, await stream())
      assert.equal(events.status, 200)
      assert.equal(events.headers['content-type'], 'text/event-stream')
      assert.equal(events.headers['cache-control'], 'no-store')
      assert.equal(events.headers['x-content-type-options'], 'nosniff')
      assert.ok(events.headers['x-request-id'])

      await events.next((item) => isChange(item) && item.id !== undefined, 10_000, 1)
      await call({ method: 'POST', url: '/book', payload: solaris })
      await call({ method: 'DELETE', url: `/book/${id}` })
      const logged = (await call({ method: 'GET', url: '/books/changes' })).json().data as { seq: number }[]
      await events.next((item) => item.id === String(logged.at(-1)!.seq))
      assert.deepEqual(events.changes(), logged)
      assert.deepEqual(
        events.received.filter(isChange).map((item) => item.id),
        logged.map((change) => String(change.seq)),
      )
      assert.deepEqual(
        events.changes().map((change) => change.kind),
        ['created', 'updated', 'created', 'deleted'],
      )
    })

    it('resumes after Last-Event-ID, which wins over since; since=latest starts at the newest change', async (t) => {
      const { call, stream } = await serve(t, {}, { store: await engine.open() })
      for (let year = 1; year <= 5; year++) await call({ method: 'POST', url: '/book', payload: { ...dune, year } })
      const logged = (await call({ method: 'GET', url: '/books/changes' })).json().data as { seq: number }[]
      const resumed = closing(t, await stream(`/books/changes?since=${logged[0]!.seq}`, { 'last-event-id': String(logged[2]!.seq) }))
      await resumed.next((item) => item.id === String(logged[4]!.seq))
      const sinced = closing(t, await stream(`/books/changes?since=${logged[3]!.seq}`))
      await sinced.next((item) => item.id === String(logged[4]!.seq))
      const latest = closing(t, await stream('/books/changes?since=latest'))
      await latest.next((item) => item.comment !== undefined)
      await call({ method: 'PUT', url: `/book/${logged[0]!.seq}`, payload: { year: 1 } })
      const newest = (await call({ method: 'GET', url: '/books/changes?since=latest' })).headers.link as string
      const updated = Number(/since=(\d+)/.exec(newest)![1])
      for (const events of [resumed, sinced, latest]) await events.next((item) => item.id === String(updated))
      assert.deepEqual(
        resumed.changes().map((change) => change.seq),
        [logged[3]!.seq, logged[4]!.seq, updated],
      )
      assert.deepEqual(
        sinced.changes().map((change) => change.seq),
        [logged[4]!.seq, updated],
      )
      assert.deepEqual(
        latest.changes().map((change) => change.seq),
        [updated],
      )
    })
  })
}

describe('GET /books/changes as Server-Sent Events: before the stream starts, the envelope', () => {
  it('401 without a token, 400 for a since or limit out of bounds or a Last-Event-ID that is not a seq', async (t) => {
    const { port, stream } = await serve(t)
    const refused = await openStream(port, '/books/changes')
    assert.equal(refused.status, 401)
    await refused.over
    assert.equal(refused.headers['content-type'], 'application/json; charset=utf-8')
    assert.deepEqual(JSON.parse(refused.text()), { status: 401, message: 'Authorization token required', data: null })
    for (const [path, lastEventId] of [
      ['/books/changes?since=x', undefined],
      ['/books/changes?limit=0', undefined],
      ['/books/changes', 'abc'],
      ['/books/changes', '-1'],
      ['/books/changes', '1.5'],
      ['/books/changes', '01'],
      ['/books/changes', ''],
      ['/books/changes', 'latest'],
      ['/books/changes', '9007199254740992'],
    ] as const) {
      const res = await stream(path, lastEventId === undefined ? {} : { 'last-event-id': lastEventId })
      await res.over
      assert.equal(res.status, 400, `${path} ${lastEventId}`)
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8')
      assert.deepEqual(JSON.parse(res.text()), { status: 400, message: 'Invalid input', data: null })
    }
  })

  it('answers HEAD with the headers of a stream, and opens none', async (t) => {
    const { app, port, token } = await serve(t)
    const res = await fetch(`http://127.0.0.1:${port}/books/changes`, {
      method: 'HEAD',
      headers: { authorization: token, accept: 'text/event-stream' },
    })
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), 'text/event-stream')
    assert.equal(app.changeFeed.size, 0)
  })

  it('lets a reader follow the changes, as an admin does', async (t) => {
    const { call, port } = await serve(t)
    await call({ method: 'POST', url: '/users', payload: { username: 'reading', password: 'a quiet harbour at dawn', role: 'reader' } })
    const token = (
      await call({ method: 'POST', url: '/token', payload: { username: 'reading', password: 'a quiet harbour at dawn' } })
    ).json().data.token as string
    const events = closing(t, await openStream(port, '/books/changes', { authorization: token }))
    assert.equal(events.status, 200)
    await call({ method: 'POST', url: '/book', payload: dune })
    assert.equal((await events.next(isChange)).event, 'change')
  })
})

describe('GET /books/changes as Server-Sent Events: how long a stream lasts', () => {
  it('says it is alive with a comment line at least every keep-alive interval', async (t) => {
    const { stream } = await serve(t, {}, { feed: { keepAliveMs: 50 } })
    const events = closing(t, await stream())
    await events.next((item) => item.comment === '', 5000, 3)
  })

  it('ends when its token expires, after a comment that says so', async (t) => {
    const { port } = await serve(t)
    const sign = createSigner({ key: TEST_SECRET, expiresIn: 1500 })
    const token = sign({ sub: TEST_USERNAME, role: 'admin' })
    const expiresAt = (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { exp: number }).exp * 1000
    const events = closing(t, await openStream(port, '/books/changes', { authorization: token }))
    assert.equal(events.status, 200)
    assert.equal(await events.over, 'end')
    assert.ok(Date.now() >= expiresAt, 'not before the token expired')
    assert.match(events.received.at(-1)!.comment!, /expired/)
  })

  it("ends when its key is revoked, and when its user is deleted; another's stream lives on", async (t) => {
    const { call, port, stream } = await serve(t)
    const password = 'a quiet harbour at dawn'
    await call({ method: 'POST', url: '/users', payload: { username: 'ada', password, role: 'reader' } })
    const adaToken = (await call({ method: 'POST', url: '/token', payload: { username: 'ada', password } })).json().data.token as string
    const key = (await call({ method: 'POST', url: '/keys', payload: { name: 'mirror', role: 'reader' } })).json().data
    const byKey = closing(t, await openStream(port, '/books/changes', { authorization: key.key }))
    const byAda = closing(t, await openStream(port, '/books/changes', { authorization: `Bearer ${adaToken}` }))
    const byAdmin = closing(t, await stream())
    for (const events of [byKey, byAda, byAdmin]) assert.equal(events.status, 200)

    assertEnvelope(await call({ method: 'DELETE', url: `/key/${key.id}` }), 200, 'Key revoked successfully', null)
    assert.equal(await byKey.over, 'end')
    assert.match(byKey.received.at(-1)!.comment!, /no longer accepted/)
    assertEnvelope(await call({ method: 'DELETE', url: '/user/ada' }), 200, 'User deleted successfully', null)
    assert.equal(await byAda.over, 'end')

    await call({ method: 'POST', url: '/book', payload: dune })
    await byAdmin.next(isChange)
  })

  it('ends every stream with a retry: line at once when the instance drains, without holding up the shutdown', async (t) => {
    const lifecycle = new Lifecycle({ shutdownDelayMs: 0, shutdownGraceMs: 60_000 })
    const { app, stream } = await serve(t, {}, { lifecycle })
    const streams = await Promise.all([stream(), stream('/books/changes?since=latest')])
    for (const events of streams) closing(t, events)
    await Promise.all(streams.map((events) => events.next((item) => item.comment !== undefined)))
    const started = performance.now()
    lifecycle.requestStop('SIGTERM')
    const code = await drain(app, lifecycle)
    assert.equal(code, 0, 'every connection finished by itself: none was cut')
    assert.ok(performance.now() - started < 30_000, 'well within the grace period')
    for (const events of streams) {
      assert.equal(await events.over, 'end')
      assert.deepEqual(events.received.at(-1), { retry: '1000' })
    }
  })

  it('answers a stream asked for while draining with the retry: line alone', async (t) => {
    const lifecycle = new Lifecycle({ shutdownDelayMs: 60_000, shutdownGraceMs: 60_000 })
    const { stream } = await serve(t, {}, { lifecycle })
    lifecycle.requestStop('SIGTERM')
    const events = await stream()
    assert.equal(events.status, 200)
    assert.equal(await events.over, 'end')
    assert.deepEqual(events.received, [{ retry: '1000' }])
  })
})

describe('GET /books/changes as Server-Sent Events: limits', () => {
  it('holds at most MAX_STREAMS at once: beyond, 503 Service unavailable with Retry-After, until one ends', async (t) => {
    const { stream } = await serve(t, { maxStreams: 2 })
    const first = closing(t, await stream())
    closing(t, await stream())
    const refused = await stream()
    await refused.over
    assert.equal(refused.status, 503)
    assert.equal(refused.headers['content-type'], 'application/json; charset=utf-8')
    assert.ok(Number(refused.headers['retry-after']) > 0)
    assert.deepEqual(JSON.parse(refused.text()), { status: 503, message: 'Service unavailable', data: null })
    first.close()
    // The server notices the client left once its socket closes.
    for (let tries = 0; ; tries++) {
      const again = await stream()
      if (again.status === 200) {
        again.close()
        break
      }
      assert.ok(tries < 100, 'a stream ended, yet no new one is let in')
      await sleep(20)
    }
  })

  it('counts streams in the connections one address may hold', async (t) => {
    const { stream } = await serve(t, { limits: { ...DEFAULT_LIMITS, maxConnectionsPerAddress: 2 } })
    const first = closing(t, await stream())
    closing(t, await stream())
    await assert.rejects(stream(), /socket hang up|ECONNRESET/)
    first.close()
    for (let tries = 0; ; tries++) {
      const again = await stream().catch(() => undefined)
      if (again?.status === 200) {
        again.close()
        break
      }
      assert.ok(tries < 100, 'a stream ended, yet the address may not open another')
      await sleep(20)
    }
  })

  it(
    'drops a client that stops reading before 1 MiB waits for it, while one that reads gets every change',
    // Slow on a busy machine: it writes several MB of changes and reads them back in this process.
    { timeout: 300_000 },
    async (t) => {
      // A connection whose client takes nothing for 5 s is cut; long enough that the client that
      // reads, in this busy process, is never taken for one that stopped.
      const limits = { ...DEFAULT_LIMITS, requestTimeoutMs: 5000, headersTimeoutMs: 2000 }
      const { app, call, port, token, stream } = await serve(t, { limits })
      const reading = closing(t, await stream())
      // The server's side of the client that will stop reading: what waits in it for the client.
      let mostWaiting = 0
      const watched = new Promise<Socket>((resolve) => app.server.once('connection', resolve))
      const stalled = connect({ port, host: '127.0.0.1' })
      t.after(() => stalled.destroy())
      stalled.on('error', () => {})
      const cut = new Promise<void>((resolve) => stalled.once('close', () => resolve()))
      await new Promise<void>((resolve) => {
        stalled.once('data', () => {
          stalled.pause()
          resolve()
        })
        stalled.write(`GET /books/changes HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAuthorization: ${token}\r\n\r\n`)
      })
      const serverSide = await watched
      const watch = setInterval(() => (mostWaiting = Math.max(mostWaiting, app.changeFeed.waiting().most)), 5)
      t.after(() => clearInterval(watch))
      assert.equal(app.changeFeed.size, 2)
      // Changes of about 1 KiB each, 5,000 an import, until the kernel's buffers are full and bytes wait in the process.
      const book = { title: 'T'.repeat(500), author: 'A'.repeat(400) }
      let imported = 0
      while (serverSide.writableLength === 0 && !serverSide.destroyed) {
        assert.ok(imported < 50_000, 'the buffers of a connection took 50 MB')
        const res = await call({
          method: 'POST',
          url: '/books/import',
          headers: { 'content-type': 'application/json' },
          payload: Array.from({ length: 5000 }, (_, i) => ({ ...book, year: i % 2000 })),
        })
        assert.equal(res.statusCode, 201)
        imported += 5000
        await sleep(200)
      }
      // Cut by the server: the client sees it once it reads again.
      await once(serverSide, 'close')
      stalled.resume()
      await cut
      assert.equal(app.changeFeed.size, 1)
      assert.ok(mostWaiting < 1024 * 1024, `${mostWaiting} bytes waited for the client that stopped reading`)
      const newest = Number(
        /since=(\d+)/.exec((await call({ method: 'GET', url: '/books/changes?since=latest' })).headers.link as string)![1],
      )
      await reading.next((item) => item.id === String(newest), 120_000)
      assert.equal(reading.changes().length, imported)
    },
  )
})

// Each in a database of its own, as the service runs: an SQLite file that two instances share, or a server.
for (const engine of storeEngines) {
  describe(`change streams of two instances on one store (${engine.name}, a database of its own)`, { skip: engine.skip }, () => {
    const dropAtEnd = droppedWhenSuiteEnds()
    it('carry every change made on the other instance, each once, in order', async (t) => {
      const database = await engine.freshDatabase()
      dropAtEnd(database)
      const writer = await serve(t, { dbUrl: database.dbUrl })
      const follower = await serve(t, { dbUrl: database.dbUrl })
      const events = closing(t, await follower.stream())
      await events.next((item) => item.comment !== undefined)
      // Writes that commit together and apart, of every kind.
      const ids = (
        await Promise.all(
          Array.from({ length: 20 }, (_, year) => writer.call({ method: 'POST', url: '/book', payload: { ...dune, year } })),
        )
      ).map((res) => res.json().data.id as number)
      await Promise.all(
        ids.slice(0, 10).map((id) => writer.call({ method: 'PUT', url: `/book/${id}`, payload: { title: `Changed ${id}` } })),
      )
      for (const id of ids.slice(10, 15)) await writer.call({ method: 'DELETE', url: `/book/${id}` })
      await writer.call({ method: 'POST', url: `/book/${ids[10]}/restore` })
      const logged = (await follower.call({ method: 'GET', url: '/books/changes?limit=1000' })).json().data as { seq: number }[]
      assert.equal(logged.length, 36)
      await events.next((item) => item.id === String(logged.at(-1)!.seq), 10_000)
      assert.deepEqual(events.changes(), logged)
    })
  })
}

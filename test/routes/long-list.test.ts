import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import type { Writable } from 'node:stream'
import { test, type TestContext } from 'node:test'
import { readPages, type PageStep } from '../../src/store/pages.ts'
import { readEnded, type BookReader, type JsonPage, type ReadOptions } from '../../src/store/store.ts'
import { SqliteStore } from '../../src/store/sqlite/store.ts'
import { buildTestApp, issueToken, listenOnLoopback, storeWith } from '../helpers.ts'
import { logCollector } from '../support/log-collector.ts'

const PAGES = 40
const PAGE = 1000
const HEALTHZ = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'

/** Resolves with the next complete answer of /healthz on a kept-alive socket. */
function nextAnswer(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    let text = ''
    const onData = (chunk: Buffer) => {
      text += chunk.toString()
      if (text.includes('"message":"OK"')) {
        socket.off('data', onData)
        resolve()
      }
    }
    socket.on('data', onData)
  })
}

/** The service on an in-memory store that reads books through `reader`: its port and a token. */
async function serveWith(t: TestContext, reader: BookReader, logStream?: Writable) {
  const real = new SqliteStore({ path: ':memory:' })
  const store = storeWith(real, { reader })
  const app = await buildTestApp(logStream ? { logLevel: 'info' } : {}, { store, ...(logStream && { logStream }) })
  t.after(() => app.close())
  return { port: await listenOnLoopback(app), token: await issueToken(app) }
}

test('other requests are answered between the pages of a long unpaged GET /books', async (t) => {
  let pagesRead = 0
  let onFirstPage = () => {}
  // A reader whose whole list runs to 40 pages of 1000 books, each arriving as the readers' threads send them.
  const page = (): PageStep<JsonPage> => {
    pagesRead++
    if (pagesRead === 1) onFirstPage()
    if (pagesRead > PAGES) return { page: { json: '[]', size: 0, last: undefined }, done: true }
    const after = (pagesRead - 1) * PAGE
    const books = Array.from({ length: PAGE }, (_, i) => ({ id: after + i + 1, title: 'T', author: 'A', year: 2000 }))
    return { page: { json: JSON.stringify(books), size: PAGE, last: [after + PAGE] }, done: false }
  }
  const reader = {
    pages: async () =>
      readPages(
        { total: undefined, changeSeq: 0 },
        page(),
        () => new Promise((resolve) => setImmediate(() => resolve(page()))),
        () => {},
      ),
  } as unknown as BookReader
  const { port, token } = await serveWith(t, reader)

  const probe = connect({ port, host: '127.0.0.1' })
  t.after(() => probe.destroy())
  const ready = nextAnswer(probe)
  probe.write(HEALTHZ)
  await ready

  // As soon as the list has read its first page, ask for /healthz on the open connection.
  let pagesWhenAnswered = -1
  onFirstPage = () => {
    void nextAnswer(probe).then(() => (pagesWhenAnswered = pagesRead))
    probe.write(HEALTHZ)
  }
  const list = await fetch(`http://127.0.0.1:${port}/books`, { headers: { authorization: token } })
  const body = (await list.json()) as { data: unknown[] }
  assert.equal(body.data.length, PAGES * PAGE)
  assert.ok(pagesWhenAnswered > 0, '/healthz was answered while the list streamed')
  assert.ok(pagesWhenAnswered <= 4, `/healthz waited for ${pagesWhenAnswered} of ${PAGES} pages`)
})

for (const path of ['/books', '/books/export']) {
  test(`GET ${path} ends its read when the client has gone before the first byte was sent`, { timeout: 10_000 }, async (t) => {
    let asked = () => {}
    let answer = () => {}
    let ended = () => {}
    const askedFor = new Promise<void>((resolve) => (asked = resolve))
    const readEnded = new Promise<void>((resolve) => (ended = resolve))
    const reader = {
      pages: async () => {
        asked()
        // The read answers only once its client has gone.
        await new Promise<void>((resolve) => (answer = resolve))
        const books = [{ id: 1, title: 'T', author: 'A', year: 2000 }]
        return readPages(
          { total: undefined, changeSeq: 0 },
          { page: path === '/books' ? { json: JSON.stringify(books), size: 1, last: [1] } : books.map((book) => ({ book })), done: false },
          () => new Promise(() => {}),
          ended,
        )
      },
    } as unknown as BookReader
    const { port, token } = await serveWith(t, reader)

    const client = connect({ port, host: '127.0.0.1' })
    client.on('error', () => {})
    client.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\n\r\n`)
    await askedFor
    client.destroy()
    await new Promise((resolve) => setTimeout(resolve, 100))
    answer()
    // Without an end, the read (and on PostgreSQL its connection) would be held for ever.
    await readEnded
  })
}

for (const path of ['/books?limit=10', '/books', '/books/export']) {
  test(`GET ${path} tells its read when the client has gone before it was answered`, { timeout: 10_000 }, async (t) => {
    let asked = () => {}
    let told = () => {}
    const askedFor = new Promise<void>((resolve) => (asked = resolve))
    const toldOfIt = new Promise<void>((resolve) => (told = resolve))
    const reader = {
      pages: (_query: unknown, { signal }: ReadOptions) => {
        asked()
        // The read answers only when it is told its client has gone, and then fails as a read does.
        return new Promise((_resolve, reject) =>
          signal?.addEventListener('abort', () => {
            told()
            reject(readEnded())
          }),
        )
      },
    } as unknown as BookReader
    const log = logCollector()
    const { port, token } = await serveWith(t, reader, log.stream)

    const client = connect({ port, host: '127.0.0.1' })
    client.on('error', () => {})
    client.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\n\r\n`)
    await askedFor
    client.destroy()
    await toldOfIt
    // The read's failure reaches no one: it is told, and not logged as an error.
    const ended = () => log.lines.filter((line) => line.msg === 'request failed' || line.msg === 'request ended: its client went')
    while (ended().length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
    assert.deepEqual(
      ended().map((line) => [line.level, line.msg]),
      [[30, 'request ended: its client went']],
    )
  })
}

import assert from 'node:assert/strict'
import { Agent, request } from 'node:http'
import { describe, it } from 'node:test'
import { storeEngines } from '../helpers.ts'
import { requireExecutable, skipWithout } from '../support/executables.ts'
import { HAPROXY, startHaproxy, type Haproxy } from '../support/haproxy.ts'
import { resumingStream, type ResumingStream } from '../support/resuming-stream.ts'
import { seededRandom, testSeed } from '../support/seed.ts'
import { call, login, serviceEnv, startService, type ListeningService } from '../support/service.ts'
import { droppedWhenSuiteEnds, temporaryDirectory } from '../support/temporary.ts'

const postgres = storeEngines.find((engine) => engine.name === 'postgres')!
const CLIENTS = 8
/** Clients that follow the change feed through the proxy all along, as browsers' EventSource would. */
const STREAMS = 50
/** How long the streams may take to receive the last change once the writes are over. */
const CATCH_UP_MS = 30_000
/** Answers to wait for between steps, so that every step happens under load. */
const ANSWERS_PER_STEP = 300

interface Book {
  title: string
  author: string
  year: number
}

/** A change as the log gives it, whose book is the stored book as the change left it. */
interface Change {
  seq: number
  kind: string
  book: { id: number } & Book
}

/** A change's kind and book, in one order whatever the order of the members it came with. */
const writeKey = (kind: string, { id, title, author, year }: { id: number } & Book) => JSON.stringify([kind, id, title, author, year])

/** Every change after `since`, as `GET /books/changes` pages them. */
async function changesAfter(service: ListeningService, token: string, since: number): Promise<Change[]> {
  const changes: Change[] = []
  for (;;) {
    const page = await call(service, 'GET', `/books/changes?since=${changes.at(-1)?.seq ?? since}&limit=1000`, { token })
    assert.equal(page.status, 200)
    if (page.body.data.length === 0) return changes
    changes.push(...(page.body.data as Change[]))
  }
}

/** What a stream's ids lack, repeat or give out of order against the log's. */
function differences(ids: number[], expected: number[]) {
  const wanted = new Set(expected)
  const seen = new Set<number>()
  const repeated: number[] = []
  for (const id of ids) {
    if (seen.has(id)) repeated.push(id)
    seen.add(id)
  }
  return {
    received: ids.length,
    missing: expected.filter((seq) => !seen.has(seq)).slice(0, 10),
    repeated: repeated.slice(0, 10),
    unknown: ids.filter((id) => !wanted.has(id)).slice(0, 10),
    outOfOrder: ids.some((id, i) => i > 0 && id <= ids[i - 1]!),
  }
}

/** A keep-alive client of the proxy: one connection of its own, reused from request to request. */
function client(haproxy: Haproxy, token: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const send = (method: string, path: string, body?: unknown) =>
    new Promise<{ status: number; body: { data: unknown } }>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body)
      request(
        {
          socketPath: haproxy.socketPath,
          agent,
          method,
          path,
          headers: { host: 'books', authorization: token, ...(payload && { 'content-type': 'application/json' }) },
        },
        (res) => {
          let text = ''
          res.setEncoding('utf8')
          res.on('data', (chunk: string) => (text += chunk))
          res.on('end', () => {
            try {
              resolve({ status: res.statusCode!, body: JSON.parse(text) })
            } catch {
              resolve({ status: res.statusCode!, body: { data: text } })
            }
          })
          res.on('error', reject)
        },
      )
        .on('error', reject)
        .end(payload)
    })
  return { send, close: () => agent.destroy() }
}

describe('rolling restart behind HAProxy', { skip: postgres.skip || skipWithout(HAPROXY, 'haproxy'), timeout: 180_000 }, () => {
  const dropAtEnd = droppedWhenSuiteEnds()
  it('restarts each of two instances in turn under read and write load: no request fails, no acknowledged write is lost, every change reaches each of 50 resuming streams once', async (t) => {
    requireExecutable(HAPROXY, 'haproxy')
    const random = seededRandom(testSeed(t))
    const database = await postgres.freshDatabase()
    dropAtEnd(database)
    const env = serviceEnv(database.dbUrl, {
      // The production delay, given outright because the tests do not run with NODE_ENV=production.
      SHUTDOWN_DELAY_MS: '2000',
      LOG_LEVEL: 'info',
      // Every client arrives from the proxy's address, as in production behind it: not capped.
      TRUST_PROXY: 'loopback',
      // What this test checks is the restarts. A commit waits for the disk, and PostgreSQL's own
      // statement timeout stops before it: on a machine whose disk other work keeps busy (a
      // checkpoint syncing thousands of files, as a whole test run leaves), a batch of writes was
      // seen to wait past the default 4 s and be answered 503 with nothing restarting. A new
      // connection, the replacement's first among them, waits for the same disk.
      DB_QUERY_TIMEOUT_MS: '15000',
      DB_CONNECT_TIMEOUT_MS: '15000',
    })
    const instances: Record<string, ListeningService> = {
      a: await startService(env),
      b: await startService(env),
    }
    t.after(() => Promise.all(Object.values(instances).map((instance) => instance.stop())))
    const ports = (service: ListeningService) => Number(new URL(service.url).port)
    const haproxy = await startHaproxy(temporaryDirectory('books-haproxy-'), { a: ports(instances.a!), b: ports(instances.b!) })
    t.after(() => haproxy.stop())
    const token = await login(instances.a!)

    // The streams start from the newest change before the writes, and follow the feed through the proxy.
    const latest = await call(instances.a!, 'GET', '/books/changes?since=latest', { token })
    const start = Number(/since=(\d+)/.exec(latest.headers.get('link')!)![1])
    const streamIds: number[][] = Array.from({ length: STREAMS }, () => [])
    /** The data of each change's event, as the first stream to receive it was given it; any other stream given other data, listed. */
    const eventData = new Map<number, string>()
    const otherData: string[] = []
    const streams: ResumingStream[] = streamIds.map((ids) =>
      resumingStream(
        { socketPath: haproxy.socketPath, path: `/books/changes?since=${start}`, headers: { host: 'books', authorization: token } },
        (event) => {
          if (event.type !== 'change') return
          const seq = Number(event.id)
          ids.push(seq)
          const first = eventData.get(seq)
          if (first === undefined) eventData.set(seq, event.data)
          else if (first !== event.data) otherData.push(`${seq}: ${event.data} after ${first}`)
        },
      ),
    )
    t.after(() => streams.forEach((stream) => stream.close()))
    await Promise.all(streams.map((stream) => stream.opened))

    const acknowledged = new Map<number, Book>()
    /** Each acknowledged write's change, as `writeKey` writes it. */
    const writes: string[] = []
    const failures: string[] = []
    let answered = 0
    let stopping = false
    // However the test ends: clients still writing after a failed step would keep the file running for good.
    t.after(() => (stopping = true))
    const waiters = new Set<{ count: number; resolve: () => void }>()
    /** Resolves once `more` further requests have been answered. */
    const answers = (more: number) =>
      new Promise<void>((resolve) => {
        waiters.add({ count: answered + more, resolve })
      })
    const counted = () => {
      answered++
      for (const waiter of waiters) {
        if (answered < waiter.count) continue
        waiters.delete(waiter)
        waiter.resolve()
      }
    }

    const run = async (n: number) => {
      const { send, close } = client(haproxy, token)
      const own: number[] = []
      for (let i = 0; !stopping; i++) {
        try {
          const action = own.length === 0 ? 0 : random(0, 3)
          if (action === 0) {
            const book = { title: `client ${n} book ${i}`, author: `Client ${n}`, year: random(-9999, 10_000) }
            const res = await send('POST', '/book', book)
            if (res.status !== 201) failures.push(`POST /book: ${res.status} ${JSON.stringify(res.body)}`)
            else {
              const { id } = res.body.data as { id: number }
              acknowledged.set(id, book)
              writes.push(writeKey('created', { id, ...book }))
              own.push(id)
            }
          } else if (action === 1) {
            const id = own[random(0, own.length)]!
            const book = { ...acknowledged.get(id)!, year: random(-9999, 10_000) }
            const res = await send('PUT', `/book/${id}`, { year: book.year })
            if (res.status !== 200) failures.push(`PUT /book/${id}: ${res.status} ${JSON.stringify(res.body)}`)
            else {
              acknowledged.set(id, book)
              writes.push(writeKey('updated', { id, ...book }))
            }
          } else {
            const id = own[random(0, own.length)]!
            const res = await send('GET', `/book/${id}`)
            if (res.status !== 200) failures.push(`GET /book/${id}: ${res.status} ${JSON.stringify(res.body)}`)
            else assert.deepEqual(res.body.data, { id, ...acknowledged.get(id) })
          }
        } catch (err) {
          // Recorded, and the client goes on, so that the load and the test both carry on to the end.
          failures.push(`client ${n}: ${(err as Error).message}`)
        }
        counted()
      }
      close()
    }
    const clients = Array.from({ length: CLIENTS }, (_, n) => run(n))

    await answers(ANSWERS_PER_STEP)
    for (const name of ['a', 'b']) {
      const old = instances[name]!
      old.child.kill('SIGTERM')
      assert.deepEqual(await old.exited, { code: 0, signal: null }, `instance ${name} did not drain cleanly`)
      await haproxy.waitFor(name, 'down')
      const replacement = await startService(env)
      instances[name] = replacement
      await haproxy.setServer(name, ports(replacement))
      await haproxy.waitFor(name, 'up')
      await answers(ANSWERS_PER_STEP)
    }
    stopping = true
    await Promise.all(clients)

    assert.deepEqual(failures, [])
    const stored = await call(instances.a!, 'GET', '/books', { token })
    const byId = new Map((stored.body.data as Array<{ id: number } & Book>).map(({ id, ...book }) => [id, book]))
    const lost = [...acknowledged].filter(([id, book]) => JSON.stringify(byId.get(id)) !== JSON.stringify(book))
    assert.deepEqual(lost, [])

    // The log holds one change for each acknowledged write, and no other.
    const log = await changesAfter(instances.a!, token, start)
    assert.deepEqual(log.map((change) => writeKey(change.kind, change.book)).sort(), writes.sort())

    // Every stream received exactly the log's changes after its start, in order, each once, with the log's data.
    const seqs = log.map((change) => change.seq)
    await Promise.all(streams.map((stream) => stream.reached(seqs.at(-1)!, CATCH_UP_MS)))
    streams.forEach((stream) => stream.close())
    const wrong = streamIds.flatMap((ids, n) =>
      JSON.stringify(ids) === JSON.stringify(seqs) ? [] : [{ stream: n, ...differences(ids, seqs) }],
    )
    assert.deepEqual(wrong, [])
    assert.deepEqual(otherData, [])
    for (const change of log) assert.deepEqual(JSON.parse(eventData.get(change.seq)!), change)
    // Each stream lived through at least one restart: it resumed, by `Last-Event-ID`, at least once.
    const connections = streams.map((stream) => stream.connections)
    assert.deepEqual(
      connections.filter((count) => count < 2),
      [],
    )
    const refusals = streams.flatMap((stream) => stream.refusals)
    assert.deepEqual(
      refusals.filter((refusal) => !refusal.startsWith('503 ')),
      [],
    )

    t.diagnostic(`${answered} requests answered, ${acknowledged.size} books written and read back, ${writes.length} writes acknowledged`)
    t.diagnostic(
      `${STREAMS} streams each received the ${log.length} changes once, in order, over ${connections.reduce((a, b) => a + b)} connections ` +
        `(${streams.reduce((sum, stream) => sum + stream.cuts, 0)} cut short, ${refusals.length} refused with 503)`,
    )
  })
})

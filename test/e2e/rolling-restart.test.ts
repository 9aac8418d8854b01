import assert from 'node:assert/strict'
import { Agent, request } from 'node:http'
import { describe, it } from 'node:test'
import { storeEngines } from '../helpers.ts'
import { requireExecutable, skipWithout } from '../support/executables.ts'
import { HAPROXY, startHaproxy, type Haproxy } from '../support/haproxy.ts'
import { seededRandom, testSeed } from '../support/seed.ts'
import { call, login, serviceEnv, startService, type ListeningService } from '../support/service.ts'
import { temporaryDirectory } from '../support/temporary.ts'

const postgres = storeEngines.find((engine) => engine.name === 'postgres')!
const CLIENTS = 8
/** Answers to wait for between steps, so that every step happens under load. */
const ANSWERS_PER_STEP = 300

interface Book {
  title: string
  author: string
  year: number
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
  it('restarts each of two instances in turn under read and write load: no request fails, no acknowledged write is lost', async (t) => {
    requireExecutable(HAPROXY, 'haproxy')
    const random = seededRandom(testSeed(t))
    const database = await postgres.freshDatabase()
    t.after(() => database.drop())
    // The production delay, given outright because the tests do not run with NODE_ENV=production.
    const env = serviceEnv(database.dbUrl, { SHUTDOWN_DELAY_MS: '2000', LOG_LEVEL: 'info' })
    const instances: Record<string, ListeningService> = {
      a: await startService(env),
      b: await startService(env),
    }
    t.after(() => Promise.all(Object.values(instances).map((instance) => instance.stop())))
    const ports = (service: ListeningService) => Number(new URL(service.url).port)
    const haproxy = await startHaproxy(temporaryDirectory('books-haproxy-'), { a: ports(instances.a!), b: ports(instances.b!) })
    t.after(() => haproxy.stop())
    const token = await login(instances.a!)

    const acknowledged = new Map<number, Book>()
    const failures: string[] = []
    let answered = 0
    let stopping = false
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
          if (own.length === 0 || random(0, 2) === 0) {
            const book = { title: `client ${n} book ${i}`, author: `Client ${n}`, year: random(-9999, 10_000) }
            const res = await send('POST', '/book', book)
            if (res.status !== 201) failures.push(`POST /book: ${res.status} ${JSON.stringify(res.body)}`)
            else {
              const { id } = res.body.data as { id: number }
              acknowledged.set(id, book)
              own.push(id)
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
    t.diagnostic(`${answered} requests answered, ${acknowledged.size} writes acknowledged and read back`)
  })
})

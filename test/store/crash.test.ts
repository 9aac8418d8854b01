import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { once } from 'node:events'
import { storeEngines } from '../helpers.ts'
import { seededRandom, testSeed } from '../support/seed.ts'
import { serviceEnv, login, startService, type ListeningService } from '../support/service.ts'
import { droppedWhenSuiteEnds } from '../support/temporary.ts'

const WORKERS = 4

interface BookState {
  title: string
  author: string
  year: number
}
type Known = BookState | 'deleted'

/** What the clients know of one book: its state as last answered, and a write whose answer never came. */
interface Tracked {
  acked: Known
  pending?: Known
}

interface Ledger {
  books: Map<number, Tracked>
  /** Titles of creates whose answer never came: such a book may or may not exist. */
  unansweredCreates: Set<string>
  answered: number
  /** Called after every answered write. */
  onAnswer(): void
}

async function call(service: ListeningService, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(new URL(path, service.url), {
    method,
    headers: { authorization: token, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as { data: ({ id: number } & BookState) | null } }
}

/** Creates, updates and deletes its own books until the service dies under it. */
async function writer(
  service: ListeningService,
  token: string,
  worker: number,
  ledger: Ledger,
  randomInt: (min: number, max: number) => number,
) {
  const own: number[] = []
  for (let n = 0; ; n++) {
    const action = own.length === 0 ? 0 : randomInt(0, 10)
    if (action < 4) {
      const book = { title: `w${worker}-${n}`, author: `worker ${worker}`, year: randomInt(-9999, 10_000) }
      ledger.unansweredCreates.add(book.title)
      const res = await call(service, token, 'POST', '/book', book).catch(() => undefined)
      if (res === undefined) return
      assert.equal(res.status, 201)
      ledger.unansweredCreates.delete(book.title)
      ledger.books.set(res.body.data!.id, { acked: book })
      own.push(res.body.data!.id)
    } else {
      const id = own[randomInt(0, own.length)]!
      const tracked = ledger.books.get(id)!
      const state = tracked.acked as BookState
      if (action < 8) {
        const next = { ...state, title: `${state.title}+`, year: (state.year + 1) % 10_000 }
        tracked.pending = next
        const res = await call(service, token, 'PUT', `/book/${id}`, { title: next.title, year: next.year }).catch(() => undefined)
        if (res === undefined) return
        assert.equal(res.status, 200)
        tracked.acked = next
      } else {
        tracked.pending = 'deleted'
        const res = await call(service, token, 'DELETE', `/book/${id}`).catch(() => undefined)
        if (res === undefined) return
        assert.equal(res.status, 200)
        tracked.acked = 'deleted'
        own.splice(own.indexOf(id), 1)
      }
      delete tracked.pending
    }
    ledger.answered++
    ledger.onAnswer()
  }
}

for (const engine of storeEngines) {
  describe(`crash with SIGKILL under write load (${engine.name})`, { skip: engine.skip }, () => {
    const dropAtEnd = droppedWhenSuiteEnds()
    it('keeps every write answered 2xx and every answered delete', async (t) => {
      const database = await engine.freshDatabase()
      dropAtEnd(database)
      const env = serviceEnv(database.dbUrl)

      const first = await startService(env)
      t.after(() => first.stop())
      const token = await login(first)
      const random = seededRandom(testSeed(t))
      // The kill lands after a random number of answered writes, not after a time that a busy machine stretches.
      const killAfter = random(20, 200)
      let reachedKillPoint!: () => void
      const killPoint = new Promise<void>((resolve) => (reachedKillPoint = resolve))
      const ledger: Ledger = {
        books: new Map(),
        unansweredCreates: new Set(),
        answered: 0,
        onAnswer: () => {
          if (ledger.answered === killAfter) reachedKillPoint()
        },
      }
      const writers = Array.from({ length: WORKERS }, (_, worker) => writer(first, token, worker, ledger, random))

      const writing = Promise.all(writers)
      await Promise.race([
        killPoint,
        writing.then(() => assert.fail(`the writers stopped after ${ledger.answered} writes, before the kill`)),
      ])
      const exited = once(first.child, 'exit')
      first.child.kill('SIGKILL')
      assert.deepEqual(await exited, [null, 'SIGKILL'])
      await writing

      const second = await startService(env)
      t.after(() => second.stop())
      const again = await login(second)
      for (const [id, { acked, pending }] of ledger.books) {
        const res = await call(second, again, 'GET', `/book/${id}`)
        const found: Known =
          res.status === 404 ? 'deleted' : { title: res.body.data!.title, author: res.body.data!.author, year: res.body.data!.year }
        const allowed = pending === undefined ? [acked] : [acked, pending]
        assert.ok(
          allowed.some((state) => JSON.stringify(state) === JSON.stringify(found)),
          `book ${id}: found ${JSON.stringify(found)}, answered ${JSON.stringify(acked)}, unanswered ${JSON.stringify(pending)}`,
        )
      }
      const listed = await call(second, again, 'GET', '/books')
      for (const book of listed.body.data as unknown as Array<{ id: number; title: string }>) {
        if (ledger.books.has(book.id)) continue
        assert.ok(ledger.unansweredCreates.has(book.title), `book ${book.id} (${book.title}) was never written`)
      }
      t.diagnostic(`${ledger.answered} writes answered before the kill, ${ledger.books.size} books checked`)
    })
  })
}

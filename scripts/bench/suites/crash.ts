/**
 * The change log against `kill -9`: 16 clients create, update and delete books while the service
 * is killed at a random moment, three times on each engine. After each kill the log is read
 * straight from the store and held against what the clients were told: exactly one change for
 * each acknowledged write, none for a write that was refused, at most one for a write whose
 * answer never came, and no change that no client asked for.
 */
import { randomInt } from 'node:crypto'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { postgresSection } from '../engines.ts'
import { createBooks, login, startService, type ServiceOptions } from '../service.ts'
import type { BenchContext, Suite } from '../suites.ts'

const CLIENTS = 16
const ROUNDS = 3

type Outcome = 'acknowledged' | 'refused' | 'unanswered'
interface Write {
  kind: 'created' | 'updated' | 'deleted'
  /** The title it sets (every create and update sets one of its own), or the id it deletes. */
  key: string
  outcome: Outcome
}
interface Change {
  book_id: number
  kind: string
  title: string | null
}

async function readLog(dbUrl: string): Promise<{ changes: Change[]; books: Map<number, string> }> {
  const changesSql = 'SELECT book_id, kind, title FROM book_changes ORDER BY seq'
  const booksSql = 'SELECT id, title FROM books'
  if (dbUrl.startsWith('sqlite:')) {
    const db = new DatabaseSync(dbUrl.slice('sqlite:'.length), { readOnly: true })
    try {
      const books = db.prepare(booksSql).all() as unknown as { id: number; title: string }[]
      return { changes: db.prepare(changesSql).all() as unknown as Change[], books: new Map(books.map((b) => [b.id, b.title])) }
    } finally {
      db.close()
    }
  }
  const client = new pg.Client({ connectionString: dbUrl })
  await client.connect()
  try {
    const changes = (await client.query<Change>(changesSql)).rows.map((c) => ({ ...c, book_id: Number(c.book_id) }))
    const books = (await client.query<{ id: string; title: string }>(booksSql)).rows
    return { changes, books: new Map(books.map((b) => [Number(b.id), b.title])) }
  } finally {
    await client.end()
  }
}

/** One round: load, a kill at a random moment, and the writes each client sent. */
async function round(options: ServiceOptions, context: BenchContext, serial: { next: number }): Promise<Write[]> {
  const service = await startService({ ...options, cpus: context.serverCpus })
  const token = await login(service)
  const live = await createBooks(service, token, 200)
  const writes: Write[] = []
  let killed = false
  const send = async (kind: Write['kind'], method: string, path: string, key: string, body?: unknown) => {
    const write: Write = { kind, key, outcome: 'unanswered' }
    writes.push(write)
    try {
      const response = await fetch(service.baseUrl + path, {
        method,
        headers: { authorization: token, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      const envelope = (await response.json()) as { data: { id: number } }
      write.outcome = response.ok ? 'acknowledged' : 'refused'
      return response.ok ? envelope.data : undefined
    } catch {
      return undefined
    }
  }
  const client = async () => {
    while (!killed) {
      const n = serial.next++
      const choice = randomInt(10)
      if (choice < 4 || live.length < 20) {
        const book = await send('created', 'POST', '/book', `w${n}`, { title: `w${n}`, author: 'Crash Test', year: 2000 })
        if (book) live.push(book.id)
      } else if (choice < 8) {
        const id = live[randomInt(live.length)]!
        await send('updated', 'PUT', `/book/${id}`, `w${n}`, { title: `w${n}` })
      } else {
        const id = live.splice(randomInt(live.length), 1)[0]!
        await send('deleted', 'DELETE', `/book/${id}`, String(id))
      }
    }
  }
  const clients = Array.from({ length: CLIENTS }, client)
  await sleep(1000 + randomInt(2000))
  process.kill(service.pid, 'SIGKILL')
  killed = true
  await Promise.all(clients)
  await service.stop()
  return writes
}

/** What does not hold between the writes and the log, one line each. */
function check(writes: Write[], changes: Change[], books: Map<number, string>): string[] {
  const problems: string[] = []
  const counts = new Map<string, number>()
  for (const c of changes) {
    const key = `${c.kind} ${c.kind === 'deleted' ? c.book_id : c.title}`
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  const sent = new Set<string>()
  for (const w of writes) {
    const key = `${w.kind} ${w.key}`
    sent.add(key)
    const found = counts.get(key) ?? 0
    const allowed = w.outcome === 'acknowledged' ? [1] : w.outcome === 'refused' ? [0] : [0, 1]
    if (!allowed.includes(found)) problems.push(`${w.outcome} ${key}: ${found} changes`)
  }
  for (const [key] of counts) {
    if (!sent.has(key) && !/^created The Book Number/.test(key)) problems.push(`a change nobody asked for: ${key}`)
  }
  // The log replayed book by book ends where the store is.
  const last = new Map<number, Change>()
  for (const c of changes) last.set(c.book_id, c)
  for (const [id, c] of last) {
    const stored = books.get(id)
    if (c.kind === 'deleted' ? stored !== undefined : stored !== c.title)
      problems.push(`book ${id}: the log ends in ${c.kind} "${c.title}", the store holds "${stored}"`)
  }
  for (const id of books.keys()) if (!last.has(id)) problems.push(`book ${id} has no change`)
  return problems
}

async function engine(title: string, options: ServiceOptions, context: BenchContext): Promise<string[]> {
  const rows: string[] = []
  const serial = { next: 0 }
  const writes: Write[] = []
  for (let i = 1; i <= ROUNDS; i++) {
    writes.push(...(await round(options, context, serial)))
    const { changes, books } = await readLog(options.dbUrl)
    const problems = check(writes, changes, books)
    const count = (outcome: Outcome) => writes.filter((w) => w.outcome === outcome).length
    context.log(`${title}, kill ${i}: ${problems.length} problems${problems.length ? `: ${problems.slice(0, 5).join('; ')}` : ''}`)
    rows.push(
      `| ${title} | ${i} | ${count('acknowledged')} | ${count('refused')} | ${count('unanswered')} | ${changes.length} | ${problems.length === 0 ? 'yes' : `no: ${problems.length}`} |`,
    )
  }
  return rows
}

const suite: Suite = {
  description: 'the change log after kill -9 under 16 writing clients: one change per acknowledged write',
  async run(context) {
    const rows = await engine('SQLite', { dbUrl: `sqlite:${join(context.work, 'crash.db')}` }, context)
    const postgres = await postgresSection(
      `bench_crash_${process.pid}`,
      async (options) => {
        rows.push(...(await engine('PostgreSQL', options, context)))
        return { title: 'PostgreSQL', measurements: [] }
      },
      context.log,
    )
    const table = [
      `Writes and the change log after each kill, counted since the store was made (${CLIENTS} clients)`,
      '',
      '| engine | kill | acknowledged | refused | unanswered | changes in the log | the log holds every acknowledged write once, and nothing else |',
      '|---|---:|---:|---:|---:|---:|---|',
      ...rows,
    ].join('\n')
    return { sections: [postgres], tables: [table] }
  },
}
export default suite

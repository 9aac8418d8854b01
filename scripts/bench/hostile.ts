/**
 * `npm run bench -- hostile [--books=N] [--samples=N] [--data=DIR] [--engines=sqlite,postgres]`: the
 * worst a client with a valid token can ask, at a million books (or N), on each engine.
 *
 * - Every search shape that reads many books: contained text of one or two letters under every
 *   sort, the commonest words, deep relevance pages, `count=true` on each; first page p50 and p95,
 *   and how many answered 503 (they ran out of time).
 * - The whole list, and the commonest word or letter unpaged and exported, by relevance and sorted
 *   by a key: time to the first byte and to the last.
 * - While one client (127.0.0.1) runs 8 worst-case searches at once, in a loop, another client
 *   (127.0.0.2) reads books by id, one at a time, asks for a cheap find every 200 ms, and asks
 *   `/readyz` every 100 ms: the p99 of its reads and of its finds, and whether readiness ever
 *   failed. The same while the first client sends those searches and leaves each 20 ms later,
 *   while dry runs of CSV bodies that cost the most to read are sent, while a 100,000-row import
 *   runs, and after it: on SQLite until its books are in the search indexes, on PostgreSQL for 10 s.
 * - On PostgreSQL, 16 concurrent searches from one address: the other client's reads still all
 *   answered.
 *
 * With `--data=DIR`, the SQLite file and the PostgreSQL database are kept there and reused by the
 * next run with the same number of books, so that a run need not seed a million books again.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { Agent } from 'node:http'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { BLOCK_BITS } from '../../src/store/sql/block-grams.ts'
import { copyCatalogue, generateBooks, seedPostgres, seedSqlite } from './catalogue.ts'
import { createDatabase, dropDatabase, serverSettings } from './postgres.ts'
import { login, startService, type Service } from './service.ts'
import { untilIndexed, untilSummarised } from './summaries.ts'
import { percentile, timed, type Answer } from './timed.ts'

/** The shapes that read the most books; each also with `count=true`. */
const SHAPES = [
  '/books?author=qx&sort=title&limit=20',
  '/books?title=qx&sort=-author&limit=20',
  '/books?author=zq&sort=-year&limit=20',
  '/books?title=x&sort=author&limit=20',
  '/books?author=q&sort=title&limit=20',
  '/books?title=e&sort=-year&limit=20',
  '/books?author=qx&limit=20',
  '/books?q=the&limit=20',
  '/books?q=a&limit=20',
  '/books?q=the+of&limit=20',
  '/books?q=the&sort=title&limit=20',
  '/books?q=of&sort=-year&limit=20',
]

interface Row {
  what: string
  p50: number
  p95: number
  unavailable: number
  samples: number
}

async function shapes(service: Service, token: string, samples: number, agent: Agent): Promise<Row[]> {
  const rows: Row[] = []
  for (const base of SHAPES) {
    for (const shape of [base, `${base}&count=true`]) {
      await timed(service, shape, token, agent)
      const times: number[] = []
      let unavailable = 0
      for (let i = 0; i < samples; i++) {
        const answer = await timed(service, shape, token, agent)
        if (answer.status === 503) unavailable++
        times.push(answer.ms)
      }
      rows.push({ what: shape.slice('/books?'.length), p50: percentile(times, 50), p95: percentile(times, 95), unavailable, samples })
    }
  }
  // Deep relevance pages: the fifth page of the commonest word, reached through the links.
  const times: number[] = []
  let unavailable = 0
  for (let i = 0; i < Math.max(3, samples / 4); i++) {
    let path: string | undefined = '/books?q=the&limit=20'
    for (let page = 1; page <= 5 && path !== undefined; page++) {
      const answer: Answer = await timed(service, path, token, agent)
      if (answer.status === 503) unavailable++
      if (page > 1) times.push(answer.ms)
      path = answer.link
    }
  }
  rows.push({
    what: 'q=the&limit=20, pages 2 to 5',
    p50: percentile(times, 50),
    p95: percentile(times, 95),
    unavailable,
    samples: times.length,
  })
  return rows
}

interface Stream {
  what: string
  firstByteMs: number
  ms: number
  /** The HTTP status, or `cut off` when the answer ended before its last byte. */
  status: number | 'cut off'
}

async function streams(service: Service, token: string, agent: Agent): Promise<Stream[]> {
  const result: Stream[] = []
  const paths = [
    '/books?q=the',
    '/books/export?format=csv&q=the',
    '/books',
    // Sorted by a key: each walks the index of its order, checking every book.
    '/books?q=the&sort=title',
    '/books?title=e&sort=-year',
    '/books/export?format=csv&q=the&sort=title',
  ]
  for (const path of paths) {
    const started = performance.now()
    try {
      const answer = await timed(service, path, token, agent)
      result.push({ what: path, firstByteMs: answer.firstByteMs, ms: answer.ms, status: answer.status })
    } catch {
      // An answer begun and then broken off is a finding of the run, not the end of it.
      result.push({ what: path, firstByteMs: Number.NaN, ms: performance.now() - started, status: 'cut off' })
    }
  }
  return result
}

interface Bystander {
  what: string
  readP99: number
  readMax: number
  reads: number
  failedReads: number
  findP99: number
  finds: number
  failedFinds: number
  readyFailures: number
  attackerAnswers: number
  attacker503: number
}

/** A find that costs a few milliseconds on either engine, which the bystander asks for beside its reads. */
const BYSTANDER_FIND = '/books?author=qx&limit=20'

/**
 * Another client's reads by id, its own cheap finds and readiness checks, from 127.0.0.2, while
 * `attack` runs; the attack runs until `until` settles.
 */
async function whileAttacked(
  service: Service,
  token: string,
  ids: number[],
  what: string,
  attack: (stop: () => boolean) => Promise<{ answers: number; unavailable: number }>,
): Promise<Bystander> {
  const agent = new Agent({ keepAlive: true, maxSockets: 3, localAddress: '127.0.0.2' })
  let stopped = false
  const reads: number[] = []
  let failedReads = 0
  const finds: number[] = []
  let failedFinds = 0
  let readyFailures = 0
  const reader = (async () => {
    for (let i = 0; !stopped; i++) {
      const answer = await timed(service, `/book/${ids[i % ids.length]}`, token, agent)
      reads.push(answer.ms)
      if (answer.status !== 200) failedReads++
    }
  })()
  const finder = (async () => {
    while (!stopped) {
      const answer = await timed(service, BYSTANDER_FIND, token, agent)
      finds.push(answer.ms)
      if (answer.status !== 200) failedFinds++
      await sleep(200)
    }
  })()
  const ready = (async () => {
    while (!stopped) {
      const answer = await timed(service, '/readyz', '', agent)
      if (answer.status !== 200) readyFailures++
      await sleep(100)
    }
  })()
  await sleep(500)
  const outcome = await attack(() => stopped)
  stopped = true
  await Promise.all([reader, finder, ready])
  agent.destroy()
  return {
    what,
    readP99: percentile(reads, 99),
    // Not Math.max(...reads): a quiet catch-up on a fast machine reads more times than a call takes arguments.
    readMax: percentile(reads, 100),
    reads: reads.length,
    failedReads,
    findP99: percentile(finds, 99),
    finds: finds.length,
    failedFinds,
    readyFailures,
    attackerAnswers: outcome.answers,
    attacker503: outcome.unavailable,
  }
}

/** `concurrency` loops of worst-case searches for `seconds`, from 127.0.0.1. */
function searches(service: Service, token: string, concurrency: number, seconds: number, paths: string[]) {
  return async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: concurrency })
    const until = performance.now() + seconds * 1000
    let answers = 0
    let unavailable = 0
    await Promise.all(
      Array.from({ length: concurrency }, async (_, n) => {
        for (let i = n; performance.now() < until; i++) {
          const answer = await timed(service, paths[i % paths.length]!, token, agent)
          answers++
          if (answer.status === 503) unavailable++
        }
      }),
    )
    agent.destroy()
    return { answers, unavailable }
  }
}

/**
 * Costly finds from 127.0.0.1, `concurrency` at a time for `seconds`, each connection closed 20 ms
 * after its request was sent: none is answered, and any that the service runs all the same costs
 * it the whole find.
 */
function abandonedFinds(service: Service, token: string, concurrency: number, seconds: number, paths: string[]) {
  return async () => {
    const { hostname, port } = new URL(service.baseUrl)
    const until = performance.now() + seconds * 1000
    await Promise.all(
      Array.from({ length: concurrency }, async (_, n) => {
        for (let i = n; performance.now() < until; i += concurrency) {
          const socket = connect({ host: hostname, port: Number(port) })
          socket.on('error', () => {})
          socket.write(`GET ${paths[i % paths.length]!} HTTP/1.1\r\nHost: bench\r\nAuthorization: ${token}\r\n\r\n`)
          await sleep(20)
          socket.destroy()
        }
      }),
    )
    return { answers: 0, unavailable: 0 }
  }
}

/** A CSV of `rows` generated books. */
function importBody(rows: number): Buffer {
  let csv = 'title,author,year\n'
  let n = 0
  for (const book of generateBooks(rows)) {
    csv += `"${book.title.replaceAll('"', '""')}","${book.author.replaceAll('"', '""')}",${book.year}\n`
    if (++n === rows) break
  }
  return Buffer.from(csv)
}

/**
 * Dry runs of bodies that cost the CSV reader the most per byte, one after another for `seconds`:
 * rows of delimiters alone (a field each), a quoted field and then a million delimiters, and a
 * quoted field never closed, each near the 32 MiB limit.
 */
function costlyImports(service: Service, token: string, seconds: number) {
  const M = 1024 * 1024
  const bodies = [
    `title,author,year\n${`${','.repeat(M - 1)}\n`.repeat(30)}`,
    `title,author,year\n"a",${','.repeat(30 * M)}`,
    `title,author,year\n"${'a'.repeat(30 * M)}`,
  ].map((body) => Buffer.from(body))
  return async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const until = performance.now() + seconds * 1000
    let answers = 0
    let unavailable = 0
    for (let i = 0; performance.now() < until; i++) {
      // The service answers once the reading stops, and closes the connection on the rest of the body.
      const answer = await timed(service, '/books/import?dry_run=true', token, agent, {
        method: 'POST',
        body: bodies[i % bodies.length]!,
        headers: { 'content-type': 'text/csv' },
      }).catch(() => undefined)
      answers++
      if (answer?.status === 503) unavailable++
    }
    agent.destroy()
    return { answers, unavailable }
  }
}

async function engine(
  name: string,
  dbUrl: string,
  options: { books: number; samples: number; log: (line: string) => void; import: Buffer },
) {
  const service = await startService({ dbUrl })
  try {
    await untilSummarised(dbUrl, options.log)
    const token = await login(service)
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    options.log(`${name}: search shapes`)
    const shapeRows = await shapes(service, token, options.samples, agent)
    options.log(`${name}: whole lists`)
    const streamRows = await streams(service, token, agent)
    agent.destroy()
    // A thousand books spread over the whole catalogue, whatever its size.
    const ids = Array.from({ length: 1000 }, (_, i) => 1 + Math.floor((i * options.books) / 1000))
    const worst = [
      '/books?author=qx&sort=title&limit=20',
      '/books?q=the&limit=20',
      '/books?title=qx&sort=-author&count=true&limit=20',
      '/books?q=a&count=true&limit=20',
    ]
    options.log(`${name}: a bystander while 8 worst-case searches run`)
    const bystanders = [
      await whileAttacked(service, token, ids, '8 concurrent worst-case searches, 20 s', searches(service, token, 8, 20, worst)),
    ]
    options.log(`${name}: a bystander while costly finds are sent and left`)
    bystanders.push(
      await whileAttacked(
        service,
        token,
        ids,
        '8 at a time of costly finds left after 20 ms, 10 s',
        abandonedFinds(service, token, 8, 10, worst),
      ),
    )
    options.log(`${name}: a bystander while CSV bodies that cost the most to read are checked`)
    bystanders.push(await whileAttacked(service, token, ids, 'dry runs of costly CSV bodies, 10 s', costlyImports(service, token, 10)))
    options.log(`${name}: a bystander while a 100,000-row import runs`)
    bystanders.push(
      await whileAttacked(service, token, ids, 'an import of 100,000 rows', async () => {
        const answer = await timed(service, '/books/import', token, new Agent(), {
          method: 'POST',
          body: options.import,
          headers: { 'content-type': 'text/csv' },
        })
        return { answers: 1, unavailable: answer.status === 503 ? 1 : 0 }
      }),
    )
    // On SQLite its books then enter the search indexes, a step at a time, on a thread of their own.
    const indexed = name === 'SQLite'
    options.log(`${name}: a bystander after that import${indexed ? ', until its books are in the search indexes' : ''}`)
    const started = performance.now()
    const after = await whileAttacked(service, token, ids, 'after that import', async () => {
      await (indexed ? untilIndexed(dbUrl) : sleep(10_000))
      return { answers: 0, unavailable: 0 }
    })
    const seconds = ((performance.now() - started) / 1000).toFixed(0)
    bystanders.push({
      ...after,
      what: indexed ? `the ${seconds} s until its books were in the search indexes` : 'the 10 s after that import',
    })
    if (name === 'PostgreSQL') {
      options.log(`${name}: a bystander while 16 searches from one address run`)
      bystanders.push(
        await whileAttacked(
          service,
          token,
          ids,
          '16 concurrent q=the from one address, 20 s',
          searches(service, token, 16, 20, ['/books?q=the&limit=20']),
        ),
      )
    }
    return { name, shapeRows, streamRows, bystanders }
  } finally {
    await service.stop()
  }
}

type Result = Awaited<ReturnType<typeof engine>>

function report(results: Result[], books: number): string {
  const lines = [
    `Worst-case requests at ${books} books; targets: first page p95 <= 250 ms, a bystander's read p99 <= 50 ms, readiness never failing`,
    '',
  ]
  lines.push('| engine | request | p50 | p95 | 503 |', '|---|---|---|---|---|')
  for (const result of results) {
    for (const row of result.shapeRows) {
      lines.push(
        `| ${result.name} | \`${row.what}\` | ${row.p50.toFixed(0)} ms | ${row.p95.toFixed(0)} ms | ${row.unavailable} of ${row.samples} |`,
      )
    }
  }
  lines.push('', '| engine | whole answer | status | first byte | last byte |', '|---|---|---|---|---|')
  for (const result of results) {
    for (const row of result.streamRows)
      lines.push(
        `| ${result.name} | \`GET ${row.what}\` | ${row.status} | ${row.firstByteMs.toFixed(0)} ms | ${(row.ms / 1000).toFixed(1)} s |`,
      )
  }
  lines.push(
    '',
    `| engine | meanwhile | bystander read p99 | max | reads (failed) | its \`${BYSTANDER_FIND}\` p99 | finds (failed) | readiness failures | attacker answers (503) |`,
    '|---|---|---|---|---|---|---|---|---|',
  )
  for (const result of results) {
    for (const row of result.bystanders) {
      lines.push(
        `| ${result.name} | ${row.what} | ${row.readP99.toFixed(1)} ms | ${row.readMax.toFixed(0)} ms | ${row.reads} (${row.failedReads}) | ${row.findP99.toFixed(0)} ms | ${row.finds} (${row.failedFinds}) | ${row.readyFailures} | ${row.attackerAnswers} (${row.attacker503}) |`,
      )
    }
  }
  return lines.join('\n')
}

/** The PostgreSQL database of `books` books: kept and reused with `keep`, otherwise made for this run and dropped. */
async function postgresCatalogue(
  books: number,
  keep: boolean,
  log: (line: string) => void,
): Promise<{ url: string; name: string } | undefined> {
  const name = keep ? `book_bench_hostile_${books}` : `book_bench_hostile_${process.pid}`
  const url = `postgres://postgres@127.0.0.1:5432/${name}`
  const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' })
  await admin.connect()
  const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]).finally(() => admin.end())
  if (rowCount === 1 && keep) return { url, name }
  const created = await createDatabase(name)
  if ('skip' in created) {
    log(`PostgreSQL skipped: ${created.skip}`)
    return undefined
  }
  await (await startService({ dbUrl: url })).stop()
  log(`PostgreSQL: seeding ${books} books`)
  await seedPostgres(url, books)
  return { url, name }
}

export async function main(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      books: { type: 'string', default: '1000000' },
      samples: { type: 'string', default: '20' },
      data: { type: 'string' },
      engines: { type: 'string', default: 'sqlite,postgres' },
    },
  })
  const books = Number(values.books)
  const samples = Number(values.samples)
  if (!Number.isSafeInteger(books) || books < 1000 || !Number.isSafeInteger(samples) || samples < 5) {
    console.error('usage: npm run bench -- hostile [--books=N≥1000] [--samples=N≥5] [--data=DIR] [--engines=sqlite,postgres]')
    process.exit(2)
  }
  const log = (line: string) => console.log(line)
  const keep = values.data !== undefined
  const dir = values.data ?? mkdtempSync(join(tmpdir(), 'book-bench-hostile-'))
  mkdirSync(dir, { recursive: true })
  const engines = values.engines.split(',')
  const body = importBody(100_000)
  const results: Result[] = []
  try {
    if (engines.includes('sqlite')) {
      const path = join(dir, `hostile-${books}.db`)
      // The import adds books: a kept catalogue is seeded afresh from a pristine copy each run.
      const pristine = `${path}.pristine`
      if (!existsSync(pristine)) {
        await (await startService({ dbUrl: `sqlite:${pristine}` })).stop()
        log(`SQLite: seeding ${books} books`)
        await seedSqlite(pristine, books)
        // Summarised once, in the copy every run starts from.
        const summarising = await startService({ dbUrl: `sqlite:${pristine}` })
        await untilSummarised(`sqlite:${pristine}`, log).finally(() => summarising.stop())
      }
      rmSync(path, { force: true })
      rmSync(`${path}-wal`, { force: true })
      rmSync(`${path}-shm`, { force: true })
      copyCatalogue(pristine, path)
      results.push(await engine('SQLite', `sqlite:${path}`, { books, samples, log, import: body }))
    }
    if (engines.includes('postgres')) {
      const catalogue = await postgresCatalogue(books, keep, log)
      if (catalogue !== undefined) {
        try {
          log(`PostgreSQL: ${await serverSettings(catalogue.url)}`)
          results.push(await engine('PostgreSQL', catalogue.url, { books, samples, log, import: body }))
          // What the import added goes again, so that a kept catalogue stays as seeded: its rows
          // left dead in the table would otherwise be read by every later run's searches, and the
          // summaries of its blocks would name pairs of letters that no book holds any more, which
          // made short contained text name more blocks than a count reads by ranges.
          const client = new pg.Client({ connectionString: catalogue.url })
          await client.connect()
          const lastBlock = (books - 1) >> BLOCK_BITS
          await client.query('DELETE FROM books WHERE id > $1', [books])
          await client.query('DELETE FROM block_grams WHERE block > $1', [lastBlock])
          await client.query('DELETE FROM blocks_to_summarise WHERE block > $1', [lastBlock])
          await client.query('INSERT INTO blocks_to_summarise VALUES ($1) ON CONFLICT DO NOTHING', [lastBlock])
          await client.query('VACUUM (ANALYZE) books')
          await client.end()
        } finally {
          if (!keep) await dropDatabase(catalogue.name)
        }
      }
    }
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true })
  }
  console.log(`\n${report(results, books)}`)
}

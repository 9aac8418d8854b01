/**
 * `npm run bench -- feed [--rate=N] [--seconds=N] [--streams=N] [--runs=N]`: the change feed.
 *
 * 1. Two instances on one store, an SQLite file and a PostgreSQL database: `POST /book` on the
 *    first, `rate` a second (500 by default) sent on time whatever became of the ones before, for
 *    `seconds`, while a stream of the second follows the changes. For each write, from its 201 to
 *    its event on the stream: p50, p99 and the slowest, and whether every event came, once, in
 *    order.
 * 2. `streams` (1,000) open streams on one instance (SQLite file): what they add to its memory
 *    (RSS), idle and once 1,000 changes went to each; and `GET /book/{id}` a second, by wrk, with
 *    none open and with them open, in `runs` interleaved runs each.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { request, type IncomingMessage } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { bookPaths, describeSpread, spread } from './measure.ts'
import { createDatabase, dropDatabase } from './postgres.ts'
import { describeMachine } from './report.ts'
import { createBooks, login, startService, type Service } from './service.ts'
import { steadyWrites } from './steady-writes.ts'
import { percentile } from './timed.ts'
import { wrk, type Run } from './wrk.ts'

/** Writes before this are not counted: the code under test is compiled by then. */
const WARM_UP_MS = 2000
/** How long after the last write its event may still come before it counts as missing. */
const GRACE_MS = 5000
/** Enough connections for the streams, wrk and the writes, from one address. */
const ROOMY = { MAX_CONNECTIONS: '8192', MAX_CONNECTIONS_PER_ADDRESS: '8192', MAX_STREAMS: '8192' }

/** One write and what became of it: when it was sent, when its 201 came, its book. */
/** A stream of changes: when each created book's event came, and every seq, in the order they came. */
interface Follower {
  arrivals: Map<number, number>
  seqs: number[]
  response: IncomingMessage
  close(): void
}

function follow(service: Service, token: string, path = '/books/changes?since=latest'): Promise<Follower> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${service.baseUrl}${path}`,
      { agent: false, headers: { authorization: token, accept: 'text/event-stream' } },
      (response) => {
        if (response.statusCode !== 200) {
          reject(new Error(`the stream answered ${response.statusCode}`))
          return
        }
        const arrivals = new Map<number, number>()
        const seqs: number[] = []
        let pending = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => {
          const at = performance.now()
          pending += chunk
          for (let end = pending.indexOf('\n\n'); end !== -1; end = pending.indexOf('\n\n')) {
            const data = /^data: (.*)$/m.exec(pending.slice(0, end))?.[1]
            pending = pending.slice(end + 2)
            if (data === undefined) continue
            const change = JSON.parse(data) as { seq: number; book_id: number; kind: string }
            seqs.push(change.seq)
            if (change.kind === 'created') arrivals.set(change.book_id, at)
          }
        })
        response.on('error', () => {})
        resolve({ arrivals, seqs, response, close: () => req.destroy() })
      },
    )
    req.on('error', reject)
    req.end()
  })
}

interface LatencyRow {
  setup: string
  writes: number
  failed: number
  p50: number
  p99: number
  slowest: number
  missing: number
  inOrder: boolean
}

/** Writes on `writer` at `rate` for `seconds` while a stream of `reader` follows: from each write's 201 to its event. */
async function latency(setup: string, writer: Service, reader: Service, rate: number, seconds: number): Promise<LatencyRow> {
  const token = await login(writer)
  const follower = await follow(reader, await login(reader))
  try {
    const writing = steadyWrites(writer, token, rate, { title: (n) => `Followed ${n}`, author: 'Feed Bench' })
    await sleep(WARM_UP_MS + seconds * 1000)
    await writing.stop()
    const counted = writing.writes.filter((write) => write.sentAt >= writing.writes[0]!.sentAt + WARM_UP_MS)
    const acknowledged = counted.filter((write) => write.status === 201)
    const deadline = performance.now() + GRACE_MS
    while (acknowledged.some((write) => !follower.arrivals.has(write.id!)) && performance.now() < deadline) await sleep(50)
    const times = acknowledged
      .filter((write) => follower.arrivals.has(write.id!))
      .map((write) => follower.arrivals.get(write.id!)! - write.answeredAt!)
    const seqs = follower.seqs
    return {
      setup,
      writes: counted.length,
      failed: counted.length - acknowledged.length,
      p50: percentile(times, 50),
      p99: percentile(times, 99),
      slowest: Math.max(...times),
      missing: acknowledged.length - times.length,
      inOrder: seqs.every((seq, i) => i === 0 || seq > seqs[i - 1]!),
    }
  } finally {
    follower.close()
  }
}

/** The resident memory of the process now, in bytes. */
function rss(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return Number(match![1]) * 1024
}

const MIB = 1024 * 1024

/** `count` streams, opened a few at a time; each has said its first words. */
async function openStreams(service: Service, token: string, count: number): Promise<Follower[]> {
  const streams: Follower[] = []
  for (let start = 0; start < count; start += 50) {
    streams.push(...(await Promise.all(Array.from({ length: Math.min(50, count - start) }, () => follow(service, token)))))
  }
  return streams
}

async function manyStreams(work: string, count: number, runs: number, seconds: number) {
  const service = await startService({ dbUrl: `sqlite:${join(work, 'streams.db')}`, env: ROOMY, cpus: '0' })
  try {
    const token = await login(service)
    const ids = await createBooks(service, token, 100)
    const workload = { method: 'GET' as const, path: '/book/1', headers: { authorization: token }, paths: bookPaths(ids) }
    const load = { connections: 50, durationSeconds: seconds, runs, cpus: '1' }
    await wrk(service.baseUrl, service.pid, workload, load, 2)
    await sleep(1000)
    const before = rss(service.pid)
    let streams = await openStreams(service, token, count)
    await sleep(1000)
    const idle = rss(service.pid)
    // 1,000 changes, 100 a second, each to every stream.
    const writing = steadyWrites(service, token, 100, { title: (n) => `Followed ${n}`, author: 'Feed Bench' })
    await sleep(10_000)
    await writing.stop()
    const newest = Math.max(...writing.writes.map((write) => write.id ?? 0))
    const deadline = performance.now() + 30_000
    while (streams.some((stream) => !stream.arrivals.has(newest)) && performance.now() < deadline) await sleep(100)
    const delivered = streams.filter((stream) => stream.arrivals.has(newest)).length
    const busy = rss(service.pid)

    const none: Run[] = []
    const open: Run[] = []
    for (let run = 0; run < runs; run++) {
      for (const stream of streams) stream.close()
      await sleep(1000)
      none.push(await wrk(service.baseUrl, service.pid, workload, load, seconds))
      streams = await openStreams(service, token, count)
      await sleep(1000)
      open.push(await wrk(service.baseUrl, service.pid, workload, load, seconds))
    }
    for (const stream of streams) stream.close()
    return { before, idle, busy, delivered, writes: writing.writes.length, none, open }
  } finally {
    await service.stop()
  }
}

async function pair(setup: string, dbUrl: string, rate: number, seconds: number): Promise<LatencyRow> {
  // The first starts alone, so that the migrations run once before the second starts.
  const writer = await startService({ dbUrl, env: ROOMY })
  const reader = await startService({ dbUrl, env: ROOMY })
  try {
    return await latency(setup, writer, reader, rate, seconds)
  } finally {
    await Promise.all([writer.stop(), reader.stop()])
  }
}

export async function main(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      rate: { type: 'string', default: '500' },
      seconds: { type: 'string', default: '20' },
      streams: { type: 'string', default: '1000' },
      runs: { type: 'string', default: '3' },
    },
  })
  const [rate, seconds, count, runs] = [values.rate, values.seconds, values.streams, values.runs].map(Number) as [
    number,
    number,
    number,
    number,
  ]
  if ([rate, seconds, count, runs].some((value) => !Number.isSafeInteger(value) || value < 1)) {
    console.error('usage: npm run bench -- feed [--rate=N] [--seconds=N] [--streams=N] [--runs=N]')
    process.exit(2)
  }
  const work = mkdtempSync(join(tmpdir(), 'book-bench-feed-'))
  const database = `bench_feed_${process.pid}`
  try {
    const machine = describeMachine()
    console.log(
      `${machine.cores} × ${machine.cpu}, Node ${machine.node}, load average ${machine.loadAverageAtStart.join(', ')} at the start`,
    )
    const rows: LatencyRow[] = []
    console.log(`two instances on one SQLite file, ${rate} writes a second for ${seconds} s`)
    rows.push(await pair('two instances, one SQLite file', `sqlite:${join(work, 'pair.db')}`, rate, seconds))
    const postgres = await createDatabase(database)
    if ('skip' in postgres) console.log(`PostgreSQL: skipped, ${postgres.skip}`)
    else {
      console.log(`two instances on one PostgreSQL database, ${rate} writes a second for ${seconds} s`)
      rows.push(await pair('two instances, one PostgreSQL database', postgres.url, rate, seconds))
    }
    console.log(`${count} open streams on one instance (SQLite file)`)
    const streams = await manyStreams(work, count, runs, Math.max(3, Math.round(seconds / 4)))

    console.log(
      `\nFrom a write's 201 on one instance to its event on a stream of the other, ${rate} writes a second (\`npm run bench -- feed\`)\n`,
    )
    console.log('| setup | writes | failed | p50 | p99 | slowest | missing | in order |\n|---|---:|---:|---:|---:|---:|---:|---|')
    for (const row of rows) {
      console.log(
        `| ${row.setup} | ${row.writes} | ${row.failed} | ${row.p50.toFixed(1)} ms | ${row.p99.toFixed(1)} ms | ${row.slowest.toFixed(1)} ms | ${row.missing} | ${row.inOrder ? 'yes' : 'no'} |`,
      )
    }
    console.log(`\n${count} open streams on one instance (SQLite file)\n`)
    console.log('| measure | figure |\n|---|---|')
    console.log(
      `| RSS before, with the streams open and idle, after ${streams.writes} changes went to each | ${(streams.before / MIB).toFixed(0)} MiB, ${(streams.idle / MIB).toFixed(0)} MiB (+${((streams.idle - streams.before) / MIB).toFixed(1)}), ${(streams.busy / MIB).toFixed(0)} MiB (+${((streams.busy - streams.before) / MIB).toFixed(1)}) |`,
    )
    console.log(`| streams that got every change | ${streams.delivered} of ${count} |`)
    const rateOf = (runs: Run[]) => spread(runs.map((run) => run.requestsPerSecond))
    const cpu = (runs: Run[]) => spread(runs.map((run) => run.cpuMicrosecondsPerRequest))
    const change = (open: number, none: number) => `${((open / none - 1) * 100).toFixed(1)} %`
    console.log(
      `| \`GET /book/{id}\` a second, none open; CPU µs a request | ${describeSpread(rateOf(streams.none))}; ${describeSpread(cpu(streams.none))} |`,
    )
    console.log(
      `| \`GET /book/{id}\` a second, ${count} open; CPU µs a request | ${describeSpread(rateOf(streams.open))} (${change(rateOf(streams.open).median, rateOf(streams.none).median)}); ` +
        `${describeSpread(cpu(streams.open))} (${change(cpu(streams.open).median, cpu(streams.none).median)}) |`,
    )
  } finally {
    await dropDatabase(database)
    rmSync(work, { recursive: true, force: true })
  }
}

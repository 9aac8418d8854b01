/**
 * `npm run bench -- search [--books=N] [--samples=N]`: finding books at a million books (or N),
 * on each engine. Books are generated with faker and written straight into the database with
 * their search columns, the service's indexes and triggers in place (on SQLite, the search
 * indexes then take them in bulk, as the service would); then the service answers, one request
 * at a time, and the latency of each kind of request is taken from the client.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { request, Agent } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { faker } from '@faker-js/faker'
import type { NewBook } from '../../src/books/book.ts'
import { SEED, seedPostgres, seedSqlite } from './catalogue.ts'
import { createDatabase, dropDatabase } from './postgres.ts'
import { peakResidentDuring } from './processes.ts'
import { login, startService, type Service } from './service.ts'

export interface SearchBenchOptions {
  books: number
  /** Requests measured per kind, after a warm-up. */
  samples: number
  work: string
  log: (line: string) => void
}

interface Figure {
  name: string
  p50Ms: number
  p95Ms: number
  target: string
}

interface EngineResult {
  engine: string
  seedSeconds: number
  figures: Figure[]
  list: { path: string; seconds: number; peakRssMiB: number }[]
  note?: string
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 })

/** One GET, timed from the request to the last byte; fails on any status but 200. */
function timedGet(service: Service, path: string, token: string): Promise<{ ms: number; bytes: number }> {
  const started = process.hrtime.bigint()
  return new Promise((resolve, reject) => {
    request(`${service.baseUrl}${path}`, { agent, headers: { authorization: token } }, (response) => {
      let bytes = 0
      response.on('data', (chunk: Buffer) => (bytes += chunk.length))
      response.on('end', () => {
        if (response.statusCode !== 200) reject(new Error(`GET ${path} answered ${response.statusCode}`))
        else resolve({ ms: Number(process.hrtime.bigint() - started) / 1e6, bytes })
      })
      response.on('error', reject)
    })
      .on('error', reject)
      .end()
  })
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

async function latency(service: Service, token: string, paths: string[], samples: number, name: string, target: string): Promise<Figure> {
  for (const path of paths.slice(0, 10)) await timedGet(service, path, token)
  const times: number[] = []
  for (let i = 0; i < samples; i++) times.push((await timedGet(service, paths[i % paths.length]!, token)).ms)
  times.sort((a, b) => a - b)
  return { name, p50Ms: percentile(times, 50), p95Ms: percentile(times, 95), target }
}

const WORD = /[\p{L}\p{N}]{3,}/gu

/** Requests built from books of the catalogue, so that they find something. */
function queries(kept: NewBook[]) {
  faker.seed(SEED + 1)
  const twoWords = kept.map((book) => {
    const words = [...`${book.title} ${book.author}`.matchAll(WORD)].map(([word]) => word)
    const [a, b] = faker.helpers.arrayElements(words, 2)
    return `/books?${new URLSearchParams({ q: `${a!.slice(0, 4)} ${b!.slice(0, 4)}`, limit: '20' }).toString()}`
  })
  const filtered = kept.map((book) => {
    const surname = book.author.split(/[ ,]+/)[1] ?? book.author
    const from = faker.number.int({ min: 1500, max: 1950 })
    return `/books?${new URLSearchParams({ author: surname, year_from: String(from), sort: '-year,title', limit: '20' }).toString()}`
  })
  const years = kept.map(
    (book) =>
      `/books?${new URLSearchParams({ year_from: String(book.year), year_to: String(book.year + 10), sort: 'title', limit: '20' }).toString()}`,
  )
  return { twoWords, filtered, years }
}

async function measure(service: Service, dbUrl: string, kept: NewBook[], samples: number): Promise<Pick<EngineResult, 'figures' | 'list'>> {
  const token = await login(service)
  const { twoWords, filtered, years } = queries(kept)
  const figures = [
    await latency(service, token, twoWords, samples, 'two-word q, limit=20', '≤ 20 ms'),
    await latency(service, token, filtered, samples, 'author + year_from, sort=-year,title, limit=20', '≤ 20 ms'),
    await latency(service, token, years, samples, 'year_from + year_to, sort=title, limit=20', '≤ 20 ms'),
    await latency(
      service,
      token,
      ['/books?year_from=-9999&count=true&limit=20'],
      Math.min(samples, 50),
      'count=true, broadest filter',
      '≤ 150 ms',
    ),
  ]
  const list = []
  for (const path of ['/books', '/books?year_from=-9999']) {
    const { value, peakBytes } = await peakResidentDuring(service.pid, dbUrl, () => timedGet(service, path, token))
    list.push({ path, seconds: value.ms / 1000, peakRssMiB: peakBytes / 2 ** 20 })
  }
  return { figures, list }
}

async function runEngine(
  engine: string,
  dbUrl: string,
  seed: () => Promise<NewBook[]>,
  options: SearchBenchOptions,
): Promise<EngineResult> {
  // Started once so that the service's own migrations create the schema, indexes and triggers.
  await (await startService({ dbUrl })).stop()
  const started = process.hrtime.bigint()
  const kept = await seed()
  const seedSeconds = Number(process.hrtime.bigint() - started) / 1e9
  options.log(`${engine}: ${options.books} books written in ${seedSeconds.toFixed(0)} s`)
  const service = await startService({ dbUrl })
  try {
    return { engine, seedSeconds, ...(await measure(service, dbUrl, kept, options.samples)) }
  } finally {
    await service.stop()
  }
}

function report(results: EngineResult[], books: number): string {
  const lines = [`Finding books at ${books} books: one request at a time, latency from the client`, '']
  lines.push('| engine | request | p50 | p95 | target |', '|---|---|---|---|---|')
  for (const result of results) {
    if (result.note) lines.push(`| ${result.engine} | ${result.note} | | | |`)
    for (const figure of result.figures) {
      lines.push(`| ${result.engine} | ${figure.name} | ${figure.p50Ms.toFixed(1)} ms | ${figure.p95Ms.toFixed(1)} ms | ${figure.target} |`)
    }
  }
  lines.push('', '| engine | whole list, unpaged | time | peak RSS of the service, the mapped store file apart |', '|---|---|---|---|')
  for (const result of results) {
    for (const item of result.list) {
      lines.push(`| ${result.engine} | \`GET ${item.path}\` | ${item.seconds.toFixed(1)} s | ${item.peakRssMiB.toFixed(0)} MiB |`)
    }
  }
  return lines.join('\n')
}

export async function runSearchBench(options: SearchBenchOptions): Promise<{ text: string; data: EngineResult[] }> {
  const results: EngineResult[] = []
  const path = join(options.work, 'search.db')
  results.push(await runEngine('SQLite', `sqlite:${path}`, () => seedSqlite(path, options.books), options))
  const name = `book_bench_search_${process.pid}`
  const database = await createDatabase(name)
  if ('skip' in database) {
    results.push({ engine: 'PostgreSQL', seedSeconds: 0, figures: [], list: [], note: `skipped, ${database.skip}` })
  } else {
    try {
      results.push(await runEngine('PostgreSQL', database.url, () => seedPostgres(database.url, options.books), options))
    } finally {
      await dropDatabase(name)
    }
  }
  agent.destroy()
  return { text: report(results, options.books), data: results }
}

/** `npm run bench -- search [--books=N] [--samples=N]`: runs this benchmark alone and prints its tables. */
export async function main(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      books: { type: 'string', default: process.env.BENCH_SEARCH_BOOKS ?? '1000000' },
      samples: { type: 'string', default: process.env.BENCH_SEARCH_SAMPLES ?? '200' },
    },
  })
  const books = Number(values.books)
  const samples = Number(values.samples)
  if (!Number.isSafeInteger(books) || books < 1000 || !Number.isSafeInteger(samples) || samples < 20) {
    console.error('usage: npm run bench -- search [--books=N≥1000] [--samples=N≥20]')
    process.exit(2)
  }
  const work = mkdtempSync(join(tmpdir(), 'book-bench-search-'))
  try {
    const { text } = await runSearchBench({ books, samples, work, log: (line) => console.log(line) })
    console.log(`\n${text}`)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

/**
 * Importing another catalogue's file: a Goodreads library export of 100,000 rows (its 24 columns,
 * about 30 MiB, near the 32 MiB limit), one row in 100 without a year as in real exports, one in
 * 50 repeating an earlier row, on each engine. A dry run, an import with `invalid=skip`, the same
 * with `duplicates=skip` too, and that file sent again with both (every row then repeats a stored
 * book), each by a freshly started service, with the rows read per second and the service's peak
 * RSS before and after.
 *
 *   node scripts/bench/import-formats.ts [--rows=N] [--only=sqlite,postgres]
 *
 * `npm run bench -- import-formats` runs it as part of the benchmark.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createDatabase, dropDatabase } from './postgres.ts'
import { cpuSeconds, peakRss } from './processes.ts'
import { login, sampleBook, startService, type Service } from './service.ts'

/** What each run sends, and on which of the engine's databases: the last runs on the third's books. */
const RUNS = [
  { run: 'dry run', query: 'dry_run=true', database: 0, status: 200 },
  { run: 'import', query: 'invalid=skip', database: 1, status: 201 },
  { run: 'import, duplicates=skip', query: 'invalid=skip&duplicates=skip', database: 2, status: 201 },
  { run: 'again, duplicates=skip', query: 'invalid=skip&duplicates=skip', database: 2, status: 201 },
] as const

type Run = (typeof RUNS)[number]

export interface FormatImportFigures {
  engine: string
  run: Run['run']
  /** Rows the file holds. */
  rows: number
  /** Rows the answer counts: importable for a dry run, imported for an import. */
  books: number
  mebibytes: number
  seconds: number
  rowsPerSecond: number
  /**
   * CPU seconds the service process used for the request (not PostgreSQL's): on a busy machine it
   * moves far less than the time does, so runs of one measurement compare by it.
   */
  cpuSeconds: number
  /** The service process's peak resident set before the request, after start-up and a login. */
  peakRssBeforeMiB: number
  /** The service process's peak resident set, from start-up through the request. */
  peakRssMiB: number
}

const MiB = 1024 * 1024

const HEADER =
  'Book Id,Title,Author,Author l-f,Additional Authors,ISBN,ISBN13,My Rating,Average Rating,Publisher,Binding,Number of Pages,' +
  'Year Published,Original Publication Year,Date Read,Date Added,Bookshelves,Bookshelves with positions,Exclusive Shelf,' +
  'My Review,Spoiler,Private Notes,Read Count,Owned Copies'

const REVIEW = 'A slow start, then it would not let go: the middle third alone is worth it, and the ending ""earns"" its quiet. '

/**
 * One row as Goodreads writes it: quoted where a cell holds a comma or quote, ISBNs as ="…", an
 * empty year for every 100th, and every 50th the book of a row about 1,000 before it, as a
 * library that holds two editions of a book has it twice.
 */
function goodreadsRow(n: number): string {
  const book = n % 50 === 25 && n > 1000 ? n - 1001 : n
  const { title, author, year } = sampleBook(book)
  const [first, last] = [author.slice(0, author.lastIndexOf(' ')), author.slice(author.lastIndexOf(' ') + 1)]
  const isbn = String(1_000_000_000 + n)
  const read = n % 3 === 0
  const years = n % 100 === 99 ? ',' : `${2000 + (n % 24)},${year}`
  const review = read ? `"${REVIEW.repeat(1 + ((n / 3) % 4))}"` : ''
  return [
    100_000 + n,
    `"${title} (Series, #${1 + (book % 7)})"`,
    author,
    `"${last}, ${first}"`,
    n % 5 === 0 ? 'Another Author' : '',
    `"=""${isbn}"""`,
    `"=""978${isbn}"""`,
    read ? 1 + (n % 5) : 0,
    (3 + (n % 200) / 100).toFixed(2),
    'Some Publisher',
    'Paperback',
    200 + (n % 400),
    years,
    read ? '2024/03/02' : '',
    '2023/11/30',
    read ? '"fiction, favourites"' : 'to-read',
    read ? `"fiction (#${n}), favourites (#${n % 50})"` : `to-read (#${n})`,
    read ? 'read' : 'to-read',
    review,
    '',
    '',
    read ? 1 : 0,
    n % 2,
  ].join(',')
}

export function goodreadsExport(rows: number): string {
  const lines = [HEADER]
  for (let n = 0; n < rows; n++) lines.push(goodreadsRow(n))
  return `${lines.join('\n')}\n`
}

/** Sends the file once, as `run` says. */
async function measure(engine: string, { run, query, status }: Run, service: Service, token: string, file: string, rows: number) {
  const before = (peakRss(service.pid) ?? 0) / MiB
  const cpuBefore = cpuSeconds(service.pid)
  const started = performance.now()
  const res = await fetch(`${service.baseUrl}/books/import?${query}`, {
    method: 'POST',
    headers: { authorization: token, 'content-type': 'text/csv' },
    body: file,
  })
  const text = await res.text()
  const seconds = (performance.now() - started) / 1000
  const cpu = cpuSeconds(service.pid) - cpuBefore
  if (res.status !== status) throw new Error(`${run} answered ${res.status}: ${text.slice(0, 300)}`)
  const { data } = JSON.parse(text) as { data: { importable?: number; imported?: number } }
  return {
    engine,
    run,
    rows,
    books: data.importable ?? data.imported ?? 0,
    mebibytes: Buffer.byteLength(file) / MiB,
    seconds,
    rowsPerSecond: rows / seconds,
    cpuSeconds: cpu,
    peakRssBeforeMiB: before,
    peakRssMiB: (peakRss(service.pid) ?? 0) / MiB,
  }
}

/**
 * Each run by a service of its own, so that each peak RSS is its own; the plain import and the
 * one that skips duplicates on databases of their own, one after the other, on the same machine
 * within a minute, so that they can be compared however busy the machine is.
 */
async function measureEngine(engine: string, dbUrls: string[], file: string, rows: number): Promise<FormatImportFigures[]> {
  const figures: FormatImportFigures[] = []
  for (const run of RUNS) {
    const service = await startService({ dbUrl: dbUrls[run.database]! })
    try {
      figures.push(await measure(engine, run, service, await login(service), file, rows))
    } finally {
      await service.stop()
    }
  }
  return figures
}

export interface FormatImportOptions {
  rows: number
  engines: string[]
  log: (line: string) => void
}

export async function measureFormatImports({ rows, engines, log }: FormatImportOptions): Promise<FormatImportFigures[]> {
  const file = goodreadsExport(rows)
  log(`  Goodreads export of ${rows} rows, ${(Buffer.byteLength(file) / MiB).toFixed(1)} MiB`)
  const figures: FormatImportFigures[] = []
  if (engines.includes('sqlite')) {
    const work = mkdtempSync(join(tmpdir(), 'book-import-formats-'))
    try {
      const urls = ['dry-run', 'import', 'duplicates'].map((name) => `sqlite:${join(work, `${name}.db`)}`)
      for (const figure of await measureEngine('SQLite', urls, file, rows)) {
        figures.push(figure)
        log(`  ${JSON.stringify(figure)}`)
      }
    } finally {
      rmSync(work, { recursive: true, force: true })
    }
  }
  if (engines.includes('postgres')) {
    const names = ['dry', 'import', 'duplicates'].map((name) => `bench_formats_${name}_${process.pid}`)
    const databases = await Promise.all(names.map((name) => createDatabase(name)))
    const skipped = databases.find((database) => 'skip' in database)
    try {
      if (skipped !== undefined && 'skip' in skipped) log(`  PostgreSQL: skipped, ${skipped.skip}`)
      else {
        const urls = databases.map((database) => (database as { url: string }).url)
        for (const figure of await measureEngine('PostgreSQL', urls, file, rows)) {
          figures.push(figure)
          log(`  ${JSON.stringify(figure)}`)
        }
      }
    } finally {
      await Promise.all(names.map((name) => dropDatabase(name)))
    }
  }
  return figures
}

export function formatImportTable(figures: FormatImportFigures[]): string {
  const lines = [
    '| Goodreads export | rows | books | MiB | seconds | rows/s | service CPU s | peak RSS before → after (MiB) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  ]
  for (const f of figures) {
    lines.push(
      `| ${f.engine}, ${f.run} | ${f.rows} | ${f.books} | ${f.mebibytes.toFixed(1)} | ${f.seconds.toFixed(2)} | ${Math.round(f.rowsPerSecond)} | ${f.cpuSeconds.toFixed(2)} | ${f.peakRssBeforeMiB.toFixed(0)} → ${f.peakRssMiB.toFixed(0)} |`,
    )
  }
  return lines.join('\n')
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '100000' },
      only: { type: 'string', default: 'sqlite,postgres' },
    },
  })
  const log = (line: string) => console.log(line)
  const figures = await measureFormatImports({ rows: Number(values.rows), engines: values.only.split(','), log })
  log('')
  log(formatImportTable(figures))
}

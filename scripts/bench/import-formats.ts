/**
 * Importing another catalogue's file: a Goodreads library export of 100,000 rows (its 24 columns,
 * about 30 MiB, near the 32 MiB limit), one row in 100 without a year as in real exports, one in
 * 50 repeating an earlier row, on each engine. A dry run, an import with `invalid=skip`, the same
 * with `duplicates=skip` too, and that file sent again with both (every row then repeats a stored
 * book), each by a freshly started service, with the rows read per second and the service's peak
 * RSS before and after. Then a file of 100,000 books, about 30 MiB, of each other kind an import
 * reads (CSV with semicolons, LibraryThing's TSV, Calibre's CSV, UTF-16, Windows-1252, a JSON
 * array, NDJSON), each imported by a freshly started service, with its peak RSS before and after.
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

/** One kind of file: its bytes, with the most books an import takes, and its Content-Type. */
interface FileKind {
  kind: string
  contentType: string
  make: () => Buffer
}

/** The most books an import takes. */
const FILE_ROWS = 100_000

/**
 * A note each row carries in a column the import ignores, as real exports carry reviews and
 * shelves: `length` characters, so that the file comes near the 32 MiB an import takes at most.
 */
const note = (length: number) => 'A note on this copy and where it was found. '.repeat(Math.ceil(length / 45)).slice(0, length)

/** `header`, then one line for each of FILE_ROWS books. */
const lines = (header: string, line: (n: number) => string) =>
  `${[header, ...Array.from({ length: FILE_ROWS }, (_, n) => line(n))].join('\n')}\n`

const NOTE = note(280)

const FILE_KINDS: FileKind[] = [
  {
    kind: 'CSV, semicolons',
    contentType: 'text/csv',
    make: () => Buffer.from(lines('Title;Author;Year;Notes', (n) => `${Object.values(sampleBook(n)).join(';')};${NOTE}`)),
  },
  {
    kind: "LibraryThing's TSV, authors last name first",
    contentType: 'text/tab-separated-values',
    make: () =>
      Buffer.from(
        lines('Book Id\tTitle\tPrimary Author\tDate\tComments', (n) => {
          const { title, author, year } = sampleBook(n)
          const [first, last] = author.split(' ')
          return `${n}\t${title}\t${last}, ${first}\t${year}\t${NOTE}`
        }),
      ),
  },
  {
    kind: "Calibre's CSV, dates for years",
    contentType: 'text/csv',
    make: () =>
      Buffer.from(
        lines('title,authors,pubdate,comments', (n) => {
          const { title, author, year } = sampleBook(n)
          return `${title},${author},${year}-06-01T00:00:00+00:00,${note(250)}`
        }),
      ),
  },
  {
    kind: 'CSV, UTF-16 with a byte-order mark',
    contentType: 'text/csv',
    make: () => {
      const text = lines('title,author,year,notes', (n) => `${Object.values(sampleBook(n)).join(',')},${note(120)}`)
      return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')])
    },
  },
  {
    kind: 'CSV, Windows-1252',
    contentType: 'text/csv; charset=windows-1252',
    // Every character here is one byte in Windows-1252, the same byte as in ISO 8859-1.
    make: () =>
      Buffer.from(
        lines('title,author,year,notes', (n) => `${sampleBook(n).title} é,Author ${n % 997} à,1999,${NOTE}`),
        'latin1',
      ),
  },
  {
    kind: 'JSON array',
    contentType: 'application/json',
    make: () =>
      Buffer.from(`[${Array.from({ length: FILE_ROWS }, (_, n) => JSON.stringify({ ...sampleBook(n), notes: note(240) })).join(',\n')}]\n`),
  },
  {
    kind: 'NDJSON',
    contentType: 'application/x-ndjson',
    make: () =>
      Buffer.from(`${Array.from({ length: FILE_ROWS }, (_, n) => JSON.stringify({ ...sampleBook(n), notes: note(240) })).join('\n')}\n`),
  },
]

export interface ImportMemoryFigures {
  engine: string
  kind: string
  rows: number
  mebibytes: number
  seconds: number
  peakRssBeforeMiB: number
  peakRssMiB: number
}

/** Imports a file of each kind with `invalid=skip`, each by a service of its own on a store of its own. */
export async function measureImportMemory({ engines, log }: Omit<FormatImportOptions, 'rows'>): Promise<ImportMemoryFigures[]> {
  const figures: ImportMemoryFigures[] = []
  for (const { kind, contentType, make } of FILE_KINDS) {
    const body = make()
    for (const engine of engines) {
      const name = `bench_memory_${process.pid}`
      const work = mkdtempSync(join(tmpdir(), 'book-import-memory-'))
      const database = engine === 'postgres' ? await createDatabase(name) : { url: `sqlite:${join(work, 'memory.db')}` }
      try {
        if ('skip' in database) {
          log(`  PostgreSQL: skipped, ${database.skip}`)
          continue
        }
        const service = await startService({ dbUrl: database.url })
        try {
          const token = await login(service)
          const before = (peakRss(service.pid) ?? 0) / MiB
          const started = performance.now()
          const res = await fetch(`${service.baseUrl}/books/import?invalid=skip`, {
            method: 'POST',
            headers: { authorization: token, 'content-type': contentType },
            body,
          })
          const text = await res.text()
          if (res.status !== 201) throw new Error(`${kind} answered ${res.status}: ${text.slice(0, 300)}`)
          // Every row is a book: a file that the import misread would measure nothing.
          const { imported } = (JSON.parse(text) as { data: { imported: number } }).data
          if (imported !== FILE_ROWS) throw new Error(`${kind}: ${imported} of ${FILE_ROWS} books imported`)
          const figure = {
            engine: engine === 'postgres' ? 'PostgreSQL' : 'SQLite',
            kind,
            rows: FILE_ROWS,
            mebibytes: body.length / MiB,
            seconds: (performance.now() - started) / 1000,
            peakRssBeforeMiB: before,
            peakRssMiB: (peakRss(service.pid) ?? 0) / MiB,
          }
          figures.push(figure)
          log(`  ${JSON.stringify(figure)}`)
        } finally {
          await service.stop()
        }
      } finally {
        rmSync(work, { recursive: true, force: true })
        if (engine === 'postgres') await dropDatabase(name)
      }
    }
  }
  return figures
}

export function importMemoryTable(figures: ImportMemoryFigures[]): string {
  const lines = ['| file | books | MiB | seconds | peak RSS before → after (MiB) | more |', '|---|---:|---:|---:|---:|---:|']
  for (const f of figures) {
    lines.push(
      `| ${f.engine}, ${f.kind} | ${f.rows} | ${f.mebibytes.toFixed(1)} | ${f.seconds.toFixed(2)} | ${f.peakRssBeforeMiB.toFixed(0)} → ${f.peakRssMiB.toFixed(0)} | +${(f.peakRssMiB - f.peakRssBeforeMiB).toFixed(0)} |`,
    )
  }
  return lines.join('\n')
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
  const engines = values.only.split(',')
  const figures = await measureFormatImports({ rows: Number(values.rows), engines, log })
  log('')
  log(formatImportTable(figures))
  log('')
  log('Files of every other kind')
  const memory = await measureImportMemory({ engines, log })
  log('')
  log(importMemoryTable(memory))
}

/**
 * Import and export throughput: a 100,000-row CSV import on each engine, alone and then while
 * another client reads, with the worst read latency seen meanwhile; the peak RSS a freshly
 * started service reaches through an import near the 32 MiB limit; and an export of 1,000,000
 * books with the service's peak RSS (the store's file, which SQLite's readers map, apart).
 *
 *   node scripts/bench/transfer.ts [--rows=N] [--export=N] [--only=sqlite,postgres]
 *
 * `npm run bench -- transfer` runs it as part of the benchmark.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createDatabase, dropDatabase } from './postgres.ts'
import { peakResidentDuring, peakRss } from './processes.ts'
import { seedSqlite } from './seed.ts'
import { login, sampleBook, startService, type Service } from './service.ts'

export interface ImportFigures {
  engine: string
  rows: number
  seconds: number
  rowsPerSecond: number
  /** Whether another client read while the import ran. */
  withReader: boolean
  /** Reads answered while the import ran, one after another on one connection. */
  reads: number
  worstReadMs: number
}

export interface ExportFigures {
  engine: string
  books: number
  seconds: number
  booksPerSecond: number
  mebibytes: number
  /** The service process's peak resident set before the export, after start-up and a login. */
  peakRssBeforeMiB: number
  /** The service process's peak resident set, from start-up through the export. */
  peakRssMiB: number
}

/** Peak RSS of a freshly started service through one import of long rows. */
export interface ImportMemoryFigures {
  engine: string
  rows: number
  mebibytes: number
  /** The service process's peak resident set before the import, after start-up and a login. */
  peakRssBeforeMiB: number
  /** The service process's peak resident set, from start-up through the import. */
  peakRssMiB: number
}

const MiB = 1024 * 1024

function csvOf(rows: number, offset: number): string {
  const lines = ['title,author,year']
  for (let n = offset; n < offset + rows; n++) {
    const { title, author, year } = sampleBook(n)
    lines.push(`${title},${author},${year}`)
  }
  return `${lines.join('\n')}\n`
}

/** Rows of about 330 characters, so that 100,000 of them come close to the 32 MiB limit. */
function longCsvOf(rows: number): string {
  const lines = ['title,author,year']
  for (let n = 0; n < rows; n++) {
    const { title, author, year } = sampleBook(n)
    lines.push(`${title.padEnd(205, ' of the long title')},${author.padEnd(115, ' and co-authors')},${year}`)
  }
  return `${lines.join('\n')}\n`
}

async function importCsv(service: Service, token: string, csv: string): Promise<number> {
  const res = await fetch(`${service.baseUrl}/books/import`, {
    method: 'POST',
    headers: { authorization: token, 'content-type': 'text/csv' },
    body: csv,
  })
  const text = await res.text()
  if (res.status !== 201) throw new Error(`import answered ${res.status}: ${text.slice(0, 300)}`)
  return (JSON.parse(text) as { data: { imported: number } }).data.imported
}

/**
 * Times one import of `rows` CSV rows, alone or while a reader keeps asking for a page of books
 * (whose requests take their share of both cores).
 */
export async function measureImport(
  engine: string,
  service: Service,
  token: string,
  rows: number,
  withReader = true,
): Promise<ImportFigures> {
  const csv = csvOf(rows, 0)
  let importing = withReader
  let reads = 0
  let worst = 0
  const reader = (async () => {
    while (importing) {
      const started = performance.now()
      const res = await fetch(`${service.baseUrl}/books?limit=10`, { headers: { authorization: token } })
      await res.arrayBuffer()
      if (!importing) break
      worst = Math.max(worst, performance.now() - started)
      reads++
    }
  })()
  const started = performance.now()
  const imported = await importCsv(service, token, csv)
  const seconds = (performance.now() - started) / 1000
  importing = false
  await reader
  return { engine, rows: imported, seconds, rowsPerSecond: imported / seconds, withReader, reads, worstReadMs: worst }
}

/** The service's peak RSS before and after one import of `rows` rows of about 330 characters. */
export async function measureImportMemory(engine: string, service: Service, token: string, rows: number): Promise<ImportMemoryFigures> {
  const csv = longCsvOf(rows)
  const before = (peakRss(service.pid) ?? 0) / MiB
  const imported = await importCsv(service, token, csv)
  return {
    engine,
    rows: imported,
    mebibytes: Buffer.byteLength(csv) / MiB,
    peakRssBeforeMiB: before,
    peakRssMiB: (peakRss(service.pid) ?? 0) / MiB,
  }
}

/** Times a CSV export of every book, reading it as a client saving the file would. */
export async function measureExport(engine: string, dbUrl: string, service: Service, token: string): Promise<ExportFigures> {
  const started = performance.now()
  const { value, beforeBytes, peakBytes } = await peakResidentDuring(service.pid, dbUrl, async () => {
    const res = await fetch(`${service.baseUrl}/books/export?format=csv`, { headers: { authorization: token } })
    if (res.status !== 200 || res.body === null) throw new Error(`export answered ${res.status}`)
    let bytes = 0
    let lines = 0
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.byteLength
      for (const byte of chunk) if (byte === 0x0a) lines++
    }
    return { bytes, lines }
  })
  const seconds = (performance.now() - started) / 1000
  const books = value.lines - 1
  return {
    engine,
    books,
    seconds,
    booksPerSecond: books / seconds,
    mebibytes: value.bytes / MiB,
    peakRssBeforeMiB: beforeBytes / MiB,
    peakRssMiB: peakBytes / MiB,
  }
}

export interface TransferOptions {
  rows: number
  exportBooks: number
  engines: string[]
  log: (line: string) => void
}

/** Runs `measure` against a freshly started service, logged in, and stops the service after it. */
async function withService<T>(dbUrl: string, measure: (service: Service, token: string) => Promise<T>): Promise<T> {
  const service = await startService({ dbUrl })
  try {
    return await measure(service, await login(service))
  } finally {
    await service.stop()
  }
}

/** Every measurement of this module, on each engine asked for. */
export async function measureTransfer({ rows, exportBooks, engines, log }: TransferOptions) {
  const imports: ImportFigures[] = []
  const importMemory: ImportMemoryFigures[] = []
  const exports: ExportFigures[] = []
  if (engines.includes('sqlite')) {
    const work = mkdtempSync(join(tmpdir(), 'book-transfer-'))
    try {
      const dbUrl = `sqlite:${join(work, 'transfer.db')}`
      importMemory.push(await withService(`sqlite:${join(work, 'memory.db')}`, (s, t) => measureImportMemory('SQLite', s, t, rows)))
      log(`  SQLite import memory: ${JSON.stringify(importMemory.at(-1))}`)
      imports.push(await withService(`sqlite:${join(work, 'alone.db')}`, (s, t) => measureImport('SQLite', s, t, rows, false)))
      log(`  SQLite import alone: ${JSON.stringify(imports.at(-1))}`)
      imports.push(await withService(dbUrl, (s, t) => measureImport('SQLite', s, t, rows)))
      log(`  SQLite import: ${JSON.stringify(imports.at(-1))}`)
      // Straight into the file, then a fresh process: its peak RSS is the export's.
      seedSqlite(join(work, 'transfer.db'), Math.max(0, exportBooks - rows))
      exports.push(await withService(dbUrl, (s, t) => measureExport('SQLite', dbUrl, s, t)))
      log(`  SQLite export: ${JSON.stringify(exports.at(-1))}`)
    } finally {
      rmSync(work, { recursive: true, force: true })
    }
  }
  if (engines.includes('postgres')) {
    const name = `bench_transfer_${process.pid}`
    const database = await createDatabase(name)
    // The import alone goes into an empty table of its own, as on SQLite; the one beside a reader
    // into the table that the import of long rows filled.
    const alone = 'skip' in database ? database : await createDatabase(`${name}_alone`)
    if ('skip' in alone || 'skip' in database) {
      log(`  PostgreSQL: skipped, ${'skip' in alone ? alone.skip : ''}`)
      await dropDatabase(name)
    } else {
      try {
        importMemory.push(await withService(database.url, (s, t) => measureImportMemory('PostgreSQL', s, t, rows)))
        log(`  PostgreSQL import memory: ${JSON.stringify(importMemory.at(-1))}`)
        imports.push(await withService(alone.url, (s, t) => measureImport('PostgreSQL', s, t, rows, false)))
        log(`  PostgreSQL import alone: ${JSON.stringify(imports.at(-1))}`)
        imports.push(await withService(database.url, (s, t) => measureImport('PostgreSQL', s, t, rows)))
        log(`  PostgreSQL import: ${JSON.stringify(imports.at(-1))}`)
      } finally {
        await Promise.all([dropDatabase(name), dropDatabase(`${name}_alone`)])
      }
    }
  }
  return { imports, importMemory, exports }
}

export function transferTable({ imports, importMemory, exports }: Awaited<ReturnType<typeof measureTransfer>>): string {
  const lines = ['| import | rows | seconds | rows/s | worst read during it (ms) |', '|---|---:|---:|---:|---:|']
  for (const f of imports) {
    const reads = f.withReader ? `${f.worstReadMs.toFixed(0)} (${f.reads} reads)` : 'none sent'
    lines.push(
      `| ${f.engine} CSV${f.withReader ? ', another client reading' : ', alone'} | ${f.rows} | ${f.seconds.toFixed(2)} | ${Math.round(f.rowsPerSecond)} | ${reads} |`,
    )
  }
  lines.push('', '| import of long rows | rows | MiB | peak RSS before → after (MiB) |', '|---|---:|---:|---:|')
  for (const f of importMemory) {
    lines.push(
      `| ${f.engine} CSV | ${f.rows} | ${f.mebibytes.toFixed(1)} | ${f.peakRssBeforeMiB.toFixed(0)} → ${f.peakRssMiB.toFixed(0)} |`,
    )
  }
  lines.push(
    '',
    '| export | books | seconds | books/s | MiB | RSS at its start → at its peak, the mapped store file apart (MiB) |',
    '|---|---:|---:|---:|---:|---:|',
  )
  for (const f of exports) {
    lines.push(
      `| ${f.engine} CSV | ${f.books} | ${f.seconds.toFixed(2)} | ${Math.round(f.booksPerSecond)} | ${f.mebibytes.toFixed(1)} | ${f.peakRssBeforeMiB.toFixed(0)} → ${f.peakRssMiB.toFixed(0)} |`,
    )
  }
  return lines.join('\n')
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '100000' },
      export: { type: 'string', default: '1000000' },
      only: { type: 'string', default: 'sqlite,postgres' },
    },
  })
  const log = (line: string) => console.log(line)
  const figures = await measureTransfer({
    rows: Number(values.rows),
    exportBooks: Number(values.export),
    engines: values.only.split(','),
    log,
  })
  log('')
  log(transferTable(figures))
}

/**
 * `npm run bench -- backup [--books=N] [--rate=N]`: `npm run backup` of an SQLite store of a
 * million books (or N) while the service takes 200 new books a second (or N), sent at a steady
 * pace whatever the answers do. It says how long the backup took, whether the copy passes
 * `PRAGMA integrity_check`, whether it holds every book whose creation was answered before the
 * backup began, and the p99 of those writes in the 20 s before the backup and while it ran.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { seedSqlite } from './catalogue.ts'
import { login, startService } from './service.ts'
import { steadyWrites, type Write } from './steady-writes.ts'

const BACKUP = fileURLToPath(new URL('../backup.ts', import.meta.url))
const WARM_UP_MS = 5000
const BEFORE_MS = 20_000
const AFTER_MS = 5000

/** Runs `npm run backup`'s script as an operator would, with each line it prints and when. */
function runBackup(dbUrl: string, target: string): Promise<{ code: number | null; lines: { atMs: number; text: string }[] }> {
  return new Promise((resolve) => {
    const started = performance.now()
    const lines: { atMs: number; text: string }[] = []
    const child = spawn(process.execPath, [BACKUP, target], { env: { PATH: process.env.PATH ?? '', DB_URL: dbUrl }, cwd: tmpdir() })
    const collect = (chunk: Buffer) => {
      for (const text of String(chunk).split('\n').filter(Boolean)) lines.push({ atMs: performance.now() - started, text })
    }
    child.stdout.on('data', collect)
    child.stderr.on('data', collect)
    child.on('close', (code) => resolve({ code, lines }))
  })
}

function p99(writes: Write[]): number {
  const times = writes.map((write) => write.answeredAt! - write.sentAt).sort((a, b) => a - b)
  return times[Math.min(times.length - 1, Math.ceil(0.99 * times.length) - 1)] ?? NaN
}

/** Which of `writes` the copy lacks, by id and title. */
function missingFrom(copyPath: string, writes: Write[]): Write[] {
  const copy = new DatabaseSync(copyPath, { readOnly: true })
  try {
    const found = new Map(
      (
        copy
          .prepare('SELECT id, title FROM books WHERE id IN (SELECT value FROM json_each(?))')
          .all(JSON.stringify(writes.map((write) => write.id))) as {
          id: number
          title: string
        }[]
      ).map((row) => [row.id, row.title]),
    )
    return writes.filter((write) => found.get(write.id!) !== write.title)
  } finally {
    copy.close()
  }
}

function integrity(copyPath: string): { result: string; seconds: number } {
  const started = performance.now()
  const copy = new DatabaseSync(copyPath, { readOnly: true })
  try {
    const rows = copy.prepare('PRAGMA integrity_check').all() as { integrity_check: string }[]
    return { result: rows.map((row) => row.integrity_check).join('; '), seconds: (performance.now() - started) / 1000 }
  } finally {
    copy.close()
  }
}

export async function main(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      books: { type: 'string', default: process.env.BENCH_BACKUP_BOOKS ?? '1000000' },
      rate: { type: 'string', default: process.env.BENCH_BACKUP_RATE ?? '200' },
    },
  })
  const books = Number(values.books)
  const rate = Number(values.rate)
  if (!Number.isSafeInteger(books) || books < 1000 || !Number.isSafeInteger(rate) || rate < 1 || rate > 5000) {
    console.error('usage: npm run bench -- backup [--books=N≥1000] [--rate=N from 1 to 5000]')
    process.exit(2)
  }
  const work = mkdtempSync(join(tmpdir(), 'book-bench-backup-'))
  const dbPath = join(work, 'books.db')
  const copyPath = join(work, 'copy.db')
  const dbUrl = `sqlite:${dbPath}`
  try {
    // Started once so that the service's own migrations create the schema, indexes and triggers.
    await (await startService({ dbUrl })).stop()
    let started = performance.now()
    await seedSqlite(dbPath, books)
    console.log(`${books} books written in ${((performance.now() - started) / 1000).toFixed(0)} s`)

    const service = await startService({ dbUrl })
    let backup: Awaited<ReturnType<typeof runBackup>>
    let writer: ReturnType<typeof steadyWrites>
    let backupStart: number
    let backupEnd: number
    try {
      writer = steadyWrites(service, await login(service), rate, {
        title: (n) => `Written during the backup benchmark ${n}`,
        author: 'Backup Bench',
      })
      await sleep(WARM_UP_MS + BEFORE_MS)
      console.log(`backing up while ${rate} writes a second go on`)
      backupStart = performance.now()
      backup = await runBackup(dbUrl, copyPath)
      backupEnd = performance.now()
      await sleep(AFTER_MS)
      await writer.stop()
    } finally {
      await service.stop()
    }
    for (const line of backup.lines) console.log(`  ${(line.atMs / 1000).toFixed(1)} s: ${line.text}`)

    const answered = writer.writes.filter((write) => write.status !== undefined && write.answeredAt !== undefined)
    const failed = writer.writes.filter((write) => write.status !== 201)
    const before = answered.filter((write) => write.sentAt >= backupStart - BEFORE_MS && write.sentAt < backupStart)
    const during = answered.filter((write) => write.sentAt >= backupStart && write.sentAt <= backupEnd)
    const acknowledgedBefore = answered.filter((write) => write.status === 201 && write.answeredAt! < backupStart)
    started = performance.now()
    const missing = backup.code === 0 ? missingFrom(copyPath, acknowledgedBefore) : acknowledgedBefore
    const check = backup.code === 0 ? integrity(copyPath) : { result: 'no copy', seconds: 0 }
    const rise = p99(during) - p99(before)

    console.log(`\nBackup of ${books} books while ${rate} new books a second are written (\`npm run bench -- backup\`)\n`)
    console.log('| measure | figure | aimed at |\n|---|---|---|')
    console.log(
      `| backup | ${backup.code === 0 ? 'completed' : `failed (exit code ${backup.code})`} in ${((backupEnd - backupStart) / 1000).toFixed(1)} s | completes |`,
    )
    console.log(`| \`PRAGMA integrity_check\` of the copy | ${check.result} (${check.seconds.toFixed(0)} s) | ok |`)
    console.log(
      `| writes answered before the backup began, missing from the copy | ${missing.length} of ${acknowledgedBefore.length} | 0 |`,
    )
    console.log(
      `| p99 of the writes in the 20 s before, during the backup | ${p99(before).toFixed(1)} ms (${before.length} writes), ${p99(during).toFixed(1)} ms (${during.length} writes) | |`,
    )
    console.log(`| rise of the p99 | ${rise.toFixed(1)} ms | 20 ms at most |`)
    const byStatus = Object.entries(Object.groupBy(failed, (write) => String(write.status ?? 'no answer'))).map(
      ([status, writes]) => `${writes!.length} × ${status === '0' ? 'connection error' : status}`,
    )
    console.log(
      `| writes that failed, of all sent | ${failed.length} of ${writer.writes.length}${byStatus.length ? ` (${byStatus.join(', ')})` : ''} | 0 |`,
    )
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

import { DatabaseSync } from 'node:sqlite'
import { parentPort, workerData } from 'node:worker_threads'
import { SqliteBlockSummary } from './block-summaries.ts'
import { INDEX_STEP, IndexSteps, nextStepSize, type IndexStep } from './search-index.ts'
import { setUpWritingConnection } from './writing-connection.ts'

export interface UpkeepData {
  path: string
  busyTimeoutMs: number
  synchronous: 'NORMAL' | 'FULL'
}

/**
 * The page cache of this connection, in KiB: a step of the search indexes changes pages at
 * thousands of places in five indexes, which SQLite's default of 2 MB spilled into the log before
 * the step's commit, and read again (docs/performance.md). The thread ends when idle, and its
 * cache with it.
 */
const CACHE_KIB = 16384

const { path, busyTimeoutMs, synchronous } = workerData as UpkeepData
const db = new DatabaseSync(path, { timeout: busyTimeoutMs })
setUpWritingConnection(db, synchronous)
db.exec(`PRAGMA cache_size = -${CACHE_KIB}`)
// This connection's commits do not copy the log into the database file: its jobs do, around each
// commit (see below).
db.exec('PRAGMA wal_autocheckpoint = 0')
const steps = new IndexSteps(db)
let stepSize = INDEX_STEP
const summary = new SqliteBlockSummary(db)
const jobs = { index: () => steps.run(stepSize), summarise: () => summary.step(), noteDeletions: () => summary.noteDeletions() }

export type UpkeepJob = keyof typeof jobs
export type UpkeepAnswer = { ok: true; value: unknown } | { ok: false; message: string }

function answer(job: UpkeepJob): UpkeepAnswer {
  try {
    // IMMEDIATE takes the write lock first: another process's writes make it wait, not fail.
    db.exec('BEGIN IMMEDIATE')
    const value = jobs[job]()
    db.exec('COMMIT')
    return { ok: true, value }
  } catch (err) {
    try {
      if (db.isTransaction) db.exec('ROLLBACK')
    } catch {
      // The next BEGIN finds out whether the connection recovered.
    }
    return { ok: false, message: (err as Error).message }
  }
}

/** Copies what the log holds into the database file, as far as readers let it; a later copy finishes what this one leaves. */
function copyLog(): void {
  try {
    db.exec('PRAGMA wal_checkpoint(PASSIVE)')
  } catch {
    // The next job copies again.
  }
}

// Each message is one job, in a transaction of its own; the answer is what it did. The log is
// copied twice around it. After the answer, the job's own pages, thousands for a step, while the
// store writes on: copied inside the job, with the two syncs of the disk that a copy makes, they
// held every write for as long again as the step (docs/performance.md). Before the job, while the
// store waits for it, what the store's commits added meanwhile, a few pages: the log can then
// start again from its beginning at the job's first write, where a copy that the store's commits
// outran would leave it to grow.
parentPort!.on('message', (job: UpkeepJob) => {
  copyLog()
  const started = performance.now()
  const done = answer(job)
  if (job === 'index' && done.ok) stepSize = nextStepSize(stepSize, done.value as IndexStep, performance.now() - started)
  parentPort!.postMessage(done)
  copyLog()
})

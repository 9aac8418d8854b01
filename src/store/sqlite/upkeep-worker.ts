import { DatabaseSync } from 'node:sqlite'
import { parentPort, workerData } from 'node:worker_threads'
import { SqliteBlockSummary } from './block-summaries.ts'
import { IndexSteps } from './search-index.ts'
import { setUpWritingConnection } from './writing-connection.ts'

export interface UpkeepData {
  path: string
  busyTimeoutMs: number
  synchronous: 'NORMAL' | 'FULL'
}

const { path, busyTimeoutMs, synchronous } = workerData as UpkeepData
const db = new DatabaseSync(path, { timeout: busyTimeoutMs })
setUpWritingConnection(db, synchronous)
const steps = new IndexSteps(db)
const summary = new SqliteBlockSummary(db)
const jobs = { index: () => steps.run(), summarise: () => summary.step(), noteDeletions: () => summary.noteDeletions() }

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

// Each message is one job, in a transaction of its own; the answer is what it did.
parentPort!.on('message', (job: UpkeepJob) => parentPort!.postMessage(answer(job)))

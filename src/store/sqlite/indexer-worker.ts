import { DatabaseSync } from 'node:sqlite'
import { parentPort, workerData } from 'node:worker_threads'
import { IndexSteps, type IndexStep } from './search-index.ts'

export interface IndexerData {
  path: string
  busyTimeoutMs: number
  synchronous: 'NORMAL' | 'FULL'
}

const { path, busyTimeoutMs, synchronous } = workerData as IndexerData
const db = new DatabaseSync(path, { timeout: busyTimeoutMs })
// Per connection: this one's commits are as durable as the store's own.
db.exec(`PRAGMA synchronous = ${synchronous}`)
const steps = new IndexSteps(db)

// Each message asks for one step, in a transaction of its own; the answer is what it did.
parentPort!.on('message', () => {
  let step: IndexStep
  try {
    // IMMEDIATE takes the write lock first: another process's writes make it wait, not fail.
    db.exec('BEGIN IMMEDIATE')
    step = steps.run()
    db.exec('COMMIT')
  } catch {
    // A step that could not commit moved nothing; one that cannot roll back leaves that to SQLite.
    step = { moved: 0, emptied: false }
    try {
      if (db.isTransaction) db.exec('ROLLBACK')
    } catch {
      // The next BEGIN finds out whether the connection recovered.
    }
  }
  parentPort!.postMessage(step)
})

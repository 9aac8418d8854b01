import { DatabaseSync } from 'node:sqlite'
import { parentPort, workerData } from 'node:worker_threads'
import { ReadDeadlineError, ReaderCore, type ReadRequest } from './reader-core.ts'

/** What the store's readers send a worker: one step of a read at a time. */
export type WorkerMessage =
  | { kind: 'start'; id: number; request: ReadRequest; budgetMs: number }
  | { kind: 'next'; id: number; budgetMs: number }
  | { kind: 'close'; id: number }

/** Why a step failed, in a form that crosses threads. */
export type WorkerFailure = { deadline: true } | { deadline: false; message: string; errcode?: number }

export interface WorkerData {
  path: string
  busyTimeoutMs: number
}

/** What each reader thread is started with: the store's file, and where it learns that a read was ended. */
export interface ReaderThreadData extends WorkerData {
  /**
   * The id of a read that its client ended while one of its steps ran here, written by the
   * store's thread (as `id | 0`): the step's statement stops at its next check (see ReaderCore).
   */
  ended: Int32Array
}

/**
 * The most of the store's file a reader's connection reads through a memory map (SQLite's
 * `mmap_size`), rather than by a system call for each page into a page cache of its own of 2 MB:
 * at a million books, finds that read many books took three quarters to a third of the time
 * (docs/performance.md). The mapped pages are the operating system's cache of the file, which
 * reads by system call fill all the same; mapped, they count in the process's resident memory.
 */
const MAPPED_BYTES = 2 ** 30

/** A connection that only reads, as every reader's is. */
function connect({ path, busyTimeoutMs }: WorkerData): DatabaseSync {
  // The writer keeps the file in WAL mode; readers only need to wait as long as it may hold a lock.
  const db = new DatabaseSync(path, { readOnly: true, timeout: busyTimeoutMs })
  db.exec(`PRAGMA mmap_size = ${MAPPED_BYTES}`)
  return db
}

function failure(err: unknown): WorkerFailure {
  if (err instanceof ReadDeadlineError) return { deadline: true }
  const { errcode } = err as { errcode?: unknown }
  return { deadline: false, message: (err as Error).message, ...(typeof errcode === 'number' ? { errcode } : {}) }
}

/**
 * Connections of whole reads that ended, kept for the next: opening one reads the schema again and
 * loses the statements it prepared, which cost an unpaged list of a hundred books six times the
 * rest of its work. Beyond these, a connection is closed when its read ends.
 */
const IDLE_CONNECTIONS = 4

const settings = workerData as ReaderThreadData
const idle: DatabaseSync[] = []
const core = new ReaderCore(
  {
    pages: connect(settings),
    open: () => idle.pop() ?? connect(settings),
    release: (db) => {
      // One whose read could not end its transaction serves no other.
      if (idle.length < IDLE_CONNECTIONS && !db.isTransaction) idle.push(db)
      else db.close()
    },
    snapshots: true,
  },
  { stopped: (id) => Atomics.load(settings.ended, 0) === (id | 0) },
)

parentPort!.on('message', (message: WorkerMessage) => {
  if (message.kind === 'close') {
    core.close(message.id)
    return
  }
  try {
    const answer =
      message.kind === 'start' ? core.start(message.id, message.request, message.budgetMs) : core.next(message.id, message.budgetMs)
    parentPort!.postMessage({ id: message.id, answer })
  } catch (err) {
    parentPort!.postMessage({ id: message.id, failure: failure(err) })
  }
})

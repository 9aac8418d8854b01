import type { DatabaseSync } from 'node:sqlite'

interface Write {
  run: () => unknown
  resolve: (value: unknown) => void
  reject: (err: unknown) => void
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown }

/**
 * Group commit: the writes asked for during one turn of the event loop run in one
 * transaction, and none is answered before it commits. A commit per write made each write
 * pay for its own WAL append, locks and share of checkpoints; under concurrent load one
 * commit per turn costs a fraction of that, and every acknowledged write is still committed
 * first. Each write fails on its own: SQLite undoes a failed statement and the rest commit.
 */
export class GroupCommit {
  readonly #db: DatabaseSync
  readonly #classify: (err: unknown) => unknown
  #pending: Write[] = []

  constructor(db: DatabaseSync, classify: (err: unknown) => unknown) {
    this.#db = db
    this.#classify = classify
  }

  /** Runs `statement` in the next transaction; settles once that transaction has committed. */
  run<T>(statement: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const first = this.#pending.push({ run: statement, resolve: resolve as (value: unknown) => void, reject }) === 1
      // setImmediate, not a microtask: it runs after every request that this turn's I/O delivered.
      if (first) setImmediate(() => this.flush())
    })
  }

  /** Commits what is pending now. */
  flush(): void {
    const writes = this.#pending
    this.#pending = []
    if (writes.length === 0) return
    const failAll = (err: unknown) => {
      const error = this.#classify(err)
      for (const write of writes) write.reject(error)
    }
    try {
      this.#db.exec('BEGIN IMMEDIATE')
    } catch (err) {
      failAll(err)
      return
    }
    const outcomes: Outcome[] = []
    for (const write of writes) {
      try {
        outcomes.push({ ok: true, value: write.run() })
      } catch (err) {
        // Some errors (a full disk, an I/O error) roll the whole transaction back.
        if (!this.#db.isTransaction) {
          failAll(err)
          return
        }
        outcomes.push({ ok: false, error: this.#classify(err) })
      }
    }
    try {
      this.#db.exec('COMMIT')
    } catch (err) {
      try {
        if (this.#db.isTransaction) this.#db.exec('ROLLBACK')
      } catch {
        // Nothing was acknowledged, and the next BEGIN finds out whether the store recovered.
      }
      failAll(err)
      return
    }
    writes.forEach((write, i) => {
      const outcome = outcomes[i]!
      if (outcome.ok) write.resolve(outcome.value)
      else write.reject(outcome.error)
    })
  }
}

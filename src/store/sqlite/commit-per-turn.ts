import type { DatabaseSync, StatementSync } from 'node:sqlite'

interface Operation {
  write: boolean
  /** Several statements that must read one snapshot, even when nothing else runs in the turn. */
  together: boolean
  run: () => unknown
  resolve: (value: unknown) => void
  reject: (err: unknown) => void
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown }

/**
 * The store operations that requests ask for during one turn of the event loop run in one
 * transaction, and none is answered before it commits.
 *
 * Writes: a commit per write made each pay for its own WAL append, locks and share of
 * checkpoints; one commit per turn costs a fraction of that under concurrent load, and every
 * acknowledged write is still committed first (group commit). Reads: each read on its own is
 * a transaction that takes and drops a WAL read lock, two system calls that cost more than
 * the lookup; a turn's reads share one. A read sees every write acknowledged before it was
 * asked for, as before.
 *
 * Each operation fails on its own: a write runs in a savepoint of its own, so a failure undoes
 * every statement of it and the rest commit. An error that ends the whole transaction (a full
 * disk, an I/O error) fails all of them.
 *
 * The connection is also lent, one caller at a time, to work that spans several turns (a
 * transaction of the caller's own): while it is held, the turns' operations and direct
 * statements wait, so that none of them runs inside it, and they run once it is released.
 */
export class CommitPerTurn {
  readonly #db: DatabaseSync
  readonly #classify: (err: unknown) => Error
  readonly #beginRead: StatementSync
  readonly #beginWrite: StatementSync
  readonly #commit: StatementSync
  readonly #savepoint: StatementSync
  readonly #release: StatementSync
  readonly #undo: StatementSync
  #pending: Operation[] = []
  #writes = false
  /** Settles when the last work that asked for the connection has released it. */
  #lastHolder: Promise<unknown> = Promise.resolve()
  /** Resolves when the connection is released; set while it is held. */
  #held: Promise<void> | undefined

  constructor(db: DatabaseSync, classify: (err: unknown) => Error) {
    this.#db = db
    this.#classify = classify
    this.#beginRead = db.prepare('BEGIN')
    // IMMEDIATE takes the write lock first, so a busy database fails the BEGIN, not a write half-way.
    this.#beginWrite = db.prepare('BEGIN IMMEDIATE')
    this.#commit = db.prepare('COMMIT')
    this.#savepoint = db.prepare('SAVEPOINT write')
    this.#release = db.prepare('RELEASE write')
    this.#undo = db.prepare('ROLLBACK TO write')
  }

  /** Runs `statement` in the turn's transaction; `together`: statements that must read one snapshot. */
  read<T>(statement: () => T, { together = false }: { together?: boolean } = {}): Promise<T> {
    return this.#enqueue(statement, false, together)
  }

  /** Runs `statement`, any number of statements that stand or fall together, in the turn's transaction. */
  write<T>(statement: () => T): Promise<T> {
    this.#writes = true
    return this.#enqueue(statement, true, true)
  }

  /** Runs a statement now, or once the connection is released when it is held. */
  direct<T>(statement: () => T): Promise<T> {
    if (this.#held) return this.#held.then(() => this.direct(statement))
    try {
      return Promise.resolve(statement())
    } catch (err) {
      return Promise.reject(this.#classify(err))
    }
  }

  /**
   * Runs `work` with the connection to itself, after every operation asked for before it and
   * after the work that asked earlier; what is asked for meanwhile waits until it settles.
   */
  hold<T>(work: () => Promise<T>): Promise<T> {
    const turn = this.#lastHolder.then(() => {
      // Operations asked for before the work was are answered before it starts.
      this.flush()
      let release!: () => void
      this.#held = new Promise((resolve) => (release = resolve))
      return work().finally(() => {
        this.#held = undefined
        release()
        if (this.#pending.length > 0) setImmediate(() => this.flush())
      })
    })
    this.#lastHolder = turn.catch(() => {})
    return turn
  }

  /** Settles once every work asked for so far has released the connection. */
  released(): Promise<void> {
    return this.#lastHolder.then(() => {})
  }

  #enqueue<T>(statement: () => T, write: boolean, together: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const first = this.#pending.push({ write, together, run: statement, resolve: resolve as (value: unknown) => void, reject }) === 1
      // setImmediate, not a microtask: it runs after every request that this turn's I/O delivered.
      if (first) setImmediate(() => this.flush())
    })
  }

  /** Runs and commits what is pending now. */
  flush(): void {
    if (this.#held) return
    const operations = this.#pending
    const begin = this.#writes ? this.#beginWrite : this.#beginRead
    this.#pending = []
    this.#writes = false
    if (operations.length === 0) return
    const failAll = (err: unknown) => {
      const error = this.#classify(err)
      for (const operation of operations) operation.reject(error)
    }
    // A lone statement is its own transaction already; a write may be several statements.
    const single = operations.length === 1 && !operations[0]!.together
    const savepoints = operations.length > 1
    try {
      if (!single) begin.run()
    } catch (err) {
      failAll(err)
      return
    }
    const outcomes: Outcome[] = []
    for (const operation of operations) {
      const savepoint = savepoints && operation.write
      try {
        if (savepoint) this.#savepoint.run()
        outcomes.push({ ok: true, value: operation.run() })
        if (savepoint) this.#release.run()
      } catch (err) {
        // A failed read changed nothing; a failed write is undone to its savepoint, or, alone, with its transaction.
        const undone = single || (this.#db.isTransaction && (!operation.write || (savepoint && this.#undoWrite())))
        if (!undone) {
          this.#rollback()
          failAll(err)
          return
        }
        outcomes.push({ ok: false, error: this.#classify(err) })
      }
    }
    try {
      if (!single) this.#commit.run()
    } catch (err) {
      this.#rollback()
      failAll(err)
      return
    }
    operations.forEach((operation, i) => {
      const outcome = outcomes[i]!
      if (outcome.ok) operation.resolve(outcome.value)
      else operation.reject(outcome.error)
    })
  }

  /** Undoes what a failed write did, keeping the turn's transaction; false when that is not possible. */
  #undoWrite(): boolean {
    try {
      this.#undo.run()
      this.#release.run()
      return true
    } catch {
      return false
    }
  }

  #rollback(): void {
    try {
      if (this.#db.isTransaction) this.#db.exec('ROLLBACK')
    } catch {
      // Nothing was answered, and the next BEGIN finds out whether the store recovered.
    }
  }
}

/** An entry of an UnderWay list; `value` is undefined once the entry has been deleted. */
export interface UnderWayEntry<T> {
  value: T | undefined
  newer: UnderWayEntry<T> | undefined
  older: UnderWayEntry<T> | undefined
}

/**
 * What the requests under way hold, newest first: each request adds its entry when it starts and
 * deletes it when it finishes.
 *
 * A list linked through its entries, not a Set. A Set used so is rehashed every few dozen
 * requests, and V8 links each table it drops to the next; once a dropped table reached the old
 * generation, it kept every later table, and the requests in them, alive through young
 * collections: under load, each collection copied every request under way (docs/performance.md
 * has the figures).
 */
export class UnderWay<T> {
  readonly #newest: UnderWayEntry<T> = { value: undefined, newer: undefined, older: undefined }

  add(value: T): UnderWayEntry<T> {
    const entry: UnderWayEntry<T> = { value, newer: this.#newest, older: this.#newest.older }
    if (entry.older) entry.older.newer = entry
    this.#newest.older = entry
    return entry
  }

  /** Deletes an entry; deleting it again does nothing. */
  delete(entry: UnderWayEntry<T>): void {
    if (entry.value === undefined) return
    entry.newer!.older = entry.older
    if (entry.older) entry.older.newer = entry.newer
    entry.newer = entry.older = entry.value = undefined
  }

  /** Every entry, newest first; the one just given may be deleted meanwhile. */
  *entries(): Generator<UnderWayEntry<T>> {
    for (let entry = this.#newest.older; entry;) {
      const { older } = entry
      yield entry
      entry = older
    }
  }
}

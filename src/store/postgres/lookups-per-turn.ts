interface Waiter<T> {
  id: number
  resolve: (row: T | undefined) => void
  reject: (err: unknown) => void
}

/**
 * Lookups by id asked for during one turn of the event loop go to the engine as one query.
 * Against a server, each query costs a round trip and a system call or two on each side,
 * more than the lookup itself; under concurrent load a turn brings many lookups, which then
 * share one. A lookup still sees every write acknowledged before it was asked for: the query
 * starts after it was.
 */
export function lookupsPerTurn<T extends { id: number }>(fetch: (ids: number[]) => Promise<T[]>): (id: number) => Promise<T | undefined> {
  let waiting: Waiter<T>[] = []

  async function flush() {
    const batch = waiting
    waiting = []
    let rows: T[]
    try {
      rows = await fetch([...new Set(batch.map((waiter) => waiter.id))])
    } catch (err) {
      for (const waiter of batch) waiter.reject(err)
      return
    }
    const byId = new Map(rows.map((row) => [row.id, row]))
    // Each caller gets its own copy, so one request cannot change what another sees.
    for (const waiter of batch) {
      const row = byId.get(waiter.id)
      waiter.resolve(row === undefined ? undefined : { ...row })
    }
  }

  return (id) =>
    new Promise<T | undefined>((resolve, reject) => {
      // setImmediate, not a microtask: it runs after every request that this turn's I/O delivered.
      if (waiting.push({ id, resolve, reject }) === 1) setImmediate(() => void flush())
    })
}

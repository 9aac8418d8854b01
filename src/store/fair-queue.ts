/** Items waiting for one resource, taken from each client in turn, so that no client crowds out another. */
export class FairQueue<T> {
  readonly #byClient = new Map<string, T[]>()

  get size(): number {
    let size = 0
    for (const items of this.#byClient.values()) size += items.length
    return size
  }

  push(client: string, item: T): void {
    const waiting = this.#byClient.get(client)
    if (waiting === undefined) this.#byClient.set(client, [item])
    else waiting.push(item)
  }

  /** The item that `shift` would take, left where it is. */
  peek(): T | undefined {
    for (const waiting of this.#byClient.values()) if (waiting.length > 0) return waiting[0]
    return undefined
  }

  /** The oldest item of the client whose turn it is; that client then goes to the back. */
  shift(): T | undefined {
    for (const [client, waiting] of this.#byClient) {
      const item = waiting.shift()
      this.#byClient.delete(client)
      if (waiting.length > 0) this.#byClient.set(client, waiting)
      if (item !== undefined) return item
    }
    return undefined
  }
}

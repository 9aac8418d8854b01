/**
 * Reads `source` part by part until `enough` says the parts seen so far tell what is needed,
 * and hands back those parts and the source whole, the parts read included.
 */
export async function readAhead<T>(
  source: AsyncIterable<T>,
  enough: (part: T) => boolean,
): Promise<{ seen: T[]; whole: AsyncIterable<T> }> {
  const iterator = source[Symbol.asyncIterator]()
  const seen: T[] = []
  for (;;) {
    const next = await iterator.next()
    if (next.done) break
    seen.push(next.value)
    if (enough(next.value)) break
  }
  async function* whole() {
    yield* seen
    for (;;) {
      const next = await iterator.next()
      if (next.done) return
      yield next.value
    }
  }
  return { seen, whole: whole() }
}

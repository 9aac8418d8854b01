import type { BookPages } from './store.ts'

/** A step of a read: the page it gave, and whether it was the last. */
export interface PageStep<P> {
  page: P
  done: boolean
}

/**
 * The pages of a read whose first step has run: iterating asks for each further page, and ending
 * the iteration early, or closing pages that were never iterated, ends the read (`end`), once.
 */
export function readPages<P>(
  { total, changeSeq }: { total: number | undefined; changeSeq?: number | undefined },
  first: PageStep<P>,
  next: () => Promise<PageStep<P>>,
  end: () => Promise<void> | void,
): BookPages<P> {
  let step: PageStep<P> | undefined
  let ended = false
  const close = async () => {
    if (ended) return
    ended = true
    await end()
  }
  return {
    total,
    changeSeq,
    complete: first.done,
    close,
    [Symbol.asyncIterator]: () => ({
      async next(): Promise<IteratorResult<P>> {
        if (ended || step?.done === true) {
          await close()
          return { value: undefined, done: true }
        }
        try {
          step = step === undefined ? first : await next()
        } catch (err) {
          await close()
          throw err
        }
        if (step.done) await close()
        return { value: step.page, done: false }
      },
      async return(): Promise<IteratorResult<P>> {
        await close()
        return { value: undefined, done: true }
      },
    }),
  }
}

import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Change } from '../../src/books/change.ts'
import { ChangeSource, type ChangeBatch, type Subscriber } from '../../src/feed/change-source.ts'

/** A log held in memory, and the word of its commits, as a store gives them. */
function memoryStore() {
  const changes: Change[] = []
  let heard: (() => void) | undefined
  return {
    log: { changesAfter: (seq: number, limit: number) => Promise.resolve(changes.filter((c) => c.seq > seq).slice(0, limit)) },
    signals: {
      listen: (signal: () => void) => {
        heard = signal
        return Promise.resolve(() => Promise.resolve())
      },
    },
    commit(seq: number) {
      changes.push({
        seq,
        bookId: seq,
        kind: 'created',
        actor: 'librarian',
        at: 0,
        book: { id: seq, title: 'Dune', author: 'Frank Herbert', year: 1965 },
      })
      heard?.()
    },
  }
}

function follower(position: number) {
  const batches: ChangeBatch[] = []
  let wake: (() => void) | undefined
  const subscriber: Subscriber = {
    position,
    take(batch) {
      batches.push(batch)
      wake?.()
    },
  }
  const next = () => new Promise<void>((resolve) => (wake = resolve))
  return { subscriber, batches, next }
}

/** The seqs of the first batch that a stream joining `source` at `position` is given. */
async function firstSeqs(source: ChangeSource, position: number): Promise<number[]> {
  const joining = follower(position)
  const taken = joining.next()
  source.subscribe(joining.subscriber)
  await taken
  return joining.batches.flatMap((batch) => batch.seqs)
}

test('a stream that joins an idle source is given the changes committed while nobody listened, without waiting for the poll', async () => {
  const store = memoryStore()
  // A poll that never comes within the test: only the word of a commit, or the join, reads the log.
  const source = new ChangeSource({ ...store, pollMs: 3_600_000, onError: (err) => assert.fail(String(err)) })
  const first = follower(0)
  const firstTaken = first.next()
  source.subscribe(first.subscriber)
  store.commit(1)
  await firstTaken
  source.unsubscribe(first.subscriber)

  // Committed while the source is idle: its word reaches nobody.
  store.commit(2)
  assert.deepEqual(await firstSeqs(source, 1), [2])
  await source.close()
})

test('stops listening for the word of commits once the last stream has been gone a while, and listens again for the next', async () => {
  const store = memoryStore()
  let listens = 0
  let stops = 0
  const signals = {
    listen: async (signal: () => void) => {
      listens++
      await store.signals.listen(signal)
      return () => Promise.resolve(void stops++)
    },
  }
  const source = new ChangeSource({ log: store.log, signals, pollMs: 3_600_000, lingerMs: 50, onError: (err) => assert.fail(String(err)) })
  const first = follower(0)
  source.subscribe(first.subscriber)
  source.unsubscribe(first.subscriber)
  // A stream that comes back within the while finds the source listening still.
  const second = follower(0)
  source.subscribe(second.subscriber)
  await new Promise((resolve) => setTimeout(resolve, 100))
  assert.deepEqual({ listens, stops }, { listens: 1, stops: 0 })

  source.unsubscribe(second.subscriber)
  await new Promise((resolve) => setTimeout(resolve, 100))
  assert.deepEqual({ listens, stops }, { listens: 1, stops: 1 })

  // Committed while nobody listens: the next stream is given it all the same.
  store.commit(1)
  assert.deepEqual(await firstSeqs(source, 0), [1])
  assert.equal(listens, 2)
  await source.close()
  assert.equal(stops, 2)
})

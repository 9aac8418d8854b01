/**
 * Keeps a copy of the whole catalogue in memory, in step with the service: a snapshot first
 * (`GET /books`, which says in `X-Change-Seq` the newest change it reflects), then every change
 * after it, as it happens (`GET /books/changes` as Server-Sent Events). It prints each change as
 * it applies it. Node.js 24, nothing to install:
 *
 *   BOOKS_URL=http://localhost:8080 BOOKS_USERNAME=admin BOOKS_PASSWORD=… node docs/examples/sync.ts
 *
 * or with a key instead of a password: BOOKS_KEY=bk_… node docs/examples/sync.ts
 */
import { setTimeout as sleep } from 'node:timers/promises'

interface Book {
  id: number
  title: string
  author: string
  year: number
}

interface Change {
  seq: number
  book_id: number
  kind: 'created' | 'updated' | 'deleted' | 'restored' | 'purged'
  book: Book | null
}

const base = process.env.BOOKS_URL ?? 'http://localhost:8080'
const books = new Map<number, Book>()

/** What goes in `Authorization`: the key, or a fresh token (a token lasts 15 minutes, so each stream asks anew). */
async function credential(): Promise<string> {
  if (process.env.BOOKS_KEY) return process.env.BOOKS_KEY
  const res = await fetch(`${base}/token`, {
    method: 'POST',
    body: JSON.stringify({ username: process.env.BOOKS_USERNAME ?? 'admin', password: process.env.BOOKS_PASSWORD }),
  })
  if (!res.ok) throw new Error(`POST /token answered ${res.status}`)
  return ((await res.json()) as { data: { token: string } }).data.token
}

/** Replaces the copy with every book as of one change, and answers that change's seq. */
async function snapshot(authorization: string): Promise<number> {
  const res = await fetch(`${base}/books`, { headers: { authorization } })
  if (!res.ok) throw new Error(`GET /books answered ${res.status}`)
  const { data } = (await res.json()) as { data: Book[] }
  books.clear()
  for (const book of data) books.set(book.id, book)
  return Number(res.headers.get('x-change-seq'))
}

/** Each change carries the book as it left it: set it, or take it away. */
function apply(change: Change): void {
  if (change.kind === 'deleted' || change.kind === 'purged') books.delete(change.book_id)
  else books.set(change.book_id, change.book!)
  console.log(`change ${change.seq}: ${change.kind} book ${change.book_id}; the copy holds ${books.size}`)
}

/**
 * Applies every change after `seq` until the stream ends (the token expired, or the instance is
 * shutting down), and answers the seq of the last change applied.
 */
async function follow(authorization: string, seq: number): Promise<number> {
  const res = await fetch(`${base}/books/changes`, {
    headers: { authorization, accept: 'text/event-stream', 'last-event-id': String(seq) },
  })
  if (res.status !== 200 || res.body === null) throw new Error(`GET /books/changes answered ${res.status}`)
  let pending = ''
  for await (const text of res.body.pipeThrough(new TextDecoderStream())) {
    pending += text
    // Events end with a blank line; a line starting with ':' is a comment that says the stream is alive.
    for (let end = pending.indexOf('\n\n'); end !== -1; end = pending.indexOf('\n\n')) {
      const event = pending.slice(0, end)
      pending = pending.slice(end + 2)
      const data = /^data: (.*)$/m.exec(event)?.[1]
      if (/^event: change$/m.test(event) && data !== undefined) {
        const change = JSON.parse(data) as Change
        apply(change)
        seq = change.seq
      }
    }
  }
  return seq
}

let seq = await snapshot(await credential())
console.log(`snapshot as of change ${seq}: the copy holds ${books.size}`)
for (;;) {
  try {
    seq = await follow(await credential(), seq)
  } catch (err) {
    console.error(`following the changes failed: ${(err as Error).message}`)
  }
  // The stream ended or failed: resume after the last change applied, with a fresh token.
  await sleep(1000)
}

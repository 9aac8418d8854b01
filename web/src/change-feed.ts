import type { Api, Book } from './api.ts'

/** A change of a book, as the service gives it (docs/api.md#following-changes). */
export interface BookChange {
  seq: number
  book_id: number
  kind: 'created' | 'updated' | 'deleted' | 'restored' | 'purged'
  /** Who made it: a username, or `key:` and a key's name. */
  actor: string
  /** The book as the change left it; for `deleted` as it was, for `purged` none. */
  book: Book | null
}

/** How long to wait before connecting again, unless the service's `retry:` line says otherwise. */
const RECONNECT_MS = 1000
/** The longest wait between attempts while the service cannot be reached. */
const LONGEST_WAIT_MS = 15_000

/** One event of a stream: its fields, or `retry`, or a comment, which says nothing. */
interface StreamEvent {
  event?: string
  data?: string
  retry?: string
}

/** The events of a stream of Server-Sent Events, as they come. */
async function* events(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent> {
  let pending = ''
  const decoder = new TextDecoder()
  const reader = body.getReader()
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      pending += decoder.decode(read.value, { stream: true })
      for (let end = pending.indexOf('\n\n'); end !== -1; end = pending.indexOf('\n\n')) {
        const event: StreamEvent = {}
        for (const line of pending.slice(0, end).split('\n')) {
          const match = /^(event|data|retry): ?(.*)$/.exec(line)
          if (match) event[match[1] as keyof StreamEvent] = match[2]
        }
        pending = pending.slice(end + 2)
        yield event
      }
    }
  } finally {
    reader.releaseLock()
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    signal.addEventListener('abort', () => {
      clearTimeout(timer)
      resolve()
    })
  })
}

/**
 * Calls `changed` with every change of every book after `seq`, in order, as it happens, until
 * `signal` aborts. When the stream ends or breaks (the service restarts, the network drops, the
 * token expires or is refused), it connects again, after what the service's `retry:` line asks or
 * longer while it keeps failing, with the session's token of the moment, and resumes after the
 * last change given, so that none is missed nor given twice.
 */
export function followChanges(api: Api, seq: number, changed: (change: BookChange) => void, signal: AbortSignal): void {
  let after = seq
  let wait = RECONNECT_MS
  void (async () => {
    while (!signal.aborted) {
      try {
        const response = await api.changeStream(after, signal)
        wait = RECONNECT_MS
        for await (const event of events(response.body!)) {
          if (event.retry !== undefined && /^\d+$/.test(event.retry)) wait = Number(event.retry)
          if (event.event !== 'change' || event.data === undefined) continue
          const change = JSON.parse(event.data) as BookChange
          after = change.seq
          changed(change)
        }
      } catch {
        if (signal.aborted) return
        wait = Math.min(wait * 2, LONGEST_WAIT_MS)
      }
      await sleep(wait, signal)
    }
  })()
}

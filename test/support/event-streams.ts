import { request, type IncomingHttpHeaders } from 'node:http'

/** One thing a stream of Server-Sent Events said: an event (with its fields), a `retry:` line, or a comment. */
export interface Received {
  id?: string
  event?: string
  data?: string
  retry?: string
  comment?: string
}

export interface OpenStream {
  status: number
  headers: IncomingHttpHeaders
  /** Everything said so far, in order. */
  received: Received[]
  /** The changes of the events said so far, parsed. */
  changes(): { seq: number; book_id: number; kind: string; book: unknown }[]
  /** The first thing said from `from` on that `matches`, once it is said; rejects after `timeoutMs`. */
  next(matches: (item: Received) => boolean, timeoutMs?: number, from?: number): Promise<Received>
  /** Resolves when the stream is over: `end` when the server ended it, `cut` when the connection broke first. */
  over: Promise<'end' | 'cut'>
  /** The body of an answer that is not a stream. */
  text(): string
  close(): void
}

function parse(block: string): Received {
  const item: Received = {}
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) item.comment = line.slice(1).trim()
    else {
      const colon = line.indexOf(':')
      const field = line.slice(0, colon) as keyof Received
      item[field] = line.slice(colon + 1).replace(/^ /, '')
    }
  }
  return item
}

/** Opens `path` on the service at `port` asking for Server-Sent Events, on a connection of its own. */
export function openStream(port: number, path: string, headers: Record<string, string> = {}): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      const received: Received[] = []
      const waiters = new Set<() => void>()
      let pending = ''
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        // A stream's events are parsed as they come; only an answer that is not a stream is kept whole.
        if (res.statusCode !== 200) body += chunk
        pending += chunk
        let end: number
        while ((end = pending.indexOf('\n\n')) !== -1) {
          received.push(parse(pending.slice(0, end)))
          pending = pending.slice(end + 2)
        }
        for (const wake of waiters) wake()
      })
      const over = new Promise<'end' | 'cut'>((settle) => {
        res.on('end', () => settle('end'))
        res.on('close', () => settle(res.complete ? 'end' : 'cut'))
        res.on('error', () => settle('cut'))
      })
      void over.then(() => {
        for (const wake of waiters) wake()
      })
      let finished = false
      void over.then(() => (finished = true))
      resolve({
        status: res.statusCode!,
        headers: res.headers,
        received,
        changes: () => received.filter((item) => item.event === 'change').map((item) => JSON.parse(item.data!)),
        next: (matches, timeoutMs = 10_000, from = 0) =>
          new Promise((found, fail) => {
            let scanned = from
            const check = () => {
              let item: Received | undefined
              for (; item === undefined && scanned < received.length; scanned++) if (matches(received[scanned]!)) item = received[scanned]
              if (item !== undefined) {
                done()
                found(item)
              } else if (finished) {
                done()
                fail(new Error(`the stream ended without it; it said ${JSON.stringify(received.slice(-20))}`))
              }
            }
            const timer = setTimeout(() => {
              done()
              fail(new Error(`not said within ${timeoutMs} ms; the last it said: ${JSON.stringify(received.slice(-20))}`))
            }, timeoutMs)
            const done = () => {
              clearTimeout(timer)
              waiters.delete(check)
            }
            waiters.add(check)
            check()
          }),
        over,
        text: () => body,
        close: () => req.destroy(),
      })
    })
    req.on('error', reject)
    req.end()
  })
}

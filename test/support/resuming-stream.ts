import { request, type ClientRequest } from 'node:http'

/** The wait before connecting again until the server names one with `retry:`. */
const DEFAULT_RETRY_MS = 1000
/** The longest wait before connecting again, whatever the server asked for. */
const MAX_RETRY_MS = 3000

/** Where to open the stream: an HTTP server on a Unix socket (a proxy's), and the request to send it. */
export interface StreamTarget {
  socketPath: string
  path: string
  headers: Record<string, string>
}

/** An event the stream dispatched: its id (the last one the stream named), type and data. */
export interface StreamEvent {
  id: string | undefined
  type: string
  data: string
}

export interface ResumingStream {
  /** Connections answered `200`, the first one included. */
  readonly connections: number
  /** Connections that broke before their stream ended (a reset, or an answer cut short). */
  readonly cuts: number
  /** The answers other than `200`, as `status body`; each was followed by a new connection. */
  readonly refusals: string[]
  /** Resolves once the first connection is answered `200`. */
  readonly opened: Promise<void>
  /** Resolves once an event with an id of `seq` or more was dispatched; rejects after `timeoutMs` or at `close`. */
  reached(seq: number, timeoutMs: number): Promise<void>
  /** Ends the stream for good: it connects no more. */
  close(): void
}

/**
 * A stream of Server-Sent Events followed as a browser's EventSource follows one: whenever a
 * connection ends, breaks or is refused, it connects again after the `retry:` delay the server
 * last sent (bounded), with `Last-Event-ID` set to the last id received. Only whole events count:
 * an event cut short by the end of a connection is dropped, and its id is not kept.
 */
export function resumingStream(target: StreamTarget, onEvent: (event: StreamEvent) => void): ResumingStream {
  let lastEventId: string | undefined
  let retryMs = DEFAULT_RETRY_MS
  let closed = false
  let current: ClientRequest | undefined
  let timer: NodeJS.Timeout | undefined
  const opened = Promise.withResolvers<void>()
  const waiters = new Set<{ check: () => void; fail: (err: Error) => void }>()
  const stream = { connections: 0, cuts: 0, refusals: [] as string[] }

  const dispatch = (block: string) => {
    let type = ''
    const data: string[] = []
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue
      const colon = line.indexOf(':')
      const field = colon === -1 ? line : line.slice(0, colon)
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '')
      if (field === 'id' && !value.includes('\0')) lastEventId = value
      else if (field === 'event') type = value
      else if (field === 'data') data.push(value)
      else if (field === 'retry' && /^\d+$/.test(value)) retryMs = Number(value)
    }
    if (data.length === 0) return
    onEvent({ id: lastEventId, type: type || 'message', data: data.join('\n') })
    for (const waiter of waiters) waiter.check()
  }

  const connect = () => {
    if (closed) return
    let done = false
    /** The connection is over, however: the next one is made after the delay. */
    const over = (cut: boolean) => {
      if (done || closed) return
      done = true
      if (cut) stream.cuts++
      timer = setTimeout(connect, Math.min(retryMs, MAX_RETRY_MS))
    }
    const headers = { accept: 'text/event-stream', ...target.headers, ...(lastEventId !== undefined && { 'last-event-id': lastEventId }) }
    current = request({ socketPath: target.socketPath, path: target.path, agent: false, headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('error', () => over(true))
      if (res.statusCode !== 200) {
        res.on('data', (chunk: string) => (text += chunk))
        res.on('end', () => {
          stream.refusals.push(`${res.statusCode} ${text}`)
          over(false)
        })
        return
      }
      stream.connections++
      opened.resolve()
      res.on('data', (chunk: string) => {
        text += chunk
        let end: number
        while ((end = text.indexOf('\n\n')) !== -1) {
          dispatch(text.slice(0, end))
          text = text.slice(end + 2)
        }
      })
      res.on('close', () => over(!res.complete))
    })
    current.on('error', () => over(true))
    current.end()
  }

  connect()
  return {
    get connections() {
      return stream.connections
    },
    get cuts() {
      return stream.cuts
    },
    refusals: stream.refusals,
    opened: opened.promise,
    reached: (seq, timeoutMs) =>
      new Promise<void>((resolve, reject) => {
        const waiter = {
          check: () => {
            if (lastEventId === undefined || Number(lastEventId) < seq) return
            settle()
            resolve()
          },
          fail: (err: Error) => {
            settle()
            reject(err)
          },
        }
        const deadline = setTimeout(
          () => waiter.fail(new Error(`no event with an id of ${seq} or more within ${timeoutMs} ms; the last id was ${lastEventId}`)),
          timeoutMs,
        )
        const settle = () => {
          clearTimeout(deadline)
          waiters.delete(waiter)
        }
        waiters.add(waiter)
        waiter.check()
      }),
    close() {
      closed = true
      clearTimeout(timer)
      current?.destroy()
      for (const waiter of waiters) waiter.fail(new Error('the stream was closed'))
    },
  }
}

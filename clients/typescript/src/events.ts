/** Server-Sent Events read from a response body, as the HTML standard parses them (docs/api.md#following-changes). */

export interface ServerSentEvent {
  /** The `id:` of the event, or of the last event that had one. */
  id: string | undefined
  /** `message` unless the event named another. */
  event: string
  data: string
}

export interface EventStreamItem {
  event?: ServerSentEvent
  /** A `retry:` line: how many milliseconds to wait before reconnecting. */
  retry?: number
}

/** The events and `retry:` lines of `body`, in order; comments are skipped. */
export async function* serverSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<EventStreamItem, void, undefined> {
  const reader = body.getReader()
  // It takes off a byte-order mark at the start, as the standard does.
  const decoder = new TextDecoder()
  let buffered = ''
  let lastId: string | undefined
  let event = ''
  let data: string[] = []
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      buffered += decoder.decode(value, { stream: true })
      for (let end = buffered.search(/\r\n|\r|\n/); end !== -1; end = buffered.search(/\r\n|\r|\n/)) {
        // A CR at the very end may be the first half of a CRLF still to come.
        if (buffered[end] === '\r' && end === buffered.length - 1) break
        const line = buffered.slice(0, end)
        buffered = buffered.slice(end + (buffered.startsWith('\r\n', end) ? 2 : 1))
        if (line === '') {
          if (data.length > 0) yield { event: { id: lastId, event: event || 'message', data: data.join('\n') } }
          event = ''
          data = []
          continue
        }
        if (line.startsWith(':')) continue
        const colon = line.indexOf(':')
        const field = colon === -1 ? line : line.slice(0, colon)
        const text = colon === -1 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1))
        if (field === 'data') data.push(text)
        else if (field === 'event') event = text
        else if (field === 'id' && !text.includes('\0')) lastId = text
        else if (field === 'retry' && /^\d+$/.test(text)) yield { retry: Number(text) }
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined)
  }
}

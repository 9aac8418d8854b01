/**
 * The client's fetch for the command, on node:http and node:https. Node.js's own fetch loads its
 * HTTP client (undici) on a program's first request, which costs a command more CPU time than
 * all the rest of what `find` does (docs/client.md#figures); node:http is loaded already.
 */
import type { IncomingMessage } from 'node:http'
import type { ReadableStream as NodeReadableStream } from 'node:stream/web'
import type { Fetch, FetchResponse } from '../index.ts'

/** node:stream's Readable, for the commands that stream a body: loaded with every export of node:stream. */
const readable = () => process.getBuiltinModule('node:stream').Readable

function responseOf(url: string, answer: IncomingMessage): FetchResponse {
  let body: ReadableStream<Uint8Array> | undefined
  const status = answer.statusCode ?? 0
  return {
    ok: status >= 200 && status < 300,
    status,
    statusText: answer.statusMessage ?? '',
    url,
    headers: {
      get(name) {
        const value = answer.headers[name.toLowerCase()]
        return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value
      },
    },
    // Made only when read as a stream: an export, the change feed.
    get body() {
      return (body ??= readable().toWeb(answer) as ReadableStream<Uint8Array>)
    },
    async json() {
      const chunks: Buffer[] = []
      for await (const chunk of answer) chunks.push(chunk as Buffer)
      return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown
    },
  }
}

// Taken as the modules themselves: imported, node:http reads every export it has, and one of
// them (its WebSocket) loads undici after all. node:https only for an https address: it loads TLS
// and all of node:crypto, which a command to a plain http service would start for nothing.
export const httpFetch: Fetch = (url, { method, headers, body, signal }) =>
  new Promise((resolve, reject) => {
    const target = new URL(url)
    const send =
      target.protocol === 'https:' ? process.getBuiltinModule('node:https').request : process.getBuiltinModule('node:http').request
    const sent = send(target, { method, headers, signal }, (answer) => resolve(responseOf(url, answer)))
    sent.on('error', reject)
    if (body === undefined || typeof body === 'string') return sent.end(body)
    const stream = body instanceof Blob ? body.stream() : body
    readable()
      .fromWeb(stream as NodeReadableStream<Uint8Array>)
      .on('error', (err) => sent.destroy(err))
      .pipe(sent)
  })

/**
 * Sends a file's body and reports how much of it has gone. Node.js's fetch takes a stream as a
 * body and reads it as fast as the connection takes it, so counting what it reads is counting
 * what is sent. Browsers send a stream only over HTTP/2, and report an upload's progress only to
 * XMLHttpRequest, which a browser therefore uses when progress is asked for.
 */

import type { Fetch, FetchInit, FetchResponse } from './fetch.ts'

/** A body to send: what is not a stream can be sent again, so a request with it can be retried. */
export type UploadBody = Blob | ArrayBuffer | Uint8Array<ArrayBuffer> | string | ReadableStream<Uint8Array>

export interface Progress {
  /** Bytes of the body sent so far. */
  sent: number
  /** The body's size, when it is known (not for a stream). */
  total: number | undefined
}

interface UploadRequest {
  method: string
  headers: Record<string, string>
  body: UploadBody
  onProgress: ((progress: Progress) => void) | undefined
  signal: AbortSignal | undefined
}

const SLICE_BYTES = 64 * 1024

function asBlob(body: Exclude<UploadBody, ReadableStream>): Blob {
  return body instanceof Blob ? body : new Blob([body])
}

/**
 * `body` as a stream that tells `onProgress` of every chunk read from it, until `signal` stops the
 * request. One stream that reads the source itself, not the source piped through a
 * TransformStream: when such a pipe ends, Node.js makes an error it never throws (the writer
 * released), and the first one makes a V8 context of its own, 10 ms of an import's CPU time.
 */
function counted(body: UploadBody, onProgress: (progress: Progress) => void, signal: AbortSignal | undefined): ReadableStream<Uint8Array> {
  const source = (body instanceof ReadableStream ? body : asBlob(body).stream()).getReader()
  const total = body instanceof ReadableStream ? undefined : asBlob(body).size
  let sent = 0
  onProgress({ sent, total })
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // fetch may go on reading a body it will not send: a request stopped reads no more of its file.
        if (signal?.aborted) {
          controller.error(signal.reason)
          return source.cancel(signal.reason)
        }
        const { done, value: chunk } = await source.read()
        if (done) return controller.close()
        // A blob in memory may come as one chunk: in slices, the progress moves as the connection takes them.
        for (let start = 0; start < chunk.byteLength; start += SLICE_BYTES) {
          const slice = chunk.subarray(start, start + SLICE_BYTES)
          controller.enqueue(slice)
          sent += slice.byteLength
          onProgress({ sent, total })
        }
      },
      cancel: (reason) => source.cancel(reason),
    },
    // Read when fetch asks, not ahead: what is counted is what has gone to the connection.
    { highWaterMark: 0 },
  )
}

export function sendWithProgress(fetcher: Fetch, url: string, request: UploadRequest): Promise<FetchResponse> {
  const { method, headers, body, onProgress, signal } = request
  if (onProgress !== undefined && typeof XMLHttpRequest !== 'undefined' && !(body instanceof ReadableStream)) {
    return sendWithXhr(url, { ...request, body: asBlob(body), onProgress })
  }
  const sent = onProgress === undefined ? body : counted(body, onProgress, signal)
  // A stream is sent as it is read ("half duplex"): fetch needs to be told so. A file's stream
  // keeps the file's length, as curl sends it, rather than going in chunks of unknown length.
  const init: FetchInit = { method, headers: { ...headers }, body: sent instanceof ReadableStream ? sent : asBlob(sent), signal }
  if (sent instanceof ReadableStream) init.duplex = 'half'
  if (sent !== body && !(body instanceof ReadableStream)) init.headers['content-length'] = String(asBlob(body).size)
  return fetcher(url, init)
}

/** Answers the response as fetch would, from what XMLHttpRequest received. */
function sendWithXhr(url: string, request: UploadRequest & { body: Blob; onProgress: (progress: Progress) => void }): Promise<Response> {
  const { method, headers, body, onProgress, signal } = request
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error)
    const xhr = new XMLHttpRequest()
    xhr.open(method, url)
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value)
    onProgress({ sent: 0, total: body.size })
    xhr.upload.addEventListener('progress', (event) => onProgress({ sent: event.loaded, total: body.size }))
    xhr.upload.addEventListener('load', () => onProgress({ sent: body.size, total: body.size }))
    const abort = () => xhr.abort()
    signal?.addEventListener('abort', abort, { once: true })
    xhr.addEventListener('loadend', () => signal?.removeEventListener('abort', abort))
    xhr.addEventListener('abort', () => reject(signal?.reason as Error))
    xhr.addEventListener('error', () => reject(new TypeError('Failed to send the file')))
    xhr.addEventListener('load', () => {
      const received = new Headers()
      for (const line of xhr.getAllResponseHeaders().trim().split(/\r?\n/)) {
        const colon = line.indexOf(':')
        if (colon > 0) received.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim())
      }
      resolve(new Response(xhr.responseText, { status: xhr.status, statusText: xhr.statusText, headers: received }))
    })
    xhr.send(body)
  })
}

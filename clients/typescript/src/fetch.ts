/**
 * The part of fetch the client uses, as a type: the global fetch is one, and so is anything that
 * answers these members, such as the command's own on node:http (src/cli/http-fetch.ts).
 */

export interface FetchInit {
  method: string
  headers: Record<string, string>
  body?: string | Blob | ReadableStream<Uint8Array> | undefined
  signal?: AbortSignal | undefined
  cache?: RequestCache | undefined
  /** Set for a stream: it is sent as it is read. */
  duplex?: 'half' | undefined
}

/** The headers of an answer: read by name, in any case. */
export interface FetchHeaders {
  get(name: string): string | null
}

export interface FetchResponse {
  readonly ok: boolean
  readonly status: number
  readonly statusText: string
  readonly url: string
  readonly headers: FetchHeaders
  readonly body: ReadableStream<Uint8Array> | null
  json(): Promise<unknown>
}

export type Fetch = (url: string, init: FetchInit) => Promise<FetchResponse>

import { connect } from 'node:net'

export interface RawResponse {
  status: number
  /** Header names in lower case; repeated headers joined with ", ". */
  headers: Record<string, string>
  body: Buffer
}

function decodeChunked(raw: Buffer): Buffer {
  const parts: Buffer[] = []
  let at = 0
  for (;;) {
    const lineEnd = raw.indexOf('\r\n', at)
    if (lineEnd < 0) throw new Error('truncated chunked body')
    const size = parseInt(raw.subarray(at, lineEnd).toString('latin1'), 16)
    if (Number.isNaN(size)) throw new Error('bad chunk size')
    if (size === 0) return Buffer.concat(parts)
    parts.push(raw.subarray(lineEnd + 2, lineEnd + 2 + size))
    at = lineEnd + 2 + size + 2
  }
}

/** Parses one HTTP/1.1 response; `headOnly` for answers to HEAD, which carry no body. */
export function parseResponse(raw: Buffer, headOnly = false): RawResponse {
  const headEnd = raw.indexOf('\r\n\r\n')
  if (headEnd < 0) throw new Error(`no complete response head in ${JSON.stringify(raw.toString('latin1').slice(0, 200))}`)
  const [statusLine, ...lines] = raw.subarray(0, headEnd).toString('latin1').split('\r\n')
  const match = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine ?? '')
  if (!match) throw new Error(`bad status line ${JSON.stringify(statusLine)}`)
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    const name = line.slice(0, colon).toLowerCase()
    const value = line.slice(colon + 1).trim()
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`
  }
  let body = raw.subarray(headEnd + 4)
  if (headOnly) body = Buffer.alloc(0)
  else if (headers['transfer-encoding'] === 'chunked') body = decodeChunked(body)
  else if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']))
  return { status: Number(match[1]), headers, body }
}

/**
 * Sends `request` as it is on a fresh connection and collects what comes back until the
 * server closes; the request must say `Connection: close`. Rejects when nothing complete
 * arrives within `timeoutMs`.
 */
export function sendRaw(port: number, request: Buffer | string, timeoutMs = 5000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const socket = connect({ port, host: '127.0.0.1' })
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`no answer within ${timeoutMs} ms`))
    }, timeoutMs)
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    // The server may close while the request is still being written; what it answered counts.
    socket.on('error', () => {})
    socket.on('close', () => {
      clearTimeout(timer)
      resolve(Buffer.concat(chunks))
    })
    // Not end(): Node treats a client that half-closes before its answer as gone and drops the request.
    socket.write(request)
  })
}

import type { ImportFormat } from './book-import.ts'

const BY_MEDIA_TYPE: Record<string, ImportFormat> = {
  'application/json': 'json',
  'application/x-ndjson': 'ndjson',
  'application/ndjson': 'ndjson',
  'application/jsonl': 'ndjson',
  'text/csv': 'csv',
}

/**
 * The format a Content-Type names: `sniff` when the client named none, or sent what
 * `curl --data-binary` sends by default, so the body's first character decides; undefined
 * for any other type, or a charset other than UTF-8.
 */
export function formatOfContentType(header: string | undefined): ImportFormat | 'sniff' | undefined {
  if (header === undefined || header.trim() === '') return 'sniff'
  const [type = '', ...parameters] = header.split(';').map((part) => part.trim().toLowerCase())
  const charset = parameters
    .find((parameter) => parameter.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/"/g, '')
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') return undefined
  if (type === 'application/x-www-form-urlencoded') return 'sniff'
  return BY_MEDIA_TYPE[type]
}

/**
 * Reads the body up to its first character that is not a byte-order mark or white space: `[`
 * starts a JSON array, `{` an NDJSON line, anything else a CSV header. The body is handed
 * back whole, the bytes read included.
 */
export async function sniffFormat(source: AsyncIterable<Uint8Array>): Promise<{ format: ImportFormat; body: AsyncIterable<Uint8Array> }> {
  const iterator = source[Symbol.asyncIterator]()
  const seen: Uint8Array[] = []
  let format: ImportFormat = 'csv'
  for (;;) {
    const next = await iterator.next()
    if (next.done) break
    seen.push(next.value)
    const first = firstSignificantByte(next.value, seen.length === 1)
    if (first === undefined) continue
    format = first === 0x5b ? 'json' : first === 0x7b ? 'ndjson' : 'csv'
    break
  }
  async function* body() {
    yield* seen
    for (;;) {
      const next = await iterator.next()
      if (next.done) return
      yield next.value
    }
  }
  return { format, body: body() }
}

const WHITE_SPACE = new Set([0x20, 0x09, 0x0a, 0x0d])
const BOM = [0xef, 0xbb, 0xbf]

function firstSignificantByte(chunk: Uint8Array, atStart: boolean): number | undefined {
  let at = atStart && BOM.every((byte, i) => chunk[i] === byte) ? BOM.length : 0
  while (at < chunk.length && WHITE_SPACE.has(chunk[at]!)) at++
  return chunk[at]
}

import { encodingOfCharset, type TextEncoding } from './body-text.ts'
import { readAhead } from './read-ahead.ts'

/** The formats an import body can be in: TSV is CSV's tab-separated sibling. */
export type ImportFormat = 'json' | 'ndjson' | 'csv' | 'tsv'

const BY_MEDIA_TYPE: Record<string, ImportFormat> = {
  'application/json': 'json',
  'application/x-ndjson': 'ndjson',
  'application/ndjson': 'ndjson',
  'application/jsonl': 'ndjson',
  'text/csv': 'csv',
  'text/tab-separated-values': 'tsv',
}

/** What a Content-Type says of an import body. */
export type DeclaredBody =
  { format: ImportFormat | 'sniff'; encoding: TextEncoding } | { unsupported: 'type' } | { unsupported: 'charset'; charset: string }

/**
 * The format and encoding a Content-Type names. The format is `sniff` when the client named
 * none, or sent what `curl --data-binary` sends by default, so the body's first character
 * decides. Without a charset the body is UTF-8, unless a byte-order mark says otherwise.
 */
export function declaredBody(header: string | undefined): DeclaredBody {
  if (header === undefined || header.trim() === '') return { format: 'sniff', encoding: 'utf-8' }
  const [type = '', ...parameters] = header.split(';').map((part) => part.trim().toLowerCase())
  const format = type === 'application/x-www-form-urlencoded' ? 'sniff' : BY_MEDIA_TYPE[type]
  if (format === undefined) return { unsupported: 'type' }
  const charset = parameters
    .find((parameter) => parameter.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/"/g, '')
  if (charset === undefined) return { format, encoding: 'utf-8' }
  const encoding = encodingOfCharset(charset)
  return encoding === undefined ? { unsupported: 'charset', charset } : { format, encoding }
}

/**
 * Reads the text up to its first character that is not white space: `[` starts a JSON array,
 * `{` an NDJSON line, anything else a CSV header (whose delimiter the header itself decides).
 * The text is handed back whole, the part read included.
 */
export async function sniffFormat(text: AsyncIterable<string>): Promise<{ format: ImportFormat; text: AsyncIterable<string> }> {
  const { seen, whole } = await readAhead(text, (part) => part.trimStart() !== '')
  const first = seen.join('').trimStart()[0]
  return { format: first === '[' ? 'json' : first === '{' ? 'ndjson' : 'csv', text: whole }
}

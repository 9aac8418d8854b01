import { ImportFormatError } from './import-errors.ts'

/** The encodings an import is read in, by the names TextDecoder gives them. */
export type TextEncoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252'

const READABLE = new Set<string>(['utf-8', 'utf-16le', 'utf-16be', 'windows-1252'])

/**
 * The encoding a `charset` names, by the labels of the WHATWG Encoding Standard that TextDecoder
 * knows (`latin1` and `iso-8859-1` are labels of windows-1252 there, `utf-16` of UTF-16LE);
 * undefined for a charset the import cannot read.
 */
export function encodingOfCharset(charset: string): TextEncoding | undefined {
  let encoding: string
  try {
    encoding = new TextDecoder(charset).encoding
  } catch {
    return undefined
  }
  return READABLE.has(encoding) ? (encoding as TextEncoding) : undefined
}

const NAMES: Record<TextEncoding, string> = { 'utf-8': 'UTF-8', 'utf-16le': 'UTF-16', 'utf-16be': 'UTF-16', 'windows-1252': 'Windows-1252' }

/** The encoding a byte-order mark at the start of `head` names. */
function encodingOfMark(head: Uint8Array): TextEncoding | undefined {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return 'utf-8'
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le'
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be'
  return undefined
}

/** The first chunks of `source` joined until they hold the three bytes a byte-order mark can take, and what follows. */
async function headOf(source: AsyncIterator<Uint8Array>): Promise<{ head: Uint8Array; done: boolean }> {
  const parts: Uint8Array[] = []
  let length = 0
  while (length < 3) {
    const next = await source.next()
    if (next.done) return { head: Buffer.concat(parts), done: true }
    parts.push(next.value)
    length += next.value.byteLength
  }
  return { head: parts.length === 1 ? parts[0]! : Buffer.concat(parts), done: false }
}

/**
 * The body as text, chunk by chunk, in the encoding its `charset` declared. A byte-order mark
 * decides over the declaration, as the Encoding Standard's decode does, and is dropped; UTF-16
 * must start with one, since nothing else tells its two byte orders apart. Bytes that are not
 * valid in the encoding stop the import: a replacement character in their place would be stored
 * as if the client had sent it. Windows-1252 gives every byte a character, so it never fails.
 */
export async function* bodyText(source: AsyncIterable<Uint8Array>, declared: TextEncoding = 'utf-8'): AsyncGenerator<string> {
  const iterator = source[Symbol.asyncIterator]()
  const { head, done } = await headOf(iterator)
  const mark = encodingOfMark(head)
  if (mark === undefined && declared.startsWith('utf-16') && head.byteLength > 0) {
    throw new ImportFormatError('UTF-16 text must start with a byte-order mark, which tells its byte order')
  }
  const encoding = mark ?? declared
  const decoder = new TextDecoder(encoding, { fatal: true, ignoreBOM: false })
  let lines = 1
  const decode = (bytes: Uint8Array | undefined) => {
    try {
      return bytes === undefined ? decoder.decode() : decoder.decode(bytes, { stream: true })
    } catch {
      // The line of the first bad byte, for a person to find it; decoding again without
      // `fatal` marks it with the first replacement character.
      const lenient = new TextDecoder(encoding).decode(bytes ?? new Uint8Array())
      const before = lenient.slice(0, Math.max(0, lenient.indexOf('\uFFFD')))
      throw new ImportFormatError(`The body is not valid ${NAMES[encoding]} text (line ${lines + countLines(before)})`)
    }
  }
  const emit = (text: string) => {
    lines += countLines(text)
    return text
  }
  if (head.byteLength > 0) {
    const text = decode(head)
    if (text !== '') yield emit(text)
  }
  if (!done) {
    for (;;) {
      const next = await iterator.next()
      if (next.done) break
      const text = decode(next.value)
      if (text !== '') yield emit(text)
    }
  }
  const rest = decode(undefined)
  if (rest !== '') yield rest
}

function countLines(text: string): number {
  let count = 0
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++
  return count
}

import { ImportFormatError } from './import-errors.ts'

/**
 * The body as text, chunk by chunk. Invalid UTF-8 stops the import: a replacement character in
 * place of the bytes would be stored as if the client had sent it. A byte-order mark is dropped.
 */
export async function* utf8Text(source: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })
  let lines = 1
  const decode = (bytes: Uint8Array | undefined) => {
    try {
      return bytes === undefined ? decoder.decode() : decoder.decode(bytes, { stream: true })
    } catch {
      // The line of the first bad byte, for a person to find it; decoding again without
      // `fatal` marks it with the first replacement character.
      const lenient = new TextDecoder('utf-8').decode(bytes ?? new Uint8Array())
      const before = lenient.slice(0, Math.max(0, lenient.indexOf('\uFFFD')))
      throw new ImportFormatError(`The body is not valid UTF-8 text (line ${lines + countLines(before)})`)
    }
  }
  for await (const chunk of source) {
    const text = decode(chunk)
    lines += countLines(text)
    if (text !== '') yield text
  }
  const rest = decode(undefined)
  if (rest !== '') yield rest
}

function countLines(text: string): number {
  let count = 0
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++
  return count
}

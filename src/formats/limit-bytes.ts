import { ImportTooLargeError } from './import-errors.ts'

/** The chunks of `source`, failing as soon as more than `maxBytes` have arrived. */
export async function* limitBytes(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, maxBytes: number): AsyncGenerator<Uint8Array> {
  let total = 0
  for await (const chunk of source) {
    total += chunk.byteLength
    if (total > maxBytes) throw new ImportTooLargeError(`The body is over ${maxBytes} bytes`)
    yield chunk
  }
}

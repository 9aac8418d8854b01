import { JSONParser } from '@streamparser/json'
import { ImportFormatError, type ImportRecord } from './import-errors.ts'

/**
 * The elements of a JSON array, as they stream in: the array itself is never held whole.
 * A syntax error stops the import, since nothing after it can be trusted to line up.
 */
export async function* jsonArrayRecords(text: AsyncIterable<string>): AsyncGenerator<ImportRecord[]> {
  const parser = new JSONParser({ paths: ['$.*'], keepStack: false })
  let row = 0
  let records: ImportRecord[] = []
  parser.onValue = ({ value }) => {
    records.push({ row: ++row, value })
  }
  let failed = false
  parser.onError = () => {
    failed = true
  }
  let started = false
  for await (const chunk of text) {
    if (!started) {
      const first = chunk.trimStart()
      if (first === '') continue
      if (!first.startsWith('[')) throw new ImportFormatError('The body is not a JSON array of books')
      started = true
    }
    parser.write(chunk)
    if (failed) throw new ImportFormatError('The JSON is malformed in this book or just after it', row + 1)
    if (records.length > 0) {
      yield records
      records = []
    }
  }
  if (!started) throw new ImportFormatError('The body is empty')
  // The parser ends by itself when the array closes; ending it again would be an error.
  if (!parser.isEnded) throw new ImportFormatError('The JSON array is not closed', row + 1)
}

import secureJson from 'secure-json-parse'
import { MAX_ROW_CHARACTERS } from './csv-records.ts'
import { ImportFormatError, type ImportRecord } from './import-errors.ts'

/**
 * One record per line of NDJSON; blank lines are skipped and rows count the lines that hold
 * something. A line that is not JSON is that row's problem only: the next line starts afresh.
 */
export async function* ndjsonRecords(text: AsyncIterable<string>): AsyncGenerator<ImportRecord[]> {
  let row = 0
  let partial = ''
  const recordOf = (line: string): ImportRecord | undefined => {
    if (line.trim() === '') return undefined
    row++
    try {
      return { row, value: secureJson.parse(line, undefined, { protoAction: 'remove', constructorAction: 'remove' }) }
    } catch {
      return { row, problem: 'This line is not valid JSON' }
    }
  }
  for await (const chunk of text) {
    const lines = (partial + chunk).split('\n')
    partial = lines.pop()!
    if (partial.length > MAX_ROW_CHARACTERS) throw new ImportFormatError(`A line is longer than ${MAX_ROW_CHARACTERS} characters`, row + 1)
    const records: ImportRecord[] = []
    for (const line of lines) {
      const record = recordOf(line)
      if (record) records.push(record)
    }
    if (records.length > 0) yield records
  }
  const last = recordOf(partial)
  if (last) yield [last]
}

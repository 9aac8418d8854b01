import { Tokenizer, TokenParser, TokenType } from '@streamparser/json'
import { ImportFormatError, type ImportRecord } from './import-errors.ts'

/** The array, then a book in it: a book's members are text or numbers, never containers. */
const MAX_DEPTH = 2

/**
 * The elements of a JSON array, as they stream in: the array itself is never held whole, and
 * anything nested deeper than a book in it stops the import at its first bracket, before the
 * parser builds any of it. A syntax error stops the import too, since nothing after it can be
 * trusted to line up.
 */
export async function* jsonArrayRecords(text: AsyncIterable<string>): AsyncGenerator<ImportRecord[]> {
  const tokenizer = new Tokenizer()
  const parser = new TokenParser({ paths: ['$.*'], keepStack: false })
  let row = 0
  let records: ImportRecord[] = []
  let failure: ImportFormatError | undefined
  let depth = 0
  parser.onValue = ({ value }) => {
    records.push({ row: ++row, value })
  }
  tokenizer.onToken = (token) => {
    if (failure) return
    if (token.token === TokenType.LEFT_BRACE || token.token === TokenType.LEFT_BRACKET) {
      if (++depth > MAX_DEPTH) {
        failure = new ImportFormatError('This book nests a list or an object in a member: each member must be text or a number', row + 1)
        return
      }
    } else if (token.token === TokenType.RIGHT_BRACE || token.token === TokenType.RIGHT_BRACKET) {
      depth--
    }
    parser.write(token)
  }
  const malformed = () => {
    failure ??= new ImportFormatError('The JSON is malformed in this book or just after it', row + 1)
  }
  tokenizer.onError = malformed
  parser.onError = malformed
  // The array ends the document: anything but white space after it is malformed.
  parser.onEnd = () => {
    if (!tokenizer.isEnded) tokenizer.end()
  }
  let started = false
  for await (const chunk of text) {
    if (!started) {
      const first = chunk.trimStart()
      if (first === '') continue
      if (!first.startsWith('[')) throw new ImportFormatError('The body is not a JSON array of books')
      started = true
    }
    tokenizer.write(chunk)
    if (failure) throw failure
    if (records.length > 0) {
      yield records
      records = []
    }
  }
  if (!started) throw new ImportFormatError('The body is empty')
  if (!parser.isEnded) throw new ImportFormatError('The JSON array is not closed', row + 1)
}

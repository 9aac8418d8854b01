import Type from 'typebox'
import { Envelope, EXAMPLE_BOOK, failures, NewBook } from '../schemas.ts'

export const UNSUPPORTED_MEDIA_TYPE = 'Unsupported Content-Type: send Content-Type: text/csv, application/x-ndjson or application/json'

const CSV_EXAMPLE = 'title,author,year\r\nDune,Frank Herbert,1965\r\n"Cien años de soledad","Gabriel García Márquez",1967\r\n'
const NDJSON_EXAMPLE = '{"title":"Dune","author":"Frank Herbert","year":1965}\n{"title":"Emma","author":"Jane Austen","year":1815}\n'
const JSON_EXAMPLE = [
  { title: 'Dune', author: 'Frank Herbert', year: 1965 },
  { title: 'Emma', author: 'Jane Austen', year: 1815 },
]

/** The import body, documented per format; the formats' own readers check it, not the schema validator. */
export const importBody = {
  description:
    'The books, in one of three formats chosen by `Content-Type`. Without the header, or with `application/x-www-form-urlencoded` ' +
    '(what `curl --data-binary` sends), the first character decides: `[` a JSON array, `{` NDJSON, anything else CSV.',
  content: {
    'application/json': {
      schema: Type.Array(NewBook, { description: 'A JSON array of books' }),
      example: JSON_EXAMPLE,
    },
    'application/x-ndjson': {
      schema: { type: 'string', description: 'One JSON book per line; blank lines are skipped' },
      example: NDJSON_EXAMPLE,
    },
    'text/csv': {
      schema: {
        type: 'string',
        description:
          'UTF-8 (an optional byte-order mark), RFC 4180 quoting, a header row naming `title`, `author` and `year` in any order; other columns are ignored',
      },
      example: CSV_EXAMPLE,
    },
  },
}

export const ImportedBooks = Type.Object({
  imported: Type.Integer({ description: 'How many books were stored' }),
  ids: Type.Array(Type.Integer(), { description: 'The new ids, in row order' }),
})

export const ImportErrors = Type.Object({
  errors: Type.Array(
    Type.Object({
      row: Type.Optional(
        Type.Integer({
          description:
            'The book the error is about, counted from 1 (a CSV header is not a row); absent when the body as a whole is at fault',
        }),
      ),
      message: Type.String(),
    }),
    { description: 'At most the first 100 errors' },
  ),
})

export const importAnswers = {
  201: Envelope(ImportedBooks, {
    description: 'Every book was stored, in one transaction',
    'x-examples': {
      'Books imported successfully': {
        value: { status: 201, message: 'Books imported successfully', data: { imported: 2, ids: [41, 42] } },
      },
    },
  }),
  400: Envelope(ImportErrors, {
    description: 'Some rows break the rules of a book, or the body cannot be read: nothing was stored',
    'x-examples': {
      'Invalid input': {
        value: {
          status: 400,
          message: 'Invalid input',
          data: {
            errors: [
              { row: 2, message: 'year must be an integer from -9999 to 9999' },
              { row: 7, message: 'Line 8 has 2 fields where the header has 3' },
            ],
          },
        },
      },
    },
  }),
  413: Envelope(Type.Null(), {
    description: 'Over 100,000 books or 32 MiB: nothing was stored',
    'x-examples': { 'Payload too large': { value: { status: 413, message: 'Payload too large', data: null } } },
  }),
  415: Envelope(Type.Null(), {
    description: 'A Content-Type that names none of the three formats; the message says which to send',
    'x-examples': {
      unsupported: { value: { status: 415, message: UNSUPPORTED_MEDIA_TYPE, data: null } },
    },
  }),
  500: failures.internal,
  503: failures.storeUnavailable,
}

export const exportAnswers = {
  200: {
    description: 'Every matching book, as a file to save (`Content-Disposition: attachment`), not an envelope',
    content: {
      'text/csv': {
        schema: {
          type: 'string',
          description:
            "UTF-8 with a byte-order mark, header `id,title,author,year`, RFC 4180 quoting, CRLF line ends. Text cells that a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, tab or carriage return) start with an extra `'`, which the import takes off again.",
        },
        example: `\uFEFFid,title,author,year\r\n${EXAMPLE_BOOK.id},${EXAMPLE_BOOK.title},${EXAMPLE_BOOK.author},${EXAMPLE_BOOK.year}\r\n2,"'=1+1",Someone,2001\r\n`,
      },
      'application/x-ndjson': {
        schema: { type: 'string', description: 'One JSON book per line' },
        example: `${JSON.stringify(EXAMPLE_BOOK)}\n`,
      },
    },
  },
  400: failures.invalidInput,
  500: failures.internal,
  503: failures.storeUnavailable,
}

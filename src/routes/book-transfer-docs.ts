import Type from 'typebox'
import { CHANGE_SEQ, component, Envelope, EXAMPLE_BOOK, failures, NewBook } from '../schemas.ts'

export const UNSUPPORTED_MEDIA_TYPE =
  'Unsupported Content-Type: send Content-Type: text/csv, text/tab-separated-values, application/x-ndjson or application/json'

/** The charset as the client sent it, cut short: it is the client's text. */
export function unsupportedCharset(charset: string): string {
  return `Unsupported charset: ${charset.length > 40 ? `${charset.slice(0, 40)}…` : charset}`
}

const CSV_EXAMPLE = 'title,author,year\r\nDune,Frank Herbert,1965\r\n"Cien años de soledad","Gabriel García Márquez",1967\r\n'
const NDJSON_EXAMPLE = '{"title":"Dune","author":"Frank Herbert","year":1965}\n{"title":"Emma","author":"Jane Austen","year":1815}\n'
const TSV_EXAMPLE = 'Title\tPrimary Author\tDate\r\nDune\tHerbert, Frank\t1965\r\n'
const JSON_EXAMPLE = [
  { title: 'Dune', author: 'Frank Herbert', year: 1965 },
  { title: 'Emma', author: 'Jane Austen', year: 1815 },
]

const HEADER_ROW =
  "a header row naming the title, author and year columns in any order, by the names of this service's export " +
  '(`title`, `author`, `year`) or those of Goodreads, The StoryGraph, LibraryThing, Calibre, Open Library and goodbooks-10k ' +
  '(compared in any case, spaces around them ignored), or as `columns=` names them; other columns are ignored'

/** The import body, documented per format; the formats' own readers check it, not the schema validator. */
export const importBody = {
  description:
    'The books, in one of four formats chosen by `Content-Type`. Without the header, or with `application/x-www-form-urlencoded` ' +
    '(what `curl --data-binary` sends), the first character decides: `[` a JSON array, `{` NDJSON, anything else CSV. ' +
    'The text is UTF-8 unless `charset=` says UTF-16 or Windows-1252 (or a byte-order mark says UTF-16); UTF-16 starts with a byte-order mark.',
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
        description: `RFC 4180 quoting, fields separated by commas or semicolons (or tabs), whichever the header row holds most of; a quote inside a field that does not start with one taken as it is; ${HEADER_ROW}`,
      },
      example: CSV_EXAMPLE,
    },
    'text/tab-separated-values': {
      schema: { type: 'string', description: `Fields separated by tabs, quoted as CSV is; ${HEADER_ROW}` },
      example: TSV_EXAMPLE,
    },
  },
}

/** The import's query string, documented; `importOptionsOf` reads it. */
export const ImportQuery = Type.Object({
  dry_run: Type.Optional(
    Type.Union([Type.Literal('true'), Type.Literal('false')], {
      description: '`true`: check and count the rows, store nothing, and answer what an import would store',
    }),
  ),
  invalid: Type.Optional(
    Type.Literal('skip', {
      description: '`skip`: store the valid rows and list the invalid ones, instead of storing nothing when any is invalid',
    }),
  ),
  duplicates: Type.Optional(
    Type.Literal('skip', {
      description:
        '`skip`: leave out the rows whose title and author (case and accents ignored) and year equal those of a stored book or of an ' +
        'earlier row, and list them; books in the trash do not count. Without it every row is stored',
    }),
  ),
  columns: Type.Optional(
    Type.String({
      description:
        'The headers to read the title, author and year from, as `title:<header>,author:<header>,year:<header>` (any of the three, ' +
        'each once; the others are found by name). A year column may hold dates: the year is taken from them.',
      examples: ['title:Book,author:Writer,year:Published'],
    }),
  ),
})

const RowError = Type.Object({
  row: Type.Optional(
    Type.Integer({
      description: 'The book the error is about, counted from 1 (a CSV header is not a row); absent when the body as a whole is at fault',
    }),
  ),
  message: Type.String(),
})

const RowErrors = Type.Array(RowError, { description: 'At most the first 100 errors' })

export const ImportErrors = Type.Object({ errors: RowErrors })

const Duplicate = Type.Object({
  row: Type.Integer({ description: 'The row that repeats a book, counted from 1' }),
  id: Type.Union([Type.Integer(), Type.Null()], {
    description: 'The stored book it repeats; null when it repeats an earlier row of the file instead',
  }),
})

export const ImportedBooks = Type.Object({
  imported: Type.Integer({ description: 'How many books were stored' }),
  ids: Type.Array(Type.Integer(), { description: 'The new ids, in row order' }),
  errors: Type.Optional(Type.Array(RowError, { description: 'With `invalid=skip`: the rows left out, at most the first 100' })),
  duplicates: Type.Optional(
    Type.Array(Duplicate, { description: 'With `duplicates=skip`: the rows left out as duplicates, at most the first 100' }),
  ),
})

export const CheckedImport = Type.Object({
  importable: Type.Integer({
    description:
      'How many rows pass the rules of a book, duplicates included: all of them are stored when `errors` is empty, or with `invalid=skip`',
  }),
  errors: RowErrors,
  duplicates: Type.Array(Duplicate, {
    description:
      'Rows that repeat a stored book (title and author with case and accents ignored, and year) or an earlier row, whether or not ' +
      '`duplicates=skip` is given: at most the first 100',
  }),
  preview: Type.Array(NewBook, { description: 'The first 20 books that pass, as they would be stored' }),
})

export const importAnswers = {
  200: Envelope(CheckedImport, {
    description: 'With `dry_run=true`: what the import would store; nothing was stored',
    'x-examples': {
      'Import checked successfully': {
        value: {
          status: 200,
          message: 'Import checked successfully',
          data: {
            importable: 1,
            errors: [{ row: 2, message: 'year is missing' }],
            duplicates: [],
            preview: [{ title: 'Dune', author: 'Frank Herbert', year: 1965 }],
          },
        },
      },
    },
  }),
  201: Envelope(ImportedBooks, {
    description:
      'Every book was stored (with `invalid=skip`, every valid one, and `errors` lists the others; with `duplicates=skip`, every one ' +
      'that repeats no book, and `duplicates` lists the others), in one transaction',
    'x-examples': {
      'Books imported successfully': {
        value: { status: 201, message: 'Books imported successfully', data: { imported: 2, ids: [41, 42] } },
      },
      'duplicates skipped': {
        value: {
          status: 201,
          message: 'Books imported successfully',
          data: {
            imported: 1,
            ids: [43],
            duplicates: [
              { row: 1, id: 41 },
              { row: 3, id: null },
            ],
          },
        },
      },
    },
  }),
  400: component(
    'ImportRefused',
    Envelope(ImportErrors, {
      description:
        'Some rows break the rules of a book (without `invalid=skip`), the body as a whole cannot be read, or a query parameter is ' +
        'invalid: nothing was stored',
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
  ),
  413: component(
    'ImportTooLarge',
    Envelope(Type.Null(), {
      description: 'Over 100,000 books or 32 MiB: nothing was stored',
      'x-examples': { 'Payload too large': { value: { status: 413, message: 'Payload too large', data: null } } },
    }),
  ),
  415: component(
    'UnsupportedMediaType',
    Envelope(Type.Null(), {
      description:
        'A Content-Type that names none of the four formats (the message says which to send), or a charset other than UTF-8, ' +
        'UTF-16 and Windows-1252 (the message names it)',
      'x-examples': {
        unsupported: { value: { status: 415, message: UNSUPPORTED_MEDIA_TYPE, data: null } },
        'unsupported charset': { value: { status: 415, message: unsupportedCharset('iso-8859-5'), data: null } },
      },
    }),
  ),
  500: failures.internal,
  503: failures.storeUnavailable,
}

export const exportAnswers = {
  200: {
    description: 'Every matching book, as a file to save (`Content-Disposition: attachment`), not an envelope',
    headers: { 'X-Change-Seq': { type: 'string', description: CHANGE_SEQ['X-Change-Seq'] } },
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

import Type, { type Static, type TSchema, type TSchemaOptions } from 'typebox'
import { MAX_SEARCH_TEXT, PATTERNS } from './books/list-parameters.ts'

/** Not blank after trimming; no NUL; no lone surrogate (the pattern is compiled in Unicode mode). */
const Text = Type.String({
  minLength: 1,
  maxLength: 500,
  pattern: '^(?=[\\s\\S]*\\S)[^\\u0000\\uD800-\\uDFFF]*$',
  description: 'Up to 500 characters, not blank, no NUL character',
})
const Year = Type.Integer({ minimum: -9999, maximum: 9999 })
/** Decimal digits, no sign, no leading zero; the handler also bounds it to 2^53 - 1. */
export const ID_PATTERN = '^[1-9][0-9]{0,15}$'

/** The keyword that names a schema as a component of the OpenAPI document; validation ignores it. */
export const COMPONENT = 'x-component'

/** `schema`, named in the OpenAPI document as the component `name` (see http/docs/components.ts). */
export function component<T extends TSchema>(name: string, schema: T): T {
  return { ...schema, [COMPONENT]: name }
}

/** The book the examples of the API reference show. */
export const EXAMPLE_BOOK = { id: 1, title: 'Dune', author: 'Frank Herbert', year: 1965 }

export const Book = component(
  'Book',
  Type.Object(
    {
      id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Assigned by the server, ascending, never reused' }),
      title: Type.String(),
      author: Type.String(),
      year: Type.Integer(),
    },
    { examples: [EXAMPLE_BOOK] },
  ),
)

export const NewBook = component(
  'NewBook',
  Type.Object(
    { title: Text, author: Text, year: Year },
    {
      description: 'Members other than these are ignored; `id` is assigned by the server',
      examples: [{ title: 'Dune', author: 'Frank Herbert', year: 1965 }],
    },
  ),
)
export const BookChanges = component(
  'BookChanges',
  Type.Partial(Type.Object({ title: Text, author: Text, year: Year }), {
    description: 'Members present replace the stored values; `{}` changes nothing',
    examples: [{ year: 1966 }],
  }),
)

export const BookIdParams = Type.Object({
  id: Type.String({ pattern: ID_PATTERN, description: 'A book id: decimal digits, no sign, no leading zero', examples: ['1'] }),
})

export const IfMatchHeader = Type.Object({
  'if-match': Type.Optional(
    Type.String({ description: 'ETags (or `*`): change the book only while it still has one of them, else 412', examples: ['"1"'] }),
  ),
})

const SearchText = (description: string, example: string) =>
  Type.String({
    maxLength: MAX_SEARCH_TEXT,
    description: `${description}; up to ${MAX_SEARCH_TEXT} characters, blank counts as absent`,
    examples: [example],
  })
const YearParameter = (description: string, example: string) =>
  Type.String({ pattern: PATTERNS.year, description: `${description}: an integer from -9999 to 9999`, examples: [example] })

/** The query of `GET /books`: every parameter a string, checked here and by `parseBookQuery`. */
export const ListQuery = Type.Object({
  q: Type.Optional(
    SearchText(
      'Words to find: each must begin a word of the title or of the author, case and accents ignored. Results come by relevance unless `sort` is given',
      'harr pott',
    ),
  ),
  title: Type.Optional(SearchText('Text contained anywhere in the title, case and accents ignored', 'hobbit')),
  author: Type.Optional(SearchText('Text contained anywhere in the author, case and accents ignored', 'king')),
  year: Type.Optional(YearParameter('That year exactly', '1965')),
  year_from: Type.Optional(YearParameter('Books of this year or later', '1950')),
  year_to: Type.Optional(YearParameter('Books of this year or earlier; not before `year_from`', '1999')),
  sort: Type.Optional(
    Type.String({
      pattern: PATTERNS.sort,
      description:
        'A comma list of `id`, `title`, `author`, `year`, each once, `-` in front for descending. Text sorts with case and accents ignored, ' +
        'and `title` files a leading "The", "A" or "An" after the rest ("The Hobbit" under H); ties go by id. Default: relevance with `q`, else id',
      examples: ['-year,title'],
    }),
  ),
  count: Type.Optional(
    Type.String({
      pattern: PATTERNS.count,
      description: '`true` adds `X-Total-Count`: how many books match, all pages together',
      examples: ['true'],
    }),
  ),
  limit: Type.Optional(
    Type.String({ pattern: PATTERNS.limit, description: 'Books per page, 1 to 1000; without it every match comes back', examples: ['20'] }),
  ),
  after: Type.Optional(
    Type.String({
      pattern: PATTERNS.after,
      description: 'Only books with a greater id; only in id order (not with `q` or another `sort`)',
      examples: ['100'],
    }),
  ),
  cursor: Type.Optional(
    Type.String({
      description:
        'Opaque: it comes only from the `Link` header of the page before, which holds every other parameter too. Follow that link as it is',
      examples: ['WzMzNDg5OTE1LDNd.hV1fOQx2oZKp3s8Gm0cVqJ3tY6rWbN4aLzE5uI7kD9g'],
    }),
  ),
})
export type ListQuery = Static<typeof ListQuery>

const ChangeKind = Type.Union(
  [Type.Literal('created'), Type.Literal('updated'), Type.Literal('deleted'), Type.Literal('restored'), Type.Literal('purged')],
  { description: 'What happened: an import stores each book as a change of its own, `created`' },
)
const Actor = Type.String({
  description: 'Who did it: a username, `key:` and the name of a key, or `system:retention` for a purge after the retention time',
})
const Time = Type.String({ format: 'date-time', description: 'RFC 3339, UTC' })

export const EXAMPLE_CHANGE = { seq: 42, book_id: 1, kind: 'updated', actor: 'admin', at: '2026-11-25T09:30:00.000Z', book: EXAMPLE_BOOK }
export const Change = component(
  'Change',
  Type.Object(
    {
      seq: Type.Integer({ minimum: 1, description: 'Increasing across the whole catalogue, in the order the changes committed' }),
      book_id: Type.Integer({ minimum: 1 }),
      kind: ChangeKind,
      actor: Actor,
      at: Time,
      book: Type.Union([Book, Type.Null()], {
        description: "The book's values after the change: for `deleted`, as it was; for `purged`, null",
      }),
    },
    { examples: [EXAMPLE_CHANGE] },
  ),
)

export const EXAMPLE_TRASHED = { ...EXAMPLE_BOOK, deleted_at: '2026-11-25T09:30:00.000Z', deleted_by: 'admin' }
export const TrashedBook = component(
  'TrashedBook',
  Type.Object(
    {
      id: Type.Integer({ minimum: 1 }),
      title: Type.String(),
      author: Type.String(),
      year: Type.Integer(),
      deleted_at: Time,
      deleted_by: Actor,
    },
    { examples: [EXAMPLE_TRASHED] },
  ),
)

/** The query of the history and the trash: one page at a time, newest first. */
export const PageQuery = Type.Object({
  limit: Type.Optional(
    Type.String({ pattern: PATTERNS.limit, description: 'How many per page, 1 to 1000 (default 100)', examples: ['20'] }),
  ),
  before: Type.Optional(
    Type.String({
      pattern: PATTERNS.after,
      description: 'Only what came before this `seq`: the `Link` of the page before sets it',
      examples: ['4242'],
    }),
  ),
})

/** The query of the changes: where to start, and how many. */
export const ChangesQuery = Type.Object({
  since: Type.Optional(
    Type.String({
      pattern: '^(?:0|[1-9][0-9]{0,15}|latest)$',
      description:
        'Only changes with a greater `seq` (default 0: from the first). `latest`: none now, and a `Link` that starts at the newest change',
      examples: ['4242', 'latest'],
    }),
  ),
  limit: PageQuery.properties.limit,
})

export const RevertRequest = component(
  'RevertRequest',
  Type.Object(
    { seq: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'A change of this book, from its history' }) },
    { description: 'The book takes the values it had after that change', examples: [{ seq: 42 }] },
  ),
)

export const LoginRequest = component(
  'LoginRequest',
  Type.Object(
    { username: Type.String(), password: Type.String() },
    { examples: [{ username: 'admin', password: 'the configured password' }] },
  ),
)
export type LoginRequest = Static<typeof LoginRequest>
export const TokenPayload = component(
  'TokenPayload',
  Type.Object({
    token: Type.String({ description: 'A JWT (HS256) that expires 15 minutes after it was issued; send it as the Authorization header' }),
  }),
)

/** `{status, message, data}`: every answer of the book interface has this shape. */
export function Envelope<T extends TSchema>(data: T, options: TSchemaOptions = {}) {
  return Type.Object({ status: Type.Integer(), message: Type.String(), data }, options)
}

/** One named example per message the answer can carry, shown in the API reference. */
function examples(status: number, messages: string[], data: unknown = null) {
  return Object.fromEntries(messages.map((message) => [message, { value: { status, message, data } }]))
}

/** The envelope of a success, documented with its one fixed message. */
export function Success<T extends TSchema>(status: number, message: string, data: T, example: unknown, description: string) {
  return Envelope(data, { description, 'x-examples': examples(status, [message], example) })
}

/** The envelope of a failure, named `name` in the document, with every message it can carry. */
export function Failure(name: string, status: number, description: string, ...messages: string[]) {
  return component(name, Envelope(Type.Null(), { description, 'x-examples': examples(status, messages) }))
}

/**
 * An answer of one media type among several, as a response's `content` holds it: its named
 * examples beside its schema, where the document shows them (the generator moves them there only
 * for an answer of one type).
 */
export function media(schema: TSchema): { schema: TSchema; examples: unknown } {
  const { 'x-examples': examples, ...rest } = schema as TSchema & { 'x-examples'?: unknown }
  return { schema: rest, examples }
}

/** Documents the headers an answer carries; serialisation ignores them. */
export function withHeaders<T extends TSchema>(schema: T, headers: Record<string, string>): T {
  return {
    ...schema,
    headers: Object.fromEntries(Object.entries(headers).map(([name, description]) => [name, Type.String({ description })])),
  }
}

export const CHANGE_SEQ = {
  'X-Change-Seq':
    'The newest change the answer reflects: it holds every change up to this `seq` and none after it. Follow `GET /books/changes?since=` it to stay up to date',
}
export const RETRY_AFTER = { 'Retry-After': 'Seconds to wait before trying again' }
export const ETAG = { ETag: "The book's current state: send it in `If-Match` to update only that state" }

export const failures = {
  invalidInput: Failure('InvalidInput', 400, 'The body or a query parameter breaks the rules of a book or of the list', 'Invalid input'),
  tokenRefused: Failure(
    'TokenRefused',
    401,
    'The Authorization header is missing, or its token is malformed, expired or wrongly signed',
    'Authorization token required',
    'Invalid token',
  ),
  bookNotFound: Failure('BookNotFound', 404, 'No book has that id (also when the id is not a valid id)', 'Book not found'),
  preconditionFailed: Failure(
    'PreconditionFailed',
    412,
    '`If-Match` names none of the current ETags: nothing was changed',
    'Precondition failed',
  ),
  forbidden: Failure('Forbidden', 403, "The token's or key's role may not do this", 'Forbidden'),
  tooLarge: Failure('PayloadTooLarge', 413, 'The body is over 64 KiB', 'Payload too large'),
  internal: Failure(
    'InternalServerError',
    500,
    'An unexpected failure; the log has the details under the request id',
    'Internal server error',
  ),
  storeUnavailable: withHeaders(
    Failure(
      'ServiceUnavailable',
      503,
      'The store cannot be reached or did not answer in time; `Retry-After` says when to try again',
      'Service unavailable',
    ),
    RETRY_AFTER,
  ),
}

export const IdempotencyKeyHeader = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        '1 to 255 visible ASCII characters, new for each write. A retry with the same key and body within 24 hours answers the first answer again and stores nothing new, on any instance.',
      examples: ['5f0c6e2a-9d7b-4b8e-a1f3-3c2d1e0b9a87'],
    }),
  ),
})
export const IDEMPOTENT_REPLAYED = {
  'Idempotent-Replayed': '`true` when this is the first answer to an `Idempotency-Key`, repeated for a retry',
}
export const idempotencyFailures = {
  409: Failure(
    'IdempotencyKeyInProgress',
    409,
    'A request with the same `Idempotency-Key` is still running; retry a little later',
    'Request with this idempotency key is in progress',
  ),
  422: Failure(
    'IdempotencyKeyReused',
    422,
    'The `Idempotency-Key` was used before with another body',
    'Idempotency key reused with a different request',
  ),
}

import Type, { type Static, type TSchema } from 'typebox'

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

export const Book = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  title: Type.String(),
  author: Type.String(),
  year: Type.Integer(),
})

export const NewBook = Type.Object({ title: Text, author: Text, year: Year })
export const BookChanges = Type.Partial(NewBook)
export type NewBook = Static<typeof NewBook>
export type BookChanges = Static<typeof BookChanges>

export const BookIdParams = Type.Object({ id: Type.String({ pattern: ID_PATTERN }) })

export const ListQuery = Type.Object({
  limit: Type.Optional(Type.String({ pattern: '^(?:[1-9][0-9]{0,2}|1000)$', description: '1 to 1000' })),
  after: Type.Optional(Type.String({ pattern: '^(?:0|[1-9][0-9]{0,15})$', description: 'A book id' })),
})
export type ListQuery = Static<typeof ListQuery>

export const LoginRequest = Type.Object({ username: Type.String(), password: Type.String() })
export type LoginRequest = Static<typeof LoginRequest>
export const TokenPayload = Type.Object({ token: Type.String() })

export function Envelope<T extends TSchema>(data: T) {
  return Type.Object({ status: Type.Integer(), message: Type.String(), data })
}
export const ErrorEnvelope = Envelope(Type.Null())

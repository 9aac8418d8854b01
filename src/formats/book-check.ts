import { Ajv, type ValidateFunction } from 'ajv'
import type { NewBook } from '../books/book.ts'
import { COMPONENT, NewBook as NewBookSchema } from '../schemas.ts'

// Ajv, as for the body of `POST /book`; compiled on the first import, not at every start.
let validator: ValidateFunction<NewBook> | undefined
const valid = (book: unknown): book is NewBook =>
  (validator ??= new Ajv({ coerceTypes: false, keywords: [COMPONENT] }).compile<NewBook>(NewBookSchema))(book)

const RULES = {
  title: 'title must be text of 1 to 500 characters, not blank, with no NUL character',
  author: 'author must be text of 1 to 500 characters, not blank, with no NUL character',
  year: 'year must be an integer from -9999 to 9999',
} as const

export type BookCheck = { ok: true; book: NewBook } | { ok: false; message: string }

/** A value checked by the rules of `POST /book`: the same schema validates both. */
export function checkBook(value: unknown): BookCheck {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, message: 'A book must be an object with title, author and year' }
  }
  // Own members only, into a fresh object: nothing inherited or extra is checked or stored.
  const record = value as Record<string, unknown>
  const book = {
    title: Object.hasOwn(record, 'title') ? record.title : undefined,
    author: Object.hasOwn(record, 'author') ? record.author : undefined,
    year: Object.hasOwn(record, 'year') ? record.year : undefined,
  }
  if (valid(book)) return { ok: true, book }
  const broken = (Object.keys(RULES) as (keyof typeof RULES)[]).filter((member) => !valid({ ...VALID, [member]: book[member] }))
  return { ok: false, message: broken.map((member) => (book[member] === undefined ? `${member} is missing` : RULES[member])).join('; ') }
}

const VALID: NewBook = { title: 't', author: 'a', year: 0 }

/** The API's rules for a book (docs/api.md), checked before anything is sent. */

export const TEXT_MAX_CHARACTERS = 500
export const YEAR_MIN = -9999
export const YEAR_MAX = 9999

export interface BookFields {
  title: string
  author: string
  year: number
}

export type FieldName = keyof BookFields
export type FieldErrors = Partial<Record<FieldName, string>>

// eslint-disable-next-line no-control-regex -- NUL is exactly what the API refuses
const NUL = /\u0000/
const LONE_SURROGATE = /\p{Cs}/u

function textProblem(value: string, label: string): string | undefined {
  if (value.trim() === '') return `${label} is required.`
  if ([...value].length > TEXT_MAX_CHARACTERS) return `${label} must be at most ${TEXT_MAX_CHARACTERS} characters.`
  if (NUL.test(value) || LONE_SURROGATE.test(value)) return `${label} contains a character that cannot be stored.`
  return undefined
}

export function yearProblem(raw: string): string | undefined {
  const text = raw.trim()
  if (text === '') return 'Year is required.'
  if (!/^-?\d+$/.test(text)) return 'Year must be a whole number, such as 1965 or -450.'
  const year = Number(text)
  if (year < YEAR_MIN || year > YEAR_MAX) return `Year must be between ${YEAR_MIN} and ${YEAR_MAX}.`
  return undefined
}

/** The book the form describes, or what is wrong with each field. */
export function checkBook(raw: { title: string; author: string; year: string }): { book: BookFields } | { errors: FieldErrors } {
  const errors: FieldErrors = {}
  const title = textProblem(raw.title, 'Title')
  const author = textProblem(raw.author, 'Author')
  const year = yearProblem(raw.year)
  if (title) errors.title = title
  if (author) errors.author = author
  if (year) errors.year = year
  if (title || author || year) return { errors }
  return { book: { title: raw.title, author: raw.author, year: Number(raw.year.trim()) } }
}

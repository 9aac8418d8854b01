/** What differs between two versions of a book, field by field: for "Save again" and for the history. */
import type { BookFields, FieldName } from './book-rules.ts'

export const FIELDS: readonly FieldName[] = ['title', 'author', 'year']

export const FIELD_LABELS: Record<FieldName, string> = { title: 'Title', author: 'Author', year: 'Year' }

/** A book's fields as stored, or as a form holds them. */
export type Values = Record<FieldName, string | number>

/** The fields whose values differ, in the order the form shows them. */
export function changedFields(from: Values, to: Values): FieldName[] {
  return FIELDS.filter((field) => from[field] !== to[field])
}

/** The members of `to` that differ from `from`: what a `PUT` needs to send to make `from` into `to`. */
export function changes(from: BookFields, to: BookFields): Partial<BookFields> {
  return Object.fromEntries(changedFields(from, to).map((field) => [field, to[field]]))
}

/** The three fields of a book, without its id. */
export function fieldsOf({ title, author, year }: BookFields): BookFields {
  return { title, author, year }
}

export interface Rebased<V extends Values> {
  /** The fields someone else changed meanwhile. */
  theirs: FieldName[]
  /** The fields the person changed. */
  mine: FieldName[]
  /** What the form now holds: the person's changes on top of the current version. */
  form: V
}

/**
 * The person's edit, made from `base`, put on top of `current`, the version someone else saved
 * meanwhile: the fields the person changed keep their values, every other field takes the
 * current one. Saving then sends only the person's fields, so the other change survives.
 */
export function rebase<V extends Values>(base: V, edited: V, current: V): Rebased<V> {
  const mine = changedFields(base, edited)
  const form = { ...current }
  for (const field of mine) form[field] = edited[field]
  return { theirs: changedFields(base, current), mine, form }
}

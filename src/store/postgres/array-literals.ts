/**
 * Arrays sent as the text of PostgreSQL array literals, each built in one join. pg writes the
 * same text an element at a time, quoting and escaping each into strings of its own, which a
 * batched write, with nine arrays of an element per book, paid for in every request it answered
 * (docs/performance-log.md).
 */

type Element = string | number | null | undefined

/** What a quoted element escapes with a backslash, as pg escapes it. */
const SPECIAL = /["\\]/
const SPECIALS = /["\\]/g

function isString(value: unknown): value is string {
  return typeof value === 'string'
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number'
}

function isElement(value: unknown): value is Element {
  return value === null || value === undefined || isString(value) || isNumber(value)
}

function quoted(value: Element): string {
  if (value === null || value === undefined) return 'NULL'
  const text = String(value)
  return `"${SPECIAL.test(text) ? text.replace(SPECIALS, '\\$&') : text}"`
}

/**
 * The literal of `values`, which PostgreSQL reads as it reads pg's: text quoted and escaped as pg
 * does it, NULL for null and undefined.
 */
export function arrayLiteral(values: readonly Element[]): string {
  if (values.every(isNumber)) return `{${values.join(',')}}`
  // The common case: no element to escape, so one join writes every quote and comma.
  if (values.every((value) => isString(value) && !SPECIAL.test(value))) return `{"${values.join('","')}"}`
  return `{${values.map(quoted).join(',')}}`
}

/**
 * An array that pg writes as its literal, built as the statement is written and dropped with it.
 * A literal built beforehand lived as long as the statement that holds its values, past young
 * collections, and an import's statements of long books filled the old generation with them
 * (docs/performance-log.md).
 */
class Literal {
  readonly values: readonly Element[]

  constructor(values: readonly Element[]) {
    this.values = values
  }

  toPostgres(): string {
    return arrayLiteral(this.values)
  }
}

/** `values` with each array of strings, numbers and nulls written as its literal; any other value as it is, for pg. */
export function withArrayLiterals(values: readonly unknown[]): unknown[] {
  return values.map((value) => (Array.isArray(value) && value.every(isElement) ? new Literal(value) : value))
}

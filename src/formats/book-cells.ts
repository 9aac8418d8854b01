/** A cell that `neutraliseCell` prefixed so that no spreadsheet runs it: the prefix comes off again. */
const NEUTRALISED = /^'+[=+\-@\t\r]/

/** Text as the export wrote it, back to what was stored. */
export function cellText(cell: string): string {
  return NEUTRALISED.test(cell) ? cell.slice(1) : cell
}

const BLANK = /^\s*$/

export function isBlank(cell: string): boolean {
  return BLANK.test(cell)
}

const INTEGER = /^-?\d{1,15}$/
/** How pandas writes a whole number it holds as a float (goodbooks-10k's years): `2008.0`. */
const WHOLE_FLOAT = /^(-?\d{1,15})\.0+$/
const MONTH = '(?:0?[1-9]|1[0-2])'
const DAY = '(?:0?[1-9]|[12]\\d|3[01])'
/** ISO 8601, alone or with a time (Calibre's `pubdate`: `2008-09-12T20:53:11+08:00`). */
const ISO_DATE = new RegExp(`^(-?\\d{4})-${MONTH}(?:-${DAY}(?:[T ].*)?)?$`)
/** Year first, with slashes (Goodreads' and The StoryGraph's dates: `2021/03/02`). */
const SLASHED_DATE = new RegExp(`^(\\d{4})/${MONTH}/${DAY}$`)

/**
 * A year cell as a number when it holds an integer, a whole float or a date that starts with its
 * year; otherwise the text, which then fails the check as a book.
 */
export function yearOf(cell: string): unknown {
  const text = cell.trim()
  if (INTEGER.test(text)) return Number(text)
  const year = WHOLE_FLOAT.exec(text)?.[1] ?? ISO_DATE.exec(text)?.[1] ?? SLASHED_DATE.exec(text)?.[1]
  return year === undefined ? text : Number(year)
}

/**
 * "Herbert, Frank" as "Frank Herbert": for the columns whose format writes a name last name
 * first. A name with no comma ("Homer") or more than one is left as written, since nothing
 * says which part is which.
 */
export function firstNameFirst(name: string): string {
  const at = name.indexOf(',')
  if (at === -1 || name.includes(',', at + 1)) return name
  const last = name.slice(0, at).trim()
  const first = name.slice(at + 1).trim()
  return last === '' || first === '' ? name : `${first} ${last}`
}

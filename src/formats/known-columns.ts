import { cellText, firstNameFirst, isBlank, yearOf } from './book-cells.ts'
import { ImportFormatError } from './import-errors.ts'

export const MEMBERS = ['title', 'author', 'year'] as const
export type Member = (typeof MEMBERS)[number]

/** The header `columns=` names for a member, as written there. */
export type ColumnChoice = Partial<Record<Member, string>>

/** How a cell that is not blank becomes a member's value; undefined when the format means "none" by it. */
type CellReader = (cell: string) => unknown

const text: CellReader = cellText
const lastNameFirst: CellReader = (cell) => firstNameFirst(cellText(cell))
/** LibraryThing's older export writes some characters as HTML numeric references: `Hacker&#039;s`, `G&#246;del`. */
const NUMERIC_REFERENCE = /&#(?:(\d{1,7})|x([0-9a-f]{1,6}));/gi
const withReferences = (cell: string) =>
  cell.replace(NUMERIC_REFERENCE, (reference, decimal: string | undefined, hex: string | undefined) => {
    const code = decimal === undefined ? parseInt(hex!, 16) : Number(decimal)
    return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : reference
  })
const referencedText: CellReader = (cell) => withReferences(cellText(cell))
const referencedLastNameFirst: CellReader = (cell) => firstNameFirst(withReferences(cellText(cell)))
/** Calibre writes a book without a publication date as 0101-01-01 in local time, and counts any year before 101 as none. */
const CALIBRE_NO_DATE = /^\s*(0(0\d\d|100)-|0101-01-01)/
/** Open Library's reading log writes Python's `None` where a work has no first publication year. */
const PYTHON_NONE = /^\s*None\s*$/

const READ_BY_DEFAULT: Record<Member, CellReader> = { title: text, author: text, year: yearOf }

interface KnownColumn {
  /** As the format writes it; compared trimmed and in any case. */
  name: string
  member: Member
  read?: CellReader
}

/**
 * The columns of the files this import knows, in the order they are preferred when a file has
 * more than one for a member and each is filled: the first filled one is read. Each comes from
 * the format's own export (see the fixtures of the tests for a sample of each):
 * - this service's export, and a plain file: `title`, `author`, `year`;
 * - Goodreads' library export: `Title`, `Author` (first name first; `Author l-f` is not needed),
 *   `Original Publication Year` before `Year Published` (an edition's);
 * - The StoryGraph's export: `Title`, `Authors`; it has no publication year;
 * - LibraryThing's CSV and tab-separated exports: `Title`, `Primary Author` (last name first),
 *   `Date`; its older export: `'TITLE'`, `'AUTHOR (first, last)'` before `'AUTHOR (last, first)'`,
 *   `'DATE'`, the quotes part of the names, and some characters as HTML numeric references;
 * - Calibre's `calibredb catalog` CSV: `title`, `authors`, `pubdate` (ISO 8601);
 * - Open Library's reading log: `Title`, `Authors`, `First Publish Year`;
 * - goodbooks-10k's `books.csv`: `title`, `authors`, `original_publication_year`.
 */
const KNOWN_COLUMNS: KnownColumn[] = [
  { name: 'title', member: 'title' },
  { name: "'TITLE'", member: 'title', read: referencedText },
  { name: 'author', member: 'author' },
  { name: 'authors', member: 'author' },
  { name: 'Primary Author', member: 'author', read: lastNameFirst },
  { name: "'AUTHOR (first, last)'", member: 'author', read: referencedText },
  { name: "'AUTHOR (last, first)'", member: 'author', read: referencedLastNameFirst },
  { name: 'year', member: 'year' },
  { name: 'Original Publication Year', member: 'year' },
  { name: 'Year Published', member: 'year' },
  { name: 'original_publication_year', member: 'year' },
  { name: 'First Publish Year', member: 'year', read: (cell) => (PYTHON_NONE.test(cell) ? undefined : yearOf(cell)) },
  { name: 'pubdate', member: 'year', read: (cell) => (CALIBRE_NO_DATE.test(cell) ? undefined : yearOf(cell)) },
  { name: 'Date', member: 'year' },
  { name: "'DATE'", member: 'year' },
]

const normalised = (name: string) => name.trim().toLowerCase()

/** Far above any export's (LibraryThing's has 54), and a bound on the work a header row can cause. */
export const MAX_COLUMNS = 1000

/** A column a member is read from, and how. */
interface Source {
  at: number
  read: CellReader
}

/** Reads a book's members out of a row of a header's columns. */
export type BookOfRow = (row: string[]) => { title: unknown; author: unknown; year: unknown }

/**
 * Where each member of a book sits in a header row, from `columns=` where it names one, else from
 * the known columns; fails, naming what the header has and what it needs, when a member has no
 * column or one named is missing or ambiguous.
 */
export function bookColumns(header: string[], choice: ColumnChoice = {}): BookOfRow {
  if (header.length > MAX_COLUMNS) {
    throw new ImportFormatError(`The header row has ${header.length} columns: an import reads at most ${MAX_COLUMNS}`)
  }
  const positions = new Map<string, number[]>()
  header.forEach((name, at) => {
    const key = normalised(name)
    const seen = positions.get(key)
    if (seen === undefined) positions.set(key, [at])
    else seen.push(at)
  })
  const only = (name: string, why: string) => {
    const at = positions.get(normalised(name)) ?? []
    if (at.length > 1) throw new ImportFormatError(`The header row names "${clip(name.trim())}" twice${why}`)
    return at[0]
  }

  const sources = {} as Record<Member, Source[]>
  for (const member of MEMBERS) {
    const chosen = choice[member]
    if (chosen !== undefined) {
      const at = only(chosen, ': columns= cannot tell which to read')
      if (at === undefined) {
        throw new ImportFormatError(
          `columns= names "${clip(chosen)}" for the ${member}, but the header row has no such column. ${headersFound(header)}`,
        )
      }
      const known = KNOWN_COLUMNS.find((column) => column.member === member && normalised(column.name) === normalised(chosen))
      sources[member] = [{ at, read: known?.read ?? READ_BY_DEFAULT[member] }]
      continue
    }
    sources[member] = KNOWN_COLUMNS.filter((column) => column.member === member).flatMap((column) => {
      const at = only(column.name, '')
      return at === undefined ? [] : [{ at, read: column.read ?? READ_BY_DEFAULT[member] }]
    })
  }
  const missing = MEMBERS.filter((member) => sources[member].length === 0)
  if (missing.length > 0) throw new ImportFormatError(missingColumns(missing, header))

  const valueOf = (row: string[], from: Source[]): unknown => {
    for (const { at, read } of from) {
      const cell = row[at]!
      if (isBlank(cell)) continue
      const value = read(cell)
      if (value !== undefined) return value
    }
    return undefined
  }
  const { title, author, year } = sources
  return (row) => ({ title: valueOf(row, title), author: valueOf(row, author), year: valueOf(row, year) })
}

/** Header names as long as any real one, so that a message quoting them stays short. */
function clip(name: string): string {
  return name.length > 60 ? `${name.slice(0, 60)}…` : name
}

const SHOWN_HEADERS = 25

function headersFound(header: string[]): string {
  const shown = header.slice(0, SHOWN_HEADERS).map((name) => JSON.stringify(clip(name.trim())))
  const more = header.length > SHOWN_HEADERS ? ` and ${header.length - SHOWN_HEADERS} more` : ''
  return `It has ${shown.join(', ')}${more}.`
}

function listOf(items: string[], conjunction: string): string {
  return items.length === 1 ? items[0]! : `${items.slice(0, -1).join(', ')} ${conjunction} ${items.at(-1)}`
}

function missingColumns(missing: Member[], header: string[]): string {
  const needs = missing.map((member) => {
    const known = KNOWN_COLUMNS.filter((column) => column.member === member).map((column) => column.name)
    return `${member === 'author' ? 'An' : 'A'} ${member} is read from ${listOf(known, 'or')}`
  })
  const choice = missing.map((member) => `${member}:<header>`).join(',')
  return (
    `The header row names no ${listOf(
      missing.map((member) => `"${member}"`),
      'or',
    )} column. ${headersFound(header)} ` + `${needs.join('; ')}; columns=${choice} names ${missing.length > 1 ? 'them' : 'it'} explicitly.`
  )
}

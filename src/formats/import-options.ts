import { MEMBERS, type ColumnChoice, type Member } from './known-columns.ts'

/** What the query string of an import asks for. */
export interface ImportOptions {
  /** Check and count, store nothing. */
  dryRun: boolean
  /** Store the valid rows and list the invalid ones, instead of all or nothing. */
  skipInvalid: boolean
  /** Leave out the rows that repeat a stored book or an earlier row, and list them. */
  skipDuplicates: boolean
  columns: ColumnChoice | undefined
}

export type ImportOptionsResult = { ok: true; options: ImportOptions } | { ok: false; message: string }

const COLUMNS_FORM = 'columns= takes title:<header>,author:<header>,year:<header>, each at most once'

/** `columns=title:Name,year:Published` as the headers it names for each member. */
function columnChoice(value: string): ColumnChoice | string {
  const choice: ColumnChoice = {}
  for (const part of value.split(',')) {
    const at = part.indexOf(':')
    const member = part.slice(0, at).trim().toLowerCase()
    const header = part.slice(at + 1).trim()
    if (at === -1 || header === '' || !(MEMBERS as readonly string[]).includes(member)) return COLUMNS_FORM
    if (choice[member as Member] !== undefined) return `columns= maps ${member} twice: ${COLUMNS_FORM}`
    choice[member as Member] = header
  }
  return choice
}

const PARAMETERS = ['dry_run', 'invalid', 'duplicates', 'columns'] as const

/**
 * The options of `POST /books/import` from its query string: `dry_run=true|false`,
 * `invalid=skip`, `duplicates=skip` and `columns=`. Other parameters are left to whoever reads them.
 */
export function importOptionsOf(query: Record<string, unknown>): ImportOptionsResult {
  const given = {} as Record<(typeof PARAMETERS)[number], string | undefined>
  for (const name of PARAMETERS) {
    const value = query[name]
    // Repeated, it arrives as an array: either value could be the one meant.
    if (value !== undefined && typeof value !== 'string') return { ok: false, message: `${name}= is given more than once` }
    given[name] = value
  }
  const { dry_run: dryRun, invalid, duplicates, columns } = given
  if (dryRun !== undefined && dryRun !== 'true' && dryRun !== 'false') return { ok: false, message: 'dry_run= takes true or false' }
  if (invalid !== undefined && invalid !== 'skip') return { ok: false, message: 'invalid= takes skip' }
  if (duplicates !== undefined && duplicates !== 'skip') return { ok: false, message: 'duplicates= takes skip' }
  const choice = columns === undefined ? undefined : columnChoice(columns)
  if (typeof choice === 'string') return { ok: false, message: choice }
  return {
    ok: true,
    options: { dryRun: dryRun === 'true', skipInvalid: invalid === 'skip', skipDuplicates: duplicates === 'skip', columns: choice },
  }
}

import { formatOfName, type ImportCheck, type ImportFormat, type ImportResult, type RowError } from 'book-catalogue-client'
import { countOf, formatNumber } from './numbers.ts'

/**
 * The most problems the service lists in one answer (docs/api.md): a list this long may have
 * been cut, so its length is a lower bound, not a count.
 */
export const LISTED_AT_MOST = 100

/** What the person chose to leave out of an import instead of storing nothing. */
export interface ImportChoices {
  skipInvalid: boolean
  skipDuplicates: boolean
}

/** The format of a file to import, by the end of its name; CSV when the name does not say. */
export function importFormat(fileName: string): ImportFormat {
  return formatOfName(fileName) ?? 'csv'
}

/** What "Import" would do with the file checked and the choices made. */
export type ImportPlan =
  /** Nothing in the file can be stored, whatever is chosen. */
  | { kind: 'nothing'; reason: string }
  /** The choices made would store nothing: the service would refuse the file, or every book is left out. */
  | { kind: 'blocked'; reason: string }
  /** `count` books would be stored; when `exact` is false, at most that many. */
  | { kind: 'ready'; count: number; exact: boolean }

/** "1 invalid row", "100 or more invalid rows": how many a list of problems stands for. */
function countListed(listed: number, word: string): string {
  return listed >= LISTED_AT_MOST ? `${formatNumber(listed)} or more ${word}s` : countOf(listed, word)
}

export function countInvalid(errors: readonly RowError[]): string {
  return countListed(errors.length, 'invalid row')
}

export function countDuplicates(duplicates: readonly unknown[]): string {
  return countListed(duplicates.length, 'duplicate')
}

export function planImport(check: ImportCheck, choices: ImportChoices): ImportPlan {
  if (check.importable === 0)
    return { kind: 'nothing', reason: 'No row of this file passes the rules of a book, so nothing can be imported.' }
  if (check.errors.length > 0 && !choices.skipInvalid)
    return {
      kind: 'blocked',
      reason: `Nothing is stored while any row is invalid: choose “Skip invalid rows” to import the others, or correct the file and choose it again.`,
    }
  const skipped = choices.skipDuplicates ? check.duplicates.length : 0
  const count = check.importable - skipped
  if (count <= 0) return { kind: 'blocked', reason: 'Every book of this file is a duplicate, so skipping them leaves nothing to import.' }
  return { kind: 'ready', count, exact: !(choices.skipDuplicates && check.duplicates.length >= LISTED_AT_MOST) }
}

/** The label of the button that imports: "Import 8 books", "Import up to 900 books". */
export function importLabel(plan: ImportPlan): string {
  if (plan.kind !== 'ready') return 'Import books'
  return `Import ${plan.exact ? '' : 'up to '}${countOf(plan.count, 'book')}`
}

/** What the dry run found, in one sentence: how many books, and what would be left out. */
export function describeCheck(check: ImportCheck, fileName: string): string {
  const { importable, errors, duplicates } = check
  let found = `“${fileName}” holds ${countOf(importable, 'book')} that can be imported`
  if (duplicates.length > 0) {
    const many = duplicates.length >= LISTED_AT_MOST ? `${formatNumber(duplicates.length)} or more` : formatNumber(duplicates.length)
    found += `, ${many} of them ${duplicates.length === 1 ? 'a duplicate' : 'duplicates'}`
  }
  if (errors.length > 0) found += `${duplicates.length > 0 ? ',' : ''} and ${countInvalid(errors)}`
  return `${found}. Nothing is stored yet.`
}

/** What an import stored and left out: "Imported 8 books from “books.csv”; skipped 2 invalid rows and 1 duplicate." */
export function describeImported(result: ImportResult, fileName: string): string {
  const skipped = [
    result.errors && result.errors.length > 0 ? countInvalid(result.errors) : undefined,
    result.duplicates && result.duplicates.length > 0 ? countDuplicates(result.duplicates) : undefined,
  ].filter((part) => part !== undefined)
  const left = skipped.length > 0 ? `; skipped ${skipped.join(' and ')}` : ''
  return `Imported ${countOf(result.imported, 'book')} from “${fileName}”${left}.`
}

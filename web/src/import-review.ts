import type { ImportCheck, RowError } from 'book-catalogue-client'
import { h, uniqueId, type Child } from './dom.ts'
import type { ImportChoices } from './import-plan.ts'
import { countDuplicates, countInvalid, LISTED_AT_MOST } from './import-plan.ts'
import { countOf, formatNumber } from './numbers.ts'

export interface ImportReview {
  element: HTMLElement
  choices(): ImportChoices
  /** While the import runs, the choices stay as they were sent. */
  disable(disabled: boolean): void
}

/** A table with a caption and column headers; a row's first cell heads it when `rowHeaders`. */
function table(caption: string, columns: string[], rows: Child[][], rowHeaders: boolean): HTMLTableElement {
  return h(
    'table',
    { class: 'import-table' },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ...columns.map((column) => h('th', { scope: 'col' }, column)))),
    h(
      'tbody',
      {},
      ...rows.map(([first, ...rest]) =>
        h('tr', {}, rowHeaders ? h('th', { scope: 'row' }, first) : h('td', {}, first), ...rest.map((cell) => h('td', {}, cell))),
      ),
    ),
  )
}

/** "2 invalid rows", or for a list that may have been cut, "100 or more invalid rows, the first 100 listed". */
function listCaption(counted: string, listed: number): string {
  return listed >= LISTED_AT_MOST ? `${counted}, the first ${formatNumber(listed)} listed` : counted
}

const rowOf = ({ row }: RowError): string => (row === undefined ? 'The file' : formatNumber(row))

function choice(label: string, hint: string): { input: HTMLInputElement; element: HTMLElement } {
  const id = uniqueId('import-choice')
  const input = h('input', { id, type: 'checkbox', 'aria-describedby': `${id}-hint` })
  const element = h('div', { class: 'choice' }, input, h('label', { for: id }, label), h('p', { id: `${id}-hint`, class: 'hint' }, hint))
  return { input, element }
}

/**
 * What a dry run found, before anything is stored: the first books as they will be stored, every
 * problem the answer lists, and the choices to leave invalid rows and duplicates out. `changed`
 * hears each change of the choices.
 */
export function createImportReview(check: ImportCheck, changed: () => void): ImportReview {
  const { importable, errors, duplicates, preview } = check
  const parts: HTMLElement[] = []
  if (preview.length > 0) {
    const books = countOf(preview.length, 'book')
    const caption =
      preview.length < importable
        ? `The first ${books} as they will be stored`
        : preview.length === 1
          ? 'The book as it will be stored'
          : `The ${books} as they will be stored`
    parts.push(
      table(
        caption,
        ['Title', 'Author', 'Year'],
        preview.map(({ title, author, year }) => [title, author, year]),
        false,
      ),
    )
  }
  if (errors.length > 0)
    parts.push(
      table(
        listCaption(countInvalid(errors), errors.length),
        ['Row', 'Problem'],
        errors.map((error) => [rowOf(error), error.message]),
        true,
      ),
    )
  if (duplicates.length > 0)
    parts.push(
      table(
        listCaption(countDuplicates(duplicates), duplicates.length),
        ['Row', 'Repeats'],
        duplicates.map(({ row, id }) => [formatNumber(row), id === null ? 'an earlier row of the file' : `book ${id} of the catalogue`]),
        true,
      ),
    )

  const skipInvalid = choice(
    'Skip invalid rows',
    errors.length > 0 ? 'Store the other books. Otherwise the file is stored whole or not at all.' : 'No invalid row was found.',
  )
  const skipDuplicates = choice(
    'Skip duplicates',
    'Leave out a row with the title, author and year of a book in the catalogue or of an earlier row (letter case and accents aside).',
  )
  const inputs = [skipInvalid.input, skipDuplicates.input]
  for (const input of inputs) input.addEventListener('change', changed)
  // With nothing importable there is nothing to choose.
  if (importable > 0)
    parts.push(h('fieldset', { class: 'choices' }, h('legend', {}, 'Rows to leave out'), skipInvalid.element, skipDuplicates.element))

  return {
    element: h('div', { class: 'import-review' }, ...parts),
    choices: () => ({ skipInvalid: skipInvalid.input.checked, skipDuplicates: skipDuplicates.input.checked }),
    disable(disabled) {
      for (const input of inputs) input.disabled = disabled
    },
  }
}

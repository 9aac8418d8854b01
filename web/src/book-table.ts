import type { Book } from 'book-catalogue-client'
import { h } from './dom.ts'
import type { Sort, SortField } from './find-query.ts'

const COLUMNS: { field: SortField; label: string }[] = [
  { field: 'title', label: 'Title' },
  { field: 'author', label: 'Author' },
  { field: 'year', label: 'Year' },
]

export interface BookTableEvents {
  sort: (field: SortField) => void
  /** A title was chosen: the book opens, to read, or to edit or delete it when the role may. */
  open: (book: Book) => void
  /** A row's checkbox changed; `range` when Shift was held, for every row from the one chosen before. */
  select: (book: Book, selected: boolean, range: boolean) => void
  /** The header's checkbox changed: every row shown. */
  selectShown: (selected: boolean) => void
}

export interface BookTable {
  element: HTMLTableElement
  show(books: readonly Book[], sort: Sort | undefined, isSelected: (id: number) => boolean): void
  /** Checks the boxes of the selected rows, after the selection changed. */
  showSelection(isSelected: (id: number) => boolean): void
  /** Puts the focus on a row's title, or returns false when that row is not shown. */
  focusRow(id: number): boolean
}

/**
 * How many rows a task draws. A page of 100 rows drawn in one task came near the 50 ms at which
 * the page stalls (docs/page.md has the figures). The first 25 fill a window; the others follow,
 * as many in a task of their own after each frame, before anyone can scroll to them.
 */
const ROWS_A_TASK = 25

/**
 * The books as a table: column headers that sort it, and on each row a checkbox and the title,
 * a button that opens the book. Two controls a row and no more: buttons are what costs most
 * to lay out. The rows' controls listen through the table body; Up and Down move between them.
 * While rows are still to come, the body is `aria-busy`.
 */
export function createBookTable(events: BookTableEvents): BookTable {
  const headerCells = COLUMNS.map(({ field, label }) => {
    const indicator = h('span', { class: 'sort-indicator', 'aria-hidden': 'true' })
    const button = h('button', { type: 'button', class: 'sort' }, label, indicator)
    button.addEventListener('click', () => events.sort(field))
    return { field, cell: h('th', { scope: 'col', class: `col-${field}` }, button), indicator }
  })
  const selectShown = h('input', { type: 'checkbox', 'aria-label': 'Select every book on this page' })
  selectShown.addEventListener('change', () => events.selectShown(selectShown.checked))
  const body = h('tbody')
  const element = h(
    'table',
    { class: 'books' },
    h('caption', { class: 'visually-hidden' }, 'Books; the column headers sort the table, and a title opens its book'),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col', class: 'col-select' }, selectShown), ...headerCells.map(({ cell }) => cell))),
    body,
  )
  let shown = new Map<number, Book>()
  /** Whether a book is selected, as last told: the rows still to come are drawn with it. */
  let selectedNow: (id: number) => boolean = () => false
  /** The books whose rows are still to come, from `from` on. */
  let coming: { books: readonly Book[]; from: number } | undefined

  const row = (book: Book, selected: boolean) =>
    h(
      'tr',
      { 'data-id': String(book.id), class: selected ? 'selected' : undefined },
      h(
        'td',
        { class: 'col-select' },
        h('input', { type: 'checkbox', 'data-action': 'select', 'aria-label': `Select ${book.title}`, checked: selected }),
      ),
      h('td', { class: 'col-title' }, h('button', { type: 'button', class: 'title', 'data-action': 'open' }, book.title)),
      h('td', { class: 'col-author' }, book.author),
      h('td', { class: 'col-year' }, book.year),
    )

  function drawComing(count: number) {
    if (coming === undefined) return
    const { books, from } = coming
    const to = Math.min(books.length, from + count)
    body.append(...books.slice(from, to).map((book) => row(book, selectedNow(book.id))))
    coming = to < books.length ? { books, from: to } : undefined
    if (coming === undefined) body.removeAttribute('aria-busy')
    else body.setAttribute('aria-busy', 'true')
    const next = coming
    // A timer set in a frame's callback runs once that frame is drawn.
    if (next !== undefined)
      requestAnimationFrame(() =>
        setTimeout(() => {
          if (coming === next) drawComing(ROWS_A_TASK)
        }),
      )
  }

  body.addEventListener('click', (event) => {
    const control = (event.target as Element).closest<HTMLElement>('[data-action]')
    const book = shown.get(Number(control?.closest('tr')?.dataset.id))
    if (!control || !book) return
    if (control instanceof HTMLInputElement) events.select(book, control.checked, event.shiftKey)
    else events.open(book)
  })

  body.addEventListener('keydown', (event) => {
    if ((event.key !== 'ArrowDown' && event.key !== 'ArrowUp') || event.altKey || event.ctrlKey || event.metaKey) return
    const control = (event.target as Element).closest('[data-action]')
    const row = control?.closest('tr')
    if (!control || !row) return
    // Up and Down would scroll the page: here they move to the same control a row away.
    event.preventDefault()
    const index = [...row.querySelectorAll('[data-action]')].indexOf(control)
    drawComing(Infinity)
    const other = event.key === 'ArrowDown' ? row.nextElementSibling : row.previousElementSibling
    other?.querySelectorAll<HTMLElement>('[data-action]')[index]?.focus()
  })

  function showSelection(isSelected: (id: number) => boolean) {
    selectedNow = isSelected
    for (const tr of body.rows) {
      const selected = isSelected(Number(tr.dataset.id))
      tr.classList.toggle('selected', selected)
      tr.querySelector<HTMLInputElement>('input[data-action="select"]')!.checked = selected
    }
    let count = 0
    for (const id of shown.keys()) if (isSelected(id)) count += 1
    selectShown.checked = count > 0 && count === shown.size
    selectShown.indeterminate = count > 0 && count < shown.size
    selectShown.disabled = shown.size === 0
  }

  return {
    element,
    show(books, sort, isSelected) {
      for (const { field, cell, indicator } of headerCells) {
        const active = sort?.field === field
        // Every column that sorts says so; the one that does says which way.
        cell.setAttribute('aria-sort', active ? (sort.descending ? 'descending' : 'ascending') : 'none')
        indicator.textContent = active ? (sort.descending ? '▼' : '▲') : '↕'
        cell.classList.toggle('sorted', active)
      }
      // The rows are made anew: a control that had the focus keeps it, when its book is still shown.
      const focused =
        document.activeElement instanceof HTMLElement && body.contains(document.activeElement) ? document.activeElement : undefined
      const focusedId = focused?.closest('tr')?.dataset.id
      const focusedAction = focused?.dataset.action
      shown = new Map(books.map((book) => [book.id, book]))
      // The rows down to the one that has the focus come at once, so that it keeps the focus.
      const now = Math.max(ROWS_A_TASK, books.findIndex((book) => String(book.id) === focusedId) + 1)
      body.replaceChildren()
      selectedNow = isSelected
      coming = { books, from: 0 }
      drawComing(now)
      showSelection(isSelected)
      if (focusedId !== undefined && focusedAction !== undefined)
        body.querySelector<HTMLElement>(`tr[data-id="${focusedId}"] [data-action="${focusedAction}"]`)?.focus()
    },
    showSelection,
    focusRow(id) {
      drawComing(Infinity)
      const button = body.querySelector<HTMLButtonElement>(`tr[data-id="${id}"] button.title`)
      button?.focus()
      return button !== null
    },
  }
}

import type { Book } from './api.ts'
import { h, hidden } from './dom.ts'
import type { Sort, SortField } from './find-query.ts'

const COLUMNS: { field: SortField; label: string }[] = [
  { field: 'title', label: 'Title' },
  { field: 'author', label: 'Author' },
  { field: 'year', label: 'Year' },
]

export interface BookTableEvents {
  sort(field: SortField): void
  edit(book: Book): void
  remove(book: Book): void
}

export interface BookTable {
  element: HTMLTableElement
  show(books: readonly Book[], sort: Sort | undefined): void
  /** Puts the focus on a row's first button, or returns false when that row is not shown. */
  focusRow(id: number): boolean
}

/** The books as a table whose column headers sort it; each row has its own Edit and Delete buttons. */
export function createBookTable(events: BookTableEvents): BookTable {
  const headerCells = COLUMNS.map(({ field, label }) => {
    const indicator = h('span', { class: 'sort-indicator', 'aria-hidden': 'true' })
    const button = h('button', { type: 'button', class: 'sort' }, label, indicator)
    button.addEventListener('click', () => events.sort(field))
    return { field, cell: h('th', { scope: 'col', class: `col-${field}` }, button), indicator }
  })
  const body = h('tbody')
  const element = h(
    'table',
    { class: 'books' },
    h('caption', { class: 'visually-hidden' }, 'Books; the column headers sort the table'),
    h('thead', {}, h('tr', {}, ...headerCells.map(({ cell }) => cell), h('th', { scope: 'col', class: 'col-actions' }, hidden('Actions')))),
    body,
  )

  const row = (book: Book) => {
    const edit = h('button', { type: 'button', 'data-id': String(book.id) }, 'Edit', hidden(` ${book.title}`))
    const remove = h('button', { type: 'button', class: 'danger' }, 'Delete', hidden(` ${book.title}`))
    edit.addEventListener('click', () => events.edit(book))
    remove.addEventListener('click', () => events.remove(book))
    return h(
      'tr',
      {},
      h('td', { class: 'col-title' }, book.title),
      h('td', { class: 'col-author' }, book.author),
      h('td', { class: 'col-year' }, book.year),
      h('td', { class: 'col-actions' }, h('div', { class: 'row-actions' }, edit, remove)),
    )
  }

  return {
    element,
    show(books, sort) {
      for (const { field, cell, indicator } of headerCells) {
        const active = sort?.field === field
        if (active) cell.setAttribute('aria-sort', sort.descending ? 'descending' : 'ascending')
        else cell.removeAttribute('aria-sort')
        indicator.textContent = active ? (sort.descending ? ' ▼' : ' ▲') : ''
      }
      body.replaceChildren(...books.map(row))
    },
    focusRow(id) {
      const button = body.querySelector<HTMLButtonElement>(`button[data-id="${id}"]`)
      button?.focus()
      return button !== null
    },
  }
}

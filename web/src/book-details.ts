import type { Book, BookCatalogue } from 'book-catalogue-client'
import { h, uniqueId } from './dom.ts'
import { openHistoryDialog } from './history-dialog.ts'
import { openModal } from './modal.ts'

/** A book as a reader sees it: its values and its history, and nothing to change them with. */
export function openBookDetails(host: HTMLElement, client: BookCatalogue, book: Book): void {
  const headingId = uniqueId('book-heading')
  const history = h('button', { type: 'button' }, 'History')
  const close = h('button', { type: 'button', class: 'primary' }, 'Close')
  const dialog = openModal(
    host,
    headingId,
    h('h2', { id: headingId }, 'Book'),
    h(
      'dl',
      { class: 'book-values' },
      h('dt', {}, 'Title'),
      h('dd', {}, book.title),
      h('dt', {}, 'Author'),
      h('dd', {}, book.author),
      h('dt', {}, 'Year'),
      h('dd', {}, book.year),
    ),
    h('div', { class: 'buttons' }, close, history),
  )
  history.addEventListener('click', () => openHistoryDialog(host, client, book, {}))
  close.addEventListener('click', () => dialog.close())
  close.focus()
}

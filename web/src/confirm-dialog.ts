import type { Book } from './api.ts'
import { h, uniqueId } from './dom.ts'
import { openModal } from './modal.ts'

/** Asks before a book is deleted; resolves true only when the person chose "Delete". */
export function confirmDelete(host: HTMLElement, book: Book): Promise<boolean> {
  return new Promise((resolve) => {
    const headingId = uniqueId('confirm-heading')
    const cancel = h('button', { type: 'button' }, 'Cancel')
    const confirm = h('button', { type: 'button', class: 'danger' }, 'Delete')
    const dialog = openModal(
      host,
      headingId,
      h('h2', { id: headingId }, 'Delete this book?'),
      h('p', {}, '“', h('strong', {}, book.title), '” by ', book.author, ` (${book.year}) will be removed from the catalogue for good.`),
      h('div', { class: 'buttons' }, confirm, cancel),
    )
    let confirmed = false
    confirm.addEventListener('click', () => {
      confirmed = true
      dialog.close()
    })
    cancel.addEventListener('click', () => dialog.close())
    dialog.addEventListener('close', () => resolve(confirmed))
    // The harmless choice has the focus, so Enter alone never deletes.
    cancel.focus()
  })
}

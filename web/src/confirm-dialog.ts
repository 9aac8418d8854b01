import type { Book } from './api.ts'
import { h, uniqueId } from './dom.ts'
import { openModal } from './modal.ts'
import { countOf, formatNumber } from './numbers.ts'

/** How many of the books a confirmation names; the rest are counted. */
const NAMED = 5

function describe(book: Book): (Node | string)[] {
  return ['“', h('strong', {}, book.title), '” by ', book.author, ` (${book.year})`]
}

/**
 * Asks once before one book or several are deleted, naming them (the first few of many);
 * resolves true only when the person chose to delete.
 */
export function confirmDelete(host: HTMLElement, books: readonly Book[]): Promise<boolean> {
  return new Promise((resolve) => {
    const headingId = uniqueId('confirm-heading')
    const one = books.length === 1 ? books[0] : undefined
    const cancel = h('button', { type: 'button' }, 'Cancel')
    const confirm = h('button', { type: 'button', class: 'danger' }, one ? 'Delete' : `Delete ${countOf(books.length, 'book')}`)
    const what = one
      ? [h('p', {}, ...describe(one), ' will be removed from the catalogue for good.')]
      : [
          h('ul', { class: 'named-books' }, ...books.slice(0, NAMED).map((book) => h('li', {}, ...describe(book)))),
          books.length > NAMED ? h('p', {}, `and ${formatNumber(books.length - NAMED)} more.`) : null,
          h('p', {}, 'They will be removed from the catalogue for good.'),
        ]
    const dialog = openModal(
      host,
      headingId,
      h('h2', { id: headingId }, one ? 'Delete this book?' : `Delete ${countOf(books.length, 'book')}?`),
      ...what,
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

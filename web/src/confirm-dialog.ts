import type { Book } from 'book-catalogue-client'
import { h, uniqueId, type Child } from './dom.ts'
import { openModal } from './modal.ts'
import { countOf, formatNumber } from './numbers.ts'

/** How many of the books a confirmation names; the rest are counted. */
const NAMED = 5

function describe(book: Book): (Node | string)[] {
  return ['“', h('strong', {}, book.title), '” by ', book.author, ` (${book.year})`]
}

export interface Confirmation {
  heading: string
  /** What will happen, in full. */
  body: Child[]
  /** The button that does it: it says what it does. */
  confirm: string
}

/**
 * Asks once before something that is hard to take back; resolves true only when the person
 * chose to go on. The harmless choice has the focus, so Enter alone never does it.
 */
export function confirmAction(host: HTMLElement, { heading, body, confirm: label }: Confirmation): Promise<boolean> {
  return new Promise((resolve) => {
    const headingId = uniqueId('confirm-heading')
    const cancel = h('button', { type: 'button' }, 'Cancel')
    const confirm = h('button', { type: 'button', class: 'danger' }, label)
    const dialog = openModal(host, headingId, h('h2', { id: headingId }, heading), ...body, h('div', { class: 'buttons' }, confirm, cancel))
    let confirmed = false
    confirm.addEventListener('click', () => {
      confirmed = true
      dialog.close()
    })
    cancel.addEventListener('click', () => dialog.close())
    dialog.addEventListener('close', () => resolve(confirmed))
    cancel.focus()
  })
}

/** Asks once before one book or several are moved to the trash, naming them (the first few of many). */
export function confirmDelete(host: HTMLElement, books: readonly Book[]): Promise<boolean> {
  const one = books.length === 1 ? books[0] : undefined
  return confirmAction(host, {
    heading: one ? 'Delete this book?' : `Delete ${countOf(books.length, 'book')}?`,
    body: one
      ? [h('p', {}, ...describe(one), ' will be moved to the trash, from which it can be restored.')]
      : [
          h('ul', { class: 'named-books' }, ...books.slice(0, NAMED).map((book) => h('li', {}, ...describe(book)))),
          books.length > NAMED ? h('p', {}, `and ${formatNumber(books.length - NAMED)} more.`) : null,
          h('p', {}, 'They will be moved to the trash, from which they can be restored.'),
        ],
    confirm: one ? 'Delete' : `Delete ${countOf(books.length, 'book')}`,
  })
}

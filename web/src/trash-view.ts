import { ApiError, type BookCatalogue, type Role, type TrashedBook } from 'book-catalogue-client'
import { confirmAction } from './confirm-dialog.ts'
import { h, uniqueId } from './dom.ts'
import { LISTING_PAGE, openHistoryDialog } from './history-dialog.ts'
import { createMessages, describeError } from './messages.ts'
import { atLeast } from './roles.ts'
import { timeElement } from './times.ts'

/**
 * The deleted books, latest deletion first (`GET /books/trash`), each with "Restore", its
 * "History", and for an admin "Purge", which removes it and its history for good.
 */
export function trashView(client: BookCatalogue, role: Role, _signal: AbortSignal): HTMLElement {
  const canPurge = atLeast(role, 'admin')
  const headingId = uniqueId('trash-heading')
  const messages = createMessages()
  const heading = h('h2', { id: headingId, tabindex: '-1' }, 'Trash')
  const body = h('tbody')
  const table = h(
    'table',
    { class: 'list-table trash', hidden: true },
    h('caption', { class: 'visually-hidden' }, 'Deleted books, latest deletion first'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { scope: 'col' }, 'Book'),
        h('th', { scope: 'col', class: 'wide-only' }, 'Deleted'),
        h('th', { scope: 'col' }, 'Actions'),
      ),
    ),
    body,
  )
  const empty = h('p', { class: 'empty', role: 'status' })
  const more = h('button', { type: 'button', hidden: true }, 'Show more deleted books')
  const view = h(
    'section',
    { class: 'trash-view', 'aria-labelledby': headingId },
    heading,
    h(
      'p',
      { class: 'hint' },
      'Deleted books wait here until they are restored, with their ids and their history, or purged for good once the service’s retention time has passed (30 days unless it is set otherwise).',
    ),
    messages.element,
    table,
    empty,
    more,
  )
  const deleted = client.books.trash({ limit: LISTING_PAGE })
  let next: string | undefined

  function row(book: TrashedBook): HTMLTableRowElement {
    const restore = h(
      'button',
      { type: 'button', class: 'primary' },
      'Restore',
      h('span', { class: 'visually-hidden' }, ` “${book.title}”`),
    )
    const history = h('button', { type: 'button' }, 'History', h('span', { class: 'visually-hidden' }, ` of “${book.title}”`))
    const purge =
      canPurge && h('button', { type: 'button', class: 'danger' }, 'Purge', h('span', { class: 'visually-hidden' }, ` “${book.title}”`))
    const deleted = () => [timeElement(book.deleted_at), h('span', { class: 'byline' }, `by ${book.deleted_by}`)]
    // On a narrow screen the deletion goes under the book, leaving the width to the title.
    const tr = h(
      'tr',
      { 'data-id': String(book.id) },
      h(
        'td',
        {},
        h('strong', { class: 'title' }, book.title),
        h('span', { class: 'byline' }, `${book.author}, ${book.year}`),
        h('span', { class: 'byline narrow-only' }, 'Deleted ', ...deleted()),
      ),
      h('td', { class: 'wide-only' }, ...deleted()),
      h('td', {}, h('div', { class: 'row-actions' }, restore, history, purge)),
    )
    restore.addEventListener('click', () => void restoreBook(book, tr))
    history.addEventListener('click', () => openHistoryDialog(view, client, book, {}))
    if (purge) purge.addEventListener('click', () => void purgeBook(book, tr))
    return tr
  }

  function showEmpty() {
    table.hidden = body.rows.length === 0
    empty.textContent = body.rows.length === 0 && next === undefined ? 'The trash is empty.' : ''
    more.hidden = next === undefined
  }

  /** Takes a book's row away; the focus goes to the row in its place, or to the heading. */
  function leave(tr: HTMLTableRowElement) {
    const neighbour = (tr.nextElementSibling ?? tr.previousElementSibling) as HTMLTableRowElement | null
    const hadFocus = tr.contains(document.activeElement) || document.activeElement === document.body
    tr.remove()
    showEmpty()
    if (hadFocus) (neighbour?.querySelector('button') ?? heading).focus()
  }

  /** Says why a restore or a purge failed; a book no longer in the trash leaves it here too. */
  function gone(err: unknown, book: TrashedBook, tr: HTMLTableRowElement) {
    messages.error(describeError(err, `“${book.title}” is no longer in the trash: it was restored or purged meanwhile.`))
    if (err instanceof ApiError && err.status === 404) leave(tr)
  }

  async function restoreBook(book: TrashedBook, tr: HTMLTableRowElement) {
    messages.clear()
    try {
      await client.books.restore(book.id)
      messages.notice(`Restored “${book.title}”: it is in the catalogue again.`)
      leave(tr)
    } catch (err) {
      gone(err, book, tr)
    }
  }

  async function purgeBook(book: TrashedBook, tr: HTMLTableRowElement) {
    const sure = await confirmAction(view, {
      heading: 'Purge this book for good?',
      body: [
        h(
          'p',
          {},
          '“',
          h('strong', {}, book.title),
          `” by ${book.author} (${book.year}) and its history will be gone for good. This cannot be undone.`,
        ),
      ],
      confirm: 'Purge',
    })
    if (!sure) return
    messages.clear()
    try {
      await client.books.purge(book.id)
      messages.notice(`Purged “${book.title}”.`)
      leave(tr)
    } catch (err) {
      gone(err, book, tr)
    }
  }

  async function read(first: boolean) {
    more.disabled = true
    try {
      const page = await deleted.page(first ? undefined : next)
      const shown = body.rows.length
      next = page.next
      body.append(...page.items.map(row))
      showEmpty()
      // With no more to show the button goes: the focus goes to the first book it brought.
      if (!first && more.hidden) body.rows[shown]?.querySelector('button')?.focus()
    } catch (err) {
      messages.error(describeError(err), () => void read(first))
    } finally {
      more.disabled = false
    }
  }

  more.addEventListener('click', () => void read(false))
  void read(true)
  return view
}

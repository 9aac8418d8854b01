import { ApiError, type Book, type BookCatalogue, type Change } from 'book-catalogue-client'
import { changedFields, FIELD_LABELS, FIELDS, fieldsOf } from './book-changes.ts'
import type { BookFields } from './book-rules.ts'
import { h, hidden, uniqueId, type Child } from './dom.ts'
import { createMessages, describeError } from './messages.ts'
import { openModal } from './modal.ts'
import { formatTime, timeElement } from './times.ts'

export interface HistoryOptions {
  /**
   * Given when the person may change books: each earlier version then has "Revert to this
   * version", as long as the book is stored (a book in the trash is restored first).
   */
  reverted?: (book: Book, etag: string | undefined) => void
}

const KINDS: Record<Change['kind'], string> = {
  created: 'Added',
  updated: 'Edited',
  deleted: 'Deleted',
  restored: 'Restored',
  purged: 'Purged',
}

/** "Year: 1965 → 1966", read as "Year: from 1965 to 1966". */
function fieldChanges(before: BookFields, after: BookFields): Child {
  const names = changedFields(before, after)
  if (names.length === 0) return h('p', { class: 'change-what' }, 'No field changed.')
  return h(
    'ul',
    { class: 'change-what' },
    ...names.map((name) =>
      h(
        'li',
        {},
        `${FIELD_LABELS[name]}: `,
        hidden('from '),
        h('span', { class: 'old' }, String(before[name])),
        h('span', { 'aria-hidden': 'true' }, ' → '),
        hidden(' to '),
        h('span', { class: 'new' }, String(after[name])),
      ),
    ),
  )
}

function values(book: BookFields): Child {
  return h('ul', { class: 'change-what' }, ...FIELDS.map((name) => h('li', {}, `${FIELD_LABELS[name]}: ${book[name]}`)))
}

/** How many changes or deleted books a page of the history or the trash asks for. */
export const LISTING_PAGE = 50

/**
 * A book's history, newest first: who changed it, when, and what changed, field by field, and
 * for an editor a way back to any earlier version (`POST /book/{id}/revert`, with the ETag read
 * when the history was, so that a change made meanwhile is never overwritten unseen).
 */
export function openHistoryDialog(host: HTMLElement, client: BookCatalogue, book: Book, options: HistoryOptions): void {
  const headingId = uniqueId('history-heading')
  const messages = createMessages()
  const heading = h('h2', { id: headingId, tabindex: '-1' }, `History of “${book.title}”`)
  const list = h('ol', { class: 'history', 'aria-labelledby': headingId })
  const more = h('button', { type: 'button', hidden: true }, 'Show older changes')
  const close = h('button', { type: 'button' }, 'Close')
  const dialog = openModal(host, headingId, heading, messages.element, list, h('div', { class: 'buttons' }, more, close))
  dialog.classList.add('history-dialog')
  const changesOf = client.books.history(book.id, { limit: LISTING_PAGE })
  let changes: Change[] = []
  let next: string | undefined
  /** The book as stored, when it is and the person may bring versions back: what each version is compared with. */
  let current: { book: BookFields; etag: string | undefined } | undefined

  close.addEventListener('click', () => dialog.close())
  more.addEventListener('click', () => void readMore())

  function item(change: Change, older: Change | undefined): HTMLLIElement {
    let what: Child = null
    if (change.kind === 'deleted') what = h('p', { class: 'change-what' }, 'Moved to the trash.')
    else if (change.kind === 'restored') what = h('p', { class: 'change-what' }, 'Brought back from the trash.')
    else if (change.book && older?.book) what = fieldChanges(older.book, change.book)
    else if (change.book) what = values(change.book)
    const when = formatTime(change.at)
    let revert: HTMLButtonElement | undefined
    if (current && change.book && change.kind !== 'deleted' && changedFields(current.book, change.book).length > 0) {
      const version = change
      revert = h('button', { type: 'button', class: 'revert' }, 'Revert to this version', hidden(` of ${when}`))
      revert.addEventListener('click', () => void revertTo(version))
    }
    return h(
      'li',
      { tabindex: '-1', 'data-seq': String(change.seq) },
      h('p', { class: 'change-head' }, h('strong', {}, KINDS[change.kind]), ` by ${change.actor}, `, timeElement(change.at)),
      what,
      revert,
    )
  }

  function render() {
    list.replaceChildren(...changes.map((change, index) => item(change, changes[index + 1])))
    more.hidden = next === undefined
  }

  /** Reads the history from its newest change, and the book as it is now when versions can be brought back. */
  async function read(): Promise<boolean> {
    list.setAttribute('aria-busy', 'true')
    try {
      const [page, stored] = await Promise.all([
        changesOf.page(),
        options.reverted
          ? client.books.get(book.id).catch((err: unknown) => {
              // In the trash: its history shows, and it is restored before any version comes back.
              if (err instanceof ApiError && err.status === 404) return undefined
              throw err
            })
          : undefined,
      ])
      changes = page.items
      next = page.next
      current = stored && { book: fieldsOf(stored.book), etag: stored.etag }
      render()
      return true
    } catch (err) {
      messages.error(describeError(err, 'This book and its history are gone: it was purged from the trash.'), () => void read())
      return false
    } finally {
      list.removeAttribute('aria-busy')
    }
  }

  async function readMore() {
    if (next === undefined) return
    const shown = changes.length
    more.disabled = true
    try {
      const page = await changesOf.page(next)
      changes = [...changes, ...page.items]
      next = page.next
      render()
      // With no older change left the button goes: the focus goes to the first change it brought.
      if (more.hidden) list.querySelectorAll('li')[shown]?.focus()
    } catch (err) {
      messages.error(describeError(err), () => void readMore())
    } finally {
      more.disabled = false
    }
  }

  async function revertTo(version: Change) {
    messages.clear()
    for (const button of list.querySelectorAll('button')) button.disabled = true
    try {
      const reverted = await client.books.revert(book.id, version.seq, { ifMatch: current?.etag })
      options.reverted?.(reverted.book, reverted.etag)
      await read()
      messages.notice(`“${reverted.book.title}” has the values of ${formatTime(version.at)} again.`)
    } catch (err) {
      const changed = err instanceof ApiError && err.status === 412
      await read()
      messages.error(
        changed
          ? 'The book was changed meanwhile, so no version was brought back. Its history now shows that change too.'
          : describeError(err, 'This book is no longer stored: it was deleted meanwhile. The Trash can bring it back.'),
      )
    }
    heading.focus()
  }

  void read()
  heading.focus()
}

import { ApiError, type Api, type Book } from './api.ts'
import { checkBook, type FieldErrors, type FieldName } from './book-rules.ts'
import type { BookChange } from './change-feed.ts'
import { h, uniqueId } from './dom.ts'
import { confirmDelete } from './confirm-dialog.ts'
import { createMessages, describeError } from './messages.ts'
import { openModal } from './modal.ts'

export interface BookDialogEvents {
  /** The book as stored after "Save". */
  saved(book: Book, created: boolean): void
  /** The book as it is now, after someone else changed it. */
  changed(book: Book): void
  /** The book was deleted by someone else. */
  gone(id: number): void
  /** The person chose to delete the book, and confirmed it; the dialog has closed. */
  remove(book: Book): void
}

/** An open book dialog, as the page that opened it sees it. */
export interface BookDialog {
  /**
   * A change of some book, made anywhere: when another person changed or deleted the book being
   * edited, the form says so at once, keeping what was typed.
   */
  heard(change: BookChange): void
}

interface Field {
  input: HTMLInputElement
  error: HTMLParagraphElement
  wrapper: HTMLDivElement
}

function field(name: FieldName, label: string, value: string, extra: Record<string, string> = {}): Field {
  const id = uniqueId(`book-${name}`)
  const errorId = `${id}-error`
  const input = h('input', { id, name, value, 'aria-describedby': errorId, autocomplete: 'off', ...extra })
  input.value = value
  const error = h('p', { id: errorId, class: 'field-error', role: 'alert' })
  return { input, error, wrapper: h('div', { class: 'field' }, h('label', { for: id }, label), input, error) }
}

/**
 * The form to add a book (`existing` undefined) or to edit one. Edits carry the book's ETag in
 * `If-Match`: when someone else changed the book meanwhile, nothing is overwritten and the form
 * shows the book's current values, as soon as the change is heard of, or when "Save" finds it.
 */
export function openBookDialog(
  host: HTMLElement,
  api: Api,
  existing: { book: Book; etag: string | undefined } | undefined,
  events: BookDialogEvents,
): BookDialog {
  const headingId = uniqueId('book-heading')
  const messages = createMessages()
  const current = existing?.book
  let etag = existing?.etag
  let deleted = false
  /** While "Save" is under way, the change heard of is most likely its own: its answer says what became of it. */
  let saving = false
  const fields: Record<FieldName, Field> = {
    title: field('title', 'Title', current?.title ?? '', { maxlength: '500' }),
    author: field('author', 'Author', current?.author ?? '', { maxlength: '500' }),
    year: field('year', 'Year', current === undefined ? '' : String(current.year), { inputmode: 'numeric', class: 'year' }),
  }
  const conflict = h('div', { class: 'conflict' })
  const save = h('button', { type: 'submit', class: 'primary' }, 'Save')
  const cancel = h('button', { type: 'button' }, 'Cancel')
  const remove = current && h('button', { type: 'button', class: 'danger delete' }, 'Delete')
  const form = h(
    'form',
    { novalidate: true, method: 'dialog' },
    h('h2', { id: headingId }, current === undefined ? 'Add a book' : 'Edit book'),
    messages.element,
    conflict,
    fields.title.wrapper,
    fields.author.wrapper,
    fields.year.wrapper,
    h('div', { class: 'buttons' }, save, cancel, remove),
  )
  const dialog = openModal(host, headingId, form)
  cancel.addEventListener('click', () => dialog.close())
  remove?.addEventListener('click', () => {
    void (async () => {
      // The confirmation opens over this dialog: "Cancel" there comes back to the form as it was.
      if (!current || !(await confirmDelete(host, [current]))) return
      dialog.close()
      events.remove(current)
    })()
  })

  const showErrors = (errors: FieldErrors) => {
    for (const [name, { input, error }] of Object.entries(fields) as [FieldName, Field][]) {
      error.textContent = errors[name] ?? ''
      if (errors[name]) input.setAttribute('aria-invalid', 'true')
      else input.removeAttribute('aria-invalid')
    }
  }

  const showConflict = (book: Book) => {
    conflict.replaceChildren(
      h('p', {}, 'Its values now:'),
      h(
        'dl',
        {},
        h('dt', {}, 'Title'),
        h('dd', {}, book.title),
        h('dt', {}, 'Author'),
        h('dd', {}, book.author),
        h('dt', {}, 'Year'),
        h('dd', {}, book.year),
      ),
      h('p', {}, 'Your changes are still in the form: Save again to replace these values with them, or Cancel to keep them.'),
    )
  }

  form.addEventListener('submit', (event) => {
    void (async () => {
      event.preventDefault()
      messages.clear()
      const checked = checkBook({ title: fields.title.input.value, author: fields.author.input.value, year: fields.year.input.value })
      if ('errors' in checked) {
        showErrors(checked.errors)
        const first = (Object.keys(fields) as FieldName[]).find((name) => checked.errors[name])
        if (first) fields[first].input.focus()
        return
      }
      showErrors({})
      save.disabled = true
      saving = true
      try {
        if (current === undefined) {
          events.saved(await api.createBook(checked.book), true)
        } else {
          const updated = await api.updateBook(current.id, checked.book, etag)
          events.saved(updated.book, false)
        }
        dialog.close()
      } catch (err) {
        await explain(err)
      } finally {
        saving = false
        save.disabled = deleted
      }
    })()
  })

  async function explain(err: unknown): Promise<void> {
    if (!(err instanceof ApiError) || current === undefined || (err.status !== 412 && err.status !== 404)) {
      messages.error(describeError(err))
      return
    }
    if (err.status === 412) await showCurrent(current, 'This book was changed meanwhile. Nothing was saved; its current values are shown.')
    else gone(current)
  }

  /** Shows the book's values now beside what the person typed, and takes its ETag, so that "Save" replaces them knowingly. */
  async function showCurrent(book: Book, text: string): Promise<void> {
    try {
      const now = await api.getBook(book.id)
      etag = now.etag
      showConflict(now.book)
      events.changed(now.book)
      messages.error(text)
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) gone(book)
      else messages.error(describeError(err))
    }
  }

  function gone(book: Book): void {
    events.gone(book.id)
    conflict.replaceChildren()
    deleted = true
    save.disabled = true
    if (remove) remove.disabled = true
    messages.error('This book was deleted by someone else meanwhile, so it cannot be saved.')
  }

  fields.title.input.focus()
  return {
    heard(change) {
      if (current === undefined || change.book_id !== current.id || saving || deleted || !dialog.open) return
      if (change.kind === 'deleted' || change.kind === 'purged') gone(current)
      else
        void showCurrent(current, `${change.actor} changed this book just now. Nothing of yours was saved yet; its values now are shown.`)
    },
  }
}

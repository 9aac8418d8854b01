import { ApiError, type Book, type BookCatalogue, type Change } from 'book-catalogue-client'
import { changedFields, changes, FIELD_LABELS, FIELDS, fieldsOf, rebase, type Values } from './book-changes.ts'
import { checkBook, type BookFields, type FieldErrors, type FieldName } from './book-rules.ts'
import { h, uniqueId } from './dom.ts'
import { confirmDelete } from './confirm-dialog.ts'
import { openHistoryDialog } from './history-dialog.ts'
import { createMessages, describeError } from './messages.ts'
import { openModal } from './modal.ts'

export interface BookDialogEvents {
  /** The book as stored after "Save", with its new ETag. */
  saved(book: Book, etag: string | undefined, created: boolean): void
  /** The book as it is now, after someone else changed it, or a version of its history was brought back. */
  changed(book: Book): void
  /** The book was deleted by someone else. */
  gone(id: number): void
  /**
   * The person chose to delete the book, and confirmed it; the dialog has closed. `etag` is the
   * version the form showed: the deletion must not take a version the person has not seen.
   */
  remove(book: Book, etag: string | undefined): void
}

/** An open book dialog, as the page that opened it sees it. */
export interface BookDialog {
  /**
   * A change of some book, made anywhere: when another person changed or deleted the book being
   * edited, the form says so at once, keeping what was typed.
   */
  heard(change: Change): void
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

const asText = (book: BookFields): Values => ({ title: book.title, author: book.author, year: String(book.year) })

/**
 * The form to add a book (`existing` undefined) or to edit one. Edits send only the fields the
 * person changed, with the book's ETag in `If-Match`: when someone else changed the book
 * meanwhile, nothing is overwritten; the form puts the person's changes on top of the current
 * version, shows what each of them changed, and "Save again" sends the person's fields only. A
 * change heard of while the form is open does the same at once, before the person saves.
 */
export function openBookDialog(
  host: HTMLElement,
  client: BookCatalogue,
  existing: { book: Book; etag: string | undefined } | undefined,
  events: BookDialogEvents,
): BookDialog {
  const headingId = uniqueId('book-heading')
  const messages = createMessages()
  const id = existing?.book.id
  /** The version the form started from: what "the person changed" is measured against. */
  let base: BookFields | undefined = existing && fieldsOf(existing.book)
  let etag = existing?.etag
  let deleted = false
  /** While "Save" is under way, a change heard of is most likely its own: its answer says what became of it. */
  let saving = false
  const fields: Record<FieldName, Field> = {
    title: field('title', 'Title', base?.title ?? '', { maxlength: '500' }),
    author: field('author', 'Author', base?.author ?? '', { maxlength: '500' }),
    year: field('year', 'Year', base === undefined ? '' : String(base.year), { inputmode: 'numeric', class: 'year' }),
  }
  const conflict = h('div', { class: 'conflict' })
  const save = h('button', { type: 'submit', class: 'primary' }, 'Save')
  const cancel = h('button', { type: 'button' }, 'Cancel')
  const history = existing && h('button', { type: 'button' }, 'History')
  const remove = existing && h('button', { type: 'button', class: 'danger delete' }, 'Delete')
  const form = h(
    'form',
    { novalidate: true, method: 'dialog' },
    h('h2', { id: headingId }, existing === undefined ? 'Add a book' : 'Edit book'),
    messages.element,
    conflict,
    fields.title.wrapper,
    fields.author.wrapper,
    fields.year.wrapper,
    h('div', { class: 'buttons' }, save, cancel, history, remove),
  )
  const dialog = openModal(host, headingId, form)
  const stored = (): Book | undefined => (id === undefined || base === undefined ? undefined : { id, ...base })
  const typed = (): Values => ({ title: fields.title.input.value, author: fields.author.input.value, year: fields.year.input.value })

  cancel.addEventListener('click', () => dialog.close())
  remove?.addEventListener('click', () => {
    void (async () => {
      const book = stored()
      // The confirmation opens over this dialog: "Cancel" there comes back to the form as it was.
      if (!book || !(await confirmDelete(host, [book]))) return
      dialog.close()
      events.remove(book, etag)
    })()
  })
  history?.addEventListener('click', () => {
    const book = stored()
    if (!book) return
    // Over the form, which keeps what the person typed; a version brought back becomes the form's starting point.
    openHistoryDialog(host, client, book, {
      reverted(reverted, newEtag) {
        const rebased = rebase(asText(base!), typed(), asText(reverted))
        fill(rebased.form)
        base = fieldsOf(reverted)
        etag = newEtag
        conflict.replaceChildren()
        events.changed(reverted)
      },
    })
  })

  // A field that keeps its value is not written to: the caret of the one being typed in stays where it is.
  const fill = (values: Values) => {
    for (const name of FIELDS) if (fields[name].input.value !== String(values[name])) fields[name].input.value = String(values[name])
  }

  const showErrors = (errors: FieldErrors) => {
    for (const [name, { input, error }] of Object.entries(fields) as [FieldName, Field][]) {
      error.textContent = errors[name] ?? ''
      if (errors[name]) input.setAttribute('aria-invalid', 'true')
      else input.removeAttribute('aria-invalid')
    }
  }

  /** What each side changed: theirs, saved meanwhile, and the person's, still in the form. */
  const showConflict = (before: Values, now: Values, edited: Values, theirs: FieldName[], mine: FieldName[]) => {
    const unchanged = () => h('span', { class: 'muted' }, 'no change')
    const rows = FIELDS.filter((name) => theirs.includes(name) || mine.includes(name)).map((name) =>
      h(
        'tr',
        {},
        h('th', { scope: 'row' }, FIELD_LABELS[name]),
        h('td', {}, theirs.includes(name) ? String(now[name]) : unchanged()),
        h('td', {}, mine.includes(name) ? String(edited[name]) : unchanged()),
      ),
    )
    const both = mine.filter((name) => theirs.includes(name)).map((name) => FIELD_LABELS[name].toLowerCase())
    conflict.replaceChildren(
      h(
        'table',
        { class: 'conflict-table' },
        h('caption', {}, `What changed since you opened “${before.title}”`),
        h(
          'thead',
          {},
          h('tr', {}, h('th', { scope: 'col' }, 'Field'), h('th', { scope: 'col' }, 'Saved meanwhile'), h('th', { scope: 'col' }, 'Yours')),
        ),
        h('tbody', {}, ...rows),
      ),
      h(
        'p',
        {},
        mine.length === 0
          ? 'You changed nothing the other change did not: the form shows the book as it is now.'
          : `“${save.textContent}” saves only your changes, on top of the current version${both.length > 0 ? `; for the ${both.join(' and the ')}, yours replaces theirs` : ''}. “Cancel” keeps the book as it is now.`,
      ),
    )
  }

  form.addEventListener('submit', (event) => {
    void (async () => {
      event.preventDefault()
      messages.clear()
      const checked = checkBook({ title: fields.title.input.value, author: fields.author.input.value, year: fields.year.input.value })
      if ('errors' in checked) {
        showErrors(checked.errors)
        const first = FIELDS.find((name) => checked.errors[name])
        if (first) fields[first].input.focus()
        return
      }
      showErrors({})
      if (id !== undefined && base !== undefined && changedFields(base, checked.book).length === 0) {
        // Nothing to send: the book is already as the form says.
        dialog.close()
        return
      }
      save.disabled = true
      saving = true
      try {
        if (id === undefined || base === undefined) {
          const created = await client.books.create(checked.book)
          events.saved(created.book, created.etag, true)
        } else {
          const updated = await client.books.update(id, changes(base, checked.book), { ifMatch: etag })
          events.saved(updated.book, updated.etag, false)
        }
        dialog.close()
      } catch (err) {
        await explain(err, checked.book)
      } finally {
        saving = false
        save.disabled = deleted
      }
    })()
  })

  async function explain(err: unknown, edited: BookFields): Promise<void> {
    if (!(err instanceof ApiError) || id === undefined || base === undefined || (err.status !== 412 && err.status !== 404)) {
      messages.error(describeError(err))
      return
    }
    if (err.status === 412) {
      try {
        const now = await client.books.get(id)
        const before = base
        const current = fieldsOf(now.book)
        const rebased = rebase(before, edited, current)
        fill(rebased.form)
        base = current
        etag = now.etag
        save.textContent = 'Save again'
        showConflict(before, current, edited, rebased.theirs, rebased.mine)
        events.changed(now.book)
        messages.error(
          'This book was changed meanwhile, so nothing was saved. The form now holds your changes on top of the current version.',
        )
        return
      } catch (again) {
        if (!(again instanceof ApiError && again.status === 404)) {
          messages.error(describeError(again))
          return
        }
      }
    }
    gone(id)
  }

  function gone(id: number): void {
    events.gone(id)
    conflict.replaceChildren()
    deleted = true
    save.disabled = true
    if (remove) remove.disabled = true
    messages.error('This book was deleted by someone else meanwhile, so it cannot be saved. The Trash can bring it back.')
  }

  /** Someone else changed the book while the form is open: their change becomes the form's base, the person's stay on top. */
  async function overtaken(id: number, actor: string): Promise<void> {
    let now: { book: Book; etag: string | undefined }
    try {
      now = await client.books.get(id)
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) gone(id)
      else messages.error(describeError(err))
      return
    }
    if (deleted || saving || !dialog.open) return
    const before = asText(base!)
    const current = fieldsOf(now.book)
    const rebased = rebase(before, typed(), asText(current))
    fill(rebased.form)
    base = current
    etag = now.etag
    showConflict(before, asText(current), typed(), rebased.theirs, rebased.mine)
    events.changed(now.book)
    messages.error(`${actor} changed this book just now. The form holds your changes on top of the version saved meanwhile.`)
  }

  fields.title.input.focus()
  return {
    heard(change) {
      if (id === undefined || change.book_id !== id || saving || deleted || !dialog.open) return
      if (change.kind === 'deleted' || change.kind === 'purged') gone(id)
      else void overtaken(id, change.actor)
    },
  }
}

import { ApiError, type Api, type RowError } from './api.ts'
import { h, uniqueId } from './dom.ts'
import { createMessages, describeError } from './messages.ts'
import { openModal } from './modal.ts'
import { countOf, formatNumber } from './numbers.ts'

function rowErrors(err: unknown): RowError[] | undefined {
  if (!(err instanceof ApiError) || err.status !== 400) return undefined
  const errors = (err.data as { errors?: RowError[] } | null)?.errors
  return Array.isArray(errors) ? errors : undefined
}

/**
 * "Import books": a file input that is also a drop zone. The file goes whole to the import, all
 * or nothing; the refused rows are listed here, in the dialog, where the person is looking.
 * On success the dialog closes and `imported` says what came in.
 */
export function openImportDialog(host: HTMLElement, api: Api, imported: (text: string) => void): void {
  const headingId = uniqueId('import-heading')
  const inputId = uniqueId('import-file')
  const messages = createMessages()
  const input = h('input', {
    id: inputId,
    type: 'file',
    accept: '.csv,.ndjson,.json,text/csv,application/json,application/x-ndjson',
    'aria-describedby': `${inputId}-hint`,
  })
  const drop = h(
    'div',
    { class: 'drop-zone' },
    h('label', { for: inputId }, 'File to import'),
    input,
    h(
      'p',
      { id: `${inputId}-hint`, class: 'hint' },
      'A CSV file with title, author and year columns (or NDJSON, or a JSON array); or drop it here. Every book of it is stored, or none.',
    ),
  )
  const close = h('button', { type: 'button' }, 'Close')
  const dialog = openModal(
    host,
    headingId,
    h('h2', { id: headingId }, 'Import books'),
    drop,
    messages.element,
    h('div', { class: 'buttons' }, close),
  )
  close.addEventListener('click', () => dialog.close())

  async function importFile(file: File) {
    messages.clear()
    messages.notice(`Importing “${file.name}”…`)
    drop.setAttribute('aria-busy', 'true')
    input.disabled = true
    try {
      const { imported: count } = await api.importBooks(file)
      dialog.close()
      imported(`Imported ${countOf(count, 'book')} from “${file.name}”.`)
    } catch (err) {
      messages.clear()
      const rows = rowErrors(err)
      if (rows)
        messages.errors(
          `Nothing was imported from “${file.name}”: fix these rows and try again.`,
          rows.map(({ row, message }) => `Row ${formatNumber(row)}: ${message}`),
        )
      else messages.error(describeError(err))
    } finally {
      drop.removeAttribute('aria-busy')
      input.disabled = false
      // So that choosing the same file again, once fixed, imports it again.
      input.value = ''
    }
  }

  input.addEventListener('change', () => {
    const file = input.files?.[0]
    if (file) void importFile(file)
  })
  drop.addEventListener('dragover', (event) => {
    event.preventDefault()
    drop.classList.add('dragging')
  })
  drop.addEventListener('dragleave', () => drop.classList.remove('dragging'))
  drop.addEventListener('drop', (event) => {
    event.preventDefault()
    drop.classList.remove('dragging')
    const file = event.dataTransfer?.files[0]
    if (file) void importFile(file)
  })
  input.focus()
}

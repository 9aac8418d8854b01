import { ApiError, type Api, type RowError } from './api.ts'
import { h, uniqueId } from './dom.ts'
import { exportUrl, type FindQuery } from './find-query.ts'
import { describeError, type Messages } from './messages.ts'

/** Long enough for the browser to start saving the file; the URL only holds the file in memory. */
const OBJECT_URL_LIFETIME_MS = 60_000

export interface BookTransferEvents {
  /** The query of the books shown, which the export follows. */
  query(): FindQuery
  /** After an import: the list reloads to show the new books. */
  imported(): Promise<void>
}

function rowErrors(err: unknown): RowError[] | undefined {
  if (!(err instanceof ApiError) || err.status !== 400) return undefined
  const errors = (err.data as { errors?: RowError[] } | null)?.errors
  return Array.isArray(errors) ? errors : undefined
}

/** "Import books" (a file input that is also a drop zone) and "Export CSV" of the books shown. */
export function bookTransfer(api: Api, messages: Messages, events: BookTransferEvents): HTMLElement {
  const id = uniqueId('import')
  const input = h('input', {
    id,
    type: 'file',
    accept: '.csv,.ndjson,.json,text/csv,application/json,application/x-ndjson',
    'aria-describedby': `${id}-hint`,
  })
  const drop = h(
    'div',
    { class: 'drop-zone' },
    h('label', { for: id }, 'Import books'),
    input,
    h('p', { id: `${id}-hint`, class: 'hint' }, 'A CSV file with title, author and year columns; or drop it here.'),
  )
  const exportButton = h('button', { type: 'button' }, 'Export CSV')

  async function importFile(file: File) {
    messages.clear()
    drop.setAttribute('aria-busy', 'true')
    try {
      const { imported } = await api.importBooks(file)
      await events.imported()
      messages.notice(`Imported ${imported} book${imported === 1 ? '' : 's'} from “${file.name}”.`)
    } catch (err) {
      const rows = rowErrors(err)
      if (rows)
        messages.errors(
          `Nothing was imported from “${file.name}”: fix these rows and try again.`,
          rows.map(({ row, message }) => `Row ${row}: ${message}`),
        )
      else messages.error(describeError(err))
    } finally {
      drop.removeAttribute('aria-busy')
      // So that choosing the same file again, once fixed, imports it again.
      input.value = ''
    }
  }

  async function exportFile() {
    messages.clear()
    exportButton.disabled = true
    try {
      const href = URL.createObjectURL(await api.exportBooks(exportUrl(events.query())))
      h('a', { href, download: 'books.csv' }).click()
      setTimeout(() => URL.revokeObjectURL(href), OBJECT_URL_LIFETIME_MS)
    } catch (err) {
      messages.error(describeError(err))
    } finally {
      exportButton.disabled = false
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
  exportButton.addEventListener('click', () => void exportFile())

  return h('div', { class: 'transfer' }, drop, exportButton)
}

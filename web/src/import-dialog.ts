import { ApiError, type BookCatalogue, type ImportCheck, type RowError } from 'book-catalogue-client'
import { h, uniqueId } from './dom.ts'
import { describeCheck, describeImported, importFormat, importLabel, planImport } from './import-plan.ts'
import { createImportReview, type ImportReview } from './import-review.ts'
import { createMessages, describeError } from './messages.ts'
import { openModal } from './modal.ts'
import { formatNumber } from './numbers.ts'
import { createUploadProgress } from './upload-progress.ts'

function rowErrors(err: unknown): RowError[] | undefined {
  if (!(err instanceof ApiError) || err.status !== 400) return undefined
  const errors = (err.data as { errors?: RowError[] } | null)?.errors
  return Array.isArray(errors) ? errors : undefined
}

const describeRowError = ({ row, message }: RowError): string => (row === undefined ? message : `Row ${formatNumber(row)}: ${message}`)

export interface ImportEvents {
  /** Books were stored: what came in and what was left out, in a sentence. */
  imported(text: string): void
  /** The import failed after its dialog was closed, the file already sent: why, in a sentence. */
  failed(text: string): void
}

/**
 * "Import books": a file input that is also a drop zone. A file is checked first (a dry run,
 * nothing stored): the first books as they will be stored, every problem, and the choices to
 * skip invalid rows and duplicates; then "Import N books" sends it again to be stored. Each
 * upload shows its progress and can be cancelled while the file is on its way.
 */
export function openImportDialog(host: HTMLElement, client: BookCatalogue, events: ImportEvents): void {
  const headingId = uniqueId('import-heading')
  const inputId = uniqueId('import-file')
  const reasonId = uniqueId('import-reason')
  const messages = createMessages()
  const progress = createUploadProgress()
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
      'A CSV file with title, author and year columns (or NDJSON, or a JSON array); or drop it here. It is checked first: nothing is stored until you choose to import it.',
    ),
  )
  const reviewArea = h('div')
  const reason = h('p', { id: reasonId, class: 'hint import-reason', hidden: true })
  const importButton = h('button', { type: 'button', class: 'primary', hidden: true, 'aria-describedby': reasonId }, 'Import books')
  const close = h('button', { type: 'button' }, 'Close')
  const dialog = openModal(
    host,
    headingId,
    h('h2', { id: headingId }, 'Import books'),
    drop,
    messages.element,
    progress.element,
    reviewArea,
    reason,
    h('div', { class: 'buttons' }, importButton, close),
  )
  dialog.classList.add('import-dialog')

  let file: File | undefined
  let check: ImportCheck | undefined
  let review: ImportReview | undefined
  /** The upload under way, if any. */
  let running: { controller: AbortController; importing: boolean; sent: boolean } | undefined

  function showPlan() {
    if (!check || !review) return
    const plan = planImport(check, review.choices())
    importButton.textContent = importLabel(plan)
    importButton.hidden = plan.kind === 'nothing'
    importButton.disabled = plan.kind !== 'ready'
    reason.hidden = plan.kind === 'ready'
    reason.textContent = plan.kind === 'ready' ? '' : plan.reason
  }

  function forgetCheck() {
    check = undefined
    review = undefined
    reviewArea.replaceChildren()
    importButton.hidden = true
    reason.hidden = true
  }

  /** Starts an upload of its own: one at a time, a newer one replacing the one before. */
  function begin(importing: boolean) {
    running?.controller.abort()
    const upload = { controller: new AbortController(), importing, sent: false }
    running = upload
    return upload
  }

  function finish(upload: NonNullable<typeof running>) {
    if (running !== upload) return
    running = undefined
    progress.stop()
  }

  async function checkFile(chosen: File) {
    const upload = begin(false)
    file = chosen
    forgetCheck()
    messages.clear()
    messages.notice(`Checking “${chosen.name}”…`)
    progress.start(`Sending “${chosen.name}” to be checked`, { label: `Checking “${chosen.name}”`, cancelable: true })
    try {
      const found = await client.books.checkImport(chosen, {
        format: importFormat(chosen.name),
        onProgress: ({ sent, total }) => progress.update(sent, total ?? chosen.size),
        signal: upload.controller.signal,
      })
      if (running !== upload) return
      check = found
      review = createImportReview(found, showPlan)
      reviewArea.replaceChildren(review.element)
      messages.clear()
      messages.notice(describeCheck(found, chosen.name))
      showPlan()
    } catch (err) {
      // Whoever cancelled it says so.
      if (upload.controller.signal.aborted) return
      messages.clear()
      const rows = rowErrors(err)
      if (rows) messages.errors(`Nothing can be imported from “${chosen.name}”:`, rows.map(describeRowError))
      else messages.error(describeError(err))
    } finally {
      finish(upload)
      // So that choosing the same file again, once corrected, checks it again.
      input.value = ''
    }
  }

  async function importFile() {
    if (!file || !check || !review) return
    const chosen = file
    const choices = review.choices()
    if (planImport(check, choices).kind !== 'ready') return
    const upload = begin(true)
    input.disabled = true
    review.disable(true)
    importButton.hidden = true
    messages.clear()
    messages.notice(`Importing “${chosen.name}”…`)
    progress.start(`Sending “${chosen.name}” to be imported`, { label: `Storing the books of “${chosen.name}”`, cancelable: false })
    progress.cancel.focus()
    try {
      const result = await client.books.import(chosen, {
        ...choices,
        format: importFormat(chosen.name),
        signal: upload.controller.signal,
        onProgress({ sent, total = chosen.size }) {
          progress.update(sent, total)
          if (sent < total || upload.sent) return
          // Past the point of no return: the service stores the books even if the dialog closes.
          upload.sent = true
          if (document.activeElement === progress.cancel) close.focus()
        },
      })
      if (dialog.open) dialog.close()
      events.imported(describeImported(result, chosen.name))
    } catch (err) {
      if (upload.controller.signal.aborted) return
      const rows = rowErrors(err)
      if (!dialog.open) {
        events.failed(`${describeError(err)} Nothing was imported from “${chosen.name}”.`)
        return
      }
      messages.clear()
      if (rows) messages.errors(`Nothing was imported from “${chosen.name}”:`, rows.map(describeRowError))
      else messages.error(`${describeError(err)} Nothing was imported.`)
    } finally {
      finish(upload)
      input.disabled = false
      review.disable(false)
      showPlan()
    }
  }

  progress.cancel.addEventListener('click', () => {
    const upload = running
    if (!upload || !file) return
    upload.controller.abort()
    finish(upload)
    messages.clear()
    input.disabled = false
    if (upload.importing) {
      review?.disable(false)
      showPlan()
      messages.notice(`Cancelled: nothing was imported from “${file.name}”.`)
      importButton.focus()
    } else {
      forgetCheck()
      messages.notice(`Cancelled: “${file.name}” was not checked.`)
      input.focus()
    }
  })
  importButton.addEventListener('click', () => void importFile())
  close.addEventListener('click', () => dialog.close())
  // Closed while the file is on its way, the upload stops there; sent whole, the import goes on and says how it ended.
  dialog.addEventListener('close', () => {
    if (running && !running.sent) running.controller.abort()
  })

  input.addEventListener('change', () => {
    const chosen = input.files?.[0]
    if (chosen) void checkFile(chosen)
  })
  drop.addEventListener('dragover', (event) => {
    event.preventDefault()
    drop.classList.add('dragging')
  })
  drop.addEventListener('dragleave', () => drop.classList.remove('dragging'))
  drop.addEventListener('drop', (event) => {
    event.preventDefault()
    drop.classList.remove('dragging')
    const dropped = event.dataTransfer?.files[0]
    if (dropped && !input.disabled) void checkFile(dropped)
  })
  input.focus()
}

import { h, uniqueId } from './dom.ts'
import { formatPercent } from './numbers.ts'

/** What the bar says once the file is sent whole and the service is at work. */
export interface WhenSent {
  label: string
  /** False when the service's work can no longer be undone: "Cancel" goes. */
  cancelable: boolean
}

export interface UploadProgress {
  element: HTMLElement
  /** "Cancel": the caller aborts the upload. */
  cancel: HTMLButtonElement
  /** Shows the bar at 0, named by `label`. */
  start(label: string, whenSent: WhenSent): void
  /** Bytes sent of `total`. */
  update(sent: number, total: number): void
  stop(): void
}

/**
 * A `<progress>` bar named by its label, the share sent written beside it, and "Cancel". It
 * follows each progress event the browser gives (several a second); it is not a live region, so
 * that a screen reader is not talked over: the dialog announces the phases.
 */
export function createUploadProgress(): UploadProgress {
  const id = uniqueId('upload')
  const label = h('label', { for: id })
  const bar = h('progress', { id, max: '1', value: '0' })
  const share = h('span', { class: 'upload-share' })
  const cancel = h('button', { type: 'button' }, 'Cancel')
  const element = h('div', { class: 'upload', hidden: true }, label, h('div', { class: 'upload-bar' }, bar, share), cancel)
  let afterSent: WhenSent = { label: '', cancelable: true }
  return {
    element,
    cancel,
    start(text, whenSent) {
      afterSent = whenSent
      label.textContent = text
      bar.max = 1
      bar.value = 0
      share.textContent = formatPercent(0)
      cancel.hidden = false
      element.hidden = false
    },
    update(sent, total) {
      if (sent < total) {
        if (bar.max !== total) bar.max = total
        bar.value = sent
        share.textContent = formatPercent(sent / total)
        return
      }
      // Sent whole: what is left is the service's work, of no known length.
      bar.removeAttribute('value')
      label.textContent = afterSent.label
      share.textContent = ''
      cancel.hidden = !afterSent.cancelable
    },
    stop() {
      element.hidden = true
    },
  }
}

import { h, type Child } from './dom.ts'

/**
 * A modal `<dialog>` inside `host`: the rest of the page is inert while it is open, Escape
 * closes it, and the focus goes back to where it was. It removes itself once closed.
 */
export function openModal(host: HTMLElement, labelledBy: string, ...children: Child[]): HTMLDialogElement {
  const opener = document.activeElement instanceof HTMLElement ? document.activeElement : undefined
  const dialog = h('dialog', { 'aria-labelledby': labelledBy }, ...children)
  dialog.addEventListener('close', () => {
    dialog.remove()
    if (opener?.isConnected) opener.focus()
  })
  host.append(dialog)
  dialog.showModal()
  return dialog
}

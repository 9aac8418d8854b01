import { h, uniqueId, type Child } from './dom.ts'
import { createMessages, type Messages } from './messages.ts'
import { openModal } from './modal.ts'

export interface FormDialog {
  heading: string
  body: Child[]
  /** The button that sends the form: it says what it does. */
  submit: string
  /** Has the focus when the dialog opens. */
  first: HTMLElement
  /** Does what the form asks; true closes the dialog, false keeps it open with what `messages` now say. */
  run: (messages: Messages) => Promise<boolean>
}

/** A small modal form: its fields, "Cancel", and a button that sends it, disabled while it runs. */
export function openFormDialog(host: HTMLElement, { heading, body, submit: label, first, run }: FormDialog): void {
  const headingId = uniqueId('form-heading')
  const messages = createMessages()
  const submit = h('button', { type: 'submit', class: 'primary' }, label)
  const cancel = h('button', { type: 'button' }, 'Cancel')
  const form = h(
    'form',
    { novalidate: true, method: 'dialog' },
    h('h2', { id: headingId }, heading),
    messages.element,
    ...body,
    h('div', { class: 'buttons' }, submit, cancel),
  )
  const dialog = openModal(host, headingId, form)
  cancel.addEventListener('click', () => dialog.close())
  form.addEventListener('submit', (event) => {
    void (async () => {
      event.preventDefault()
      messages.clear()
      submit.disabled = true
      try {
        if (await run(messages)) dialog.close()
      } finally {
        submit.disabled = false
      }
    })()
  })
  first.focus()
}

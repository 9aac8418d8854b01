import { ApiError, type BookCatalogue, type CreatedKey, type Key, type Role } from 'book-catalogue-client'
import { confirmAction } from './confirm-dialog.ts'
import { h, hidden, uniqueId } from './dom.ts'
import { inputField, selectField } from './form-field.ts'
import { createMessages, describeError } from './messages.ts'
import { openModal } from './modal.ts'
import { atLeast, ROLES } from './roles.ts'
import { formatTime, timeElement } from './times.ts'

const EXPIRY: [days: string, words: string][] = [
  ['', 'Never'],
  ['7', 'In 7 days'],
  ['30', 'In 30 days'],
  ['90', 'In 90 days'],
  ['365', 'In a year'],
]

/**
 * Shows a key just made, the one time it can be: with "Copy", and a warning that it cannot be
 * shown again once the dialog is closed.
 */
function showCreatedKey(host: HTMLElement, created: CreatedKey): Promise<void> {
  return new Promise((resolve) => {
    const headingId = uniqueId('key-heading')
    const warningId = uniqueId('key-warning')
    const value = inputField('Key', { readonly: true, spellcheck: 'false', class: 'key-value' })
    value.control.value = created.key
    // The warning is what the field needs said about it.
    value.control.setAttribute('aria-describedby', warningId)
    const copy = h('button', { type: 'button', class: 'primary' }, 'Copy')
    const done = h('button', { type: 'button' }, 'Done')
    const status = h('p', { role: 'status', class: 'status' })
    const dialog = openModal(
      host,
      headingId,
      h('h2', { id: headingId }, `Key “${created.name}” created`),
      h(
        'p',
        { id: warningId, class: 'warning' },
        h('strong', {}, 'Copy the key now: it is shown only this once.'),
        ' Once this dialog is closed it cannot be shown again; a lost key is revoked and replaced.',
      ),
      value.wrapper,
      status,
      h('div', { class: 'buttons' }, copy, done),
    )
    copy.addEventListener('click', () => {
      void (async () => {
        try {
          await navigator.clipboard.writeText(created.key)
          status.textContent = 'The key is copied to the clipboard.'
        } catch {
          value.control.select()
          value.control.focus()
          status.textContent = 'The browser did not allow copying: the key is selected, copy it with Ctrl+C (⌘C on a Mac).'
        }
      })()
    })
    done.addEventListener('click', () => dialog.close())
    dialog.addEventListener('close', () => resolve())
    copy.focus()
  })
}

/**
 * The person's keys for programs (`/keys`), an admin's: everyone's. Create one with a name, a
 * role up to the person's own and an expiry; it is shown once. Each key says when it was last
 * used, and can be revoked.
 */
export function keysView(client: BookCatalogue, role: Role, _signal: AbortSignal): HTMLElement {
  const everyone = atLeast(role, 'admin')
  const headingId = uniqueId('keys-heading')
  const messages = createMessages()
  const heading = h('h2', { id: headingId, tabindex: '-1' }, 'Keys')
  const name = inputField('Name', { maxlength: '100' }, 'What the key is for, such as “nightly import”.')
  const keyRole = selectField(
    'Role',
    ROLES.filter((held) => atLeast(role, held)).map((held) => [held, held]),
    'reader',
    'What programs holding the key may do; at most your own role.',
  )
  const expires = selectField('Expires', EXPIRY, '')
  const create = h('button', { type: 'submit', class: 'primary' }, 'Create key')
  const createHeadingId = uniqueId('create-key')
  const createForm = h(
    'form',
    { class: 'panel add-form', novalidate: true, 'aria-labelledby': createHeadingId },
    h('h3', { id: createHeadingId }, 'Create a key'),
    h('div', { class: 'fields' }, name.wrapper, keyRole.wrapper, expires.wrapper),
    create,
  )
  const body = h('tbody')
  const table = h(
    'table',
    { class: 'list-table keys', hidden: true },
    h('caption', { class: 'visually-hidden' }, everyone ? 'Every user’s keys' : 'Your keys'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { scope: 'col' }, 'Key'),
        h('th', { scope: 'col' }, 'Role'),
        h('th', { scope: 'col' }, 'Last used'),
        h('th', { scope: 'col' }, 'Actions'),
      ),
    ),
    body,
  )
  const empty = h('p', { class: 'empty', role: 'status' })
  const view = h(
    'section',
    { class: 'keys-view', 'aria-labelledby': headingId },
    heading,
    h(
      'p',
      { class: 'hint' },
      'A key lets a program use the catalogue without a password: it sends the key in the Authorization header, as a token. A key acts in its own role, never above its owner’s, until it expires or is revoked.',
    ),
    messages.element,
    createForm,
    table,
    empty,
  )

  function row(key: Key): HTMLTableRowElement {
    const revoke = h('button', { type: 'button', class: 'danger' }, 'Revoke', hidden(` “${key.name}”`))
    const tr = h(
      'tr',
      { 'data-id': String(key.id) },
      h(
        'th',
        { scope: 'row' },
        key.name,
        h('span', { class: 'byline' }, `created ${formatTime(key.created)}${everyone ? ` by ${key.owner}` : ''}`),
      ),
      h('td', {}, key.role),
      h(
        'td',
        {},
        key.last_used === null ? 'Never' : timeElement(key.last_used),
        h('span', { class: 'byline' }, key.expires === null ? 'never expires' : `expires ${formatTime(key.expires)}`),
      ),
      h('td', {}, revoke),
    )
    revoke.addEventListener('click', () => void revokeKey(key, tr))
    return tr
  }

  function showEmpty() {
    table.hidden = body.rows.length === 0
    empty.textContent = body.rows.length === 0 ? 'No keys yet.' : ''
  }

  async function read() {
    try {
      body.replaceChildren(...(await client.keys.list()).map(row))
      showEmpty()
    } catch (err) {
      messages.error(describeError(err), () => void read())
    }
  }

  createForm.addEventListener('submit', (event) => {
    void (async () => {
      event.preventDefault()
      messages.clear()
      const keyName = name.control.value
      name.say(keyName.trim() === '' ? 'Give the key a name, to know it again in this list.' : '')
      if (keyName.trim() === '') {
        name.control.focus()
        return
      }
      create.disabled = true
      try {
        const days = expires.control.value
        const created = await client.keys.create({
          name: keyName,
          role: keyRole.control.value as Role,
          ...(days !== '' && { expires_in_days: Number(days) }),
        })
        createForm.reset()
        await showCreatedKey(view, created)
        await read()
        messages.notice(`Created the key “${created.name}”.`)
      } catch (err) {
        messages.error(describeError(err))
      } finally {
        create.disabled = false
      }
    })()
  })

  async function revokeKey(key: Key, tr: HTMLTableRowElement) {
    const sure = await confirmAction(view, {
      heading: `Revoke the key “${key.name}”?`,
      body: [h('p', {}, 'Programs that use it are refused from now on. This cannot be undone: a new key can be created instead.')],
      confirm: 'Revoke key',
    })
    if (!sure) return
    messages.clear()
    try {
      await client.keys.revoke(key.id)
      messages.notice(`Revoked the key “${key.name}”.`)
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) {
        messages.error(describeError(err))
        return
      }
      messages.notice(`The key “${key.name}” was revoked already.`)
    }
    const neighbour = (tr.nextElementSibling ?? tr.previousElementSibling)?.querySelector('button')
    tr.remove()
    showEmpty()
    ;(neighbour ?? heading).focus()
  }

  void read()
  return view
}

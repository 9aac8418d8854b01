import { ApiError, type BookCatalogue, type Role, type User } from 'book-catalogue-client'
import { confirmAction } from './confirm-dialog.ts'
import { h, hidden, uniqueId } from './dom.ts'
import { openFormDialog } from './form-dialog.ts'
import { inputField, selectField } from './form-field.ts'
import { createMessages, describeError, type Messages } from './messages.ts'
import { ROLES } from './roles.ts'
import { timeElement } from './times.ts'

/** The service's rules for a user (docs/api.md#accounts), checked before anything is sent. */
const USERNAME = /^[\p{L}\p{N}._@-]{1,64}$/u
const PASSWORD_MIN = 12
const PASSWORD_MAX = 1024
const PASSWORD_HINT = `${PASSWORD_MIN} characters or more, and not easy to guess: a few unrelated words do well.`
const PASSWORD_REFUSED = 'The service refused this password as too easy to guess: too repetitive, a common password, or holding the name.'
const ROLE_HINT =
  'A reader reads and exports books; an editor also adds, changes, deletes and restores them; an admin also manages users and every key, and purges the trash.'
const roleOptions = (): [string, string][] => ROLES.map((role) => [role, role])

function passwordProblem(password: string): string {
  if ([...password].length < PASSWORD_MIN) return `The password needs ${PASSWORD_MIN} characters or more.`
  if ([...password].length > PASSWORD_MAX) return `The password may have at most ${PASSWORD_MAX} characters.`
  return ''
}

const userGone = (username: string) => `There is no user “${username}” any more: someone removed them meanwhile.`

/**
 * The users of the catalogue, for an admin (`/users`): add one with a role, change a role, set a
 * new password, remove one. The configured user lives in the service's configuration and is
 * shown without controls.
 */
export function usersView(client: BookCatalogue, _role: Role, _signal: AbortSignal): HTMLElement {
  const headingId = uniqueId('users-heading')
  const messages = createMessages()
  const heading = h('h2', { id: headingId, tabindex: '-1' }, 'Users')
  const username = inputField(
    'Username',
    { autocapitalize: 'none', spellcheck: 'false', maxlength: '64' },
    'Letters, digits, “.”, “_”, “@” or “-”.',
  )
  const password = inputField('Password', { type: 'password', autocomplete: 'new-password' }, PASSWORD_HINT)
  const role = selectField('Role', roleOptions(), 'reader', ROLE_HINT)
  const add = h('button', { type: 'submit', class: 'primary' }, 'Add user')
  const addHeadingId = uniqueId('add-user')
  const addForm = h(
    'form',
    { class: 'panel add-form', novalidate: true, 'aria-labelledby': addHeadingId },
    h('h3', { id: addHeadingId }, 'Add a user'),
    h('div', { class: 'fields' }, username.wrapper, password.wrapper, role.wrapper),
    add,
  )
  const body = h('tbody')
  const table = h(
    'table',
    { class: 'list-table users' },
    h('caption', { class: 'visually-hidden' }, 'Users'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { scope: 'col' }, 'User'),
        h('th', { scope: 'col' }, 'Role'),
        h('th', { scope: 'col', class: 'wide-only' }, 'Added'),
        h('th', { scope: 'col' }, 'Actions'),
      ),
    ),
    body,
  )
  const view = h('section', { class: 'users-view', 'aria-labelledby': headingId }, heading, messages.element, addForm, table)

  function row(user: User): HTMLTableRowElement {
    const name = user.username
    const actions =
      user.created === null
        ? h('p', { class: 'byline' }, 'Set in the service’s configuration')
        : h(
            'div',
            { class: 'row-actions' },
            button('Change role', ` of ${name}`, () => changeRole(user)),
            button('Reset password', ` of ${name}`, () => resetPassword(user)),
            button('Delete', ` ${name}`, () => void remove(user), 'danger'),
          )
    return h(
      'tr',
      { 'data-user': name },
      h('th', { scope: 'row' }, name),
      h('td', { class: 'role-cell' }, user.role),
      h('td', { class: 'wide-only' }, user.created === null ? 'configured' : timeElement(user.created)),
      h('td', {}, actions),
    )
  }

  /** A row's button: `label` shown, `whose` heard after it, so that each is told apart from the other rows'. */
  function button(label: string, whose: string, run: () => void, kind?: string): HTMLButtonElement {
    const element = h('button', { type: 'button', class: kind }, label, hidden(whose))
    element.addEventListener('click', run)
    return element
  }

  const rowOf = (username: string) => body.querySelector<HTMLTableRowElement>(`tr[data-user="${CSS.escape(username)}"]`)

  async function read() {
    try {
      body.replaceChildren(...(await client.users.list()).map(row))
    } catch (err) {
      messages.error(describeError(err), () => void read())
    }
  }

  addForm.addEventListener('submit', (event) => {
    void (async () => {
      event.preventDefault()
      messages.clear()
      const name = username.control.value.trim()
      username.say(USERNAME.test(name) ? '' : 'The username needs 1 to 64 letters, digits, “.”, “_”, “@” or “-”, and no spaces.')
      password.say(passwordProblem(password.control.value))
      const wrong = [username, password].find((field) => field.control.getAttribute('aria-invalid') === 'true')
      if (wrong) {
        wrong.control.focus()
        return
      }
      add.disabled = true
      try {
        const user = await client.users.create({ username: name, password: password.control.value, role: role.control.value as Role })
        body.append(row(user))
        addForm.reset()
        messages.notice(`Added ${user.username}, ${user.role}. They sign in with this name and password.`)
        username.control.focus()
      } catch (err) {
        if (err instanceof ApiError && err.status === 409) {
          username.say(`A user named “${name}” exists already, perhaps written with other capitals.`)
          username.control.focus()
        } else if (err instanceof ApiError && err.status === 400) {
          password.say(PASSWORD_REFUSED)
          password.control.focus()
        } else messages.error(describeError(err))
      } finally {
        add.disabled = false
      }
    })()
  })

  /** A change to a user, shown in their row as it is, so that the focus goes back to the button that asked for it. */
  async function update(user: User, changes: { role?: Role; password?: string }, said: string, dialogMessages: Messages): Promise<boolean> {
    try {
      Object.assign(user, await client.users.update(user.username, changes))
      const cell = rowOf(user.username)?.querySelector('.role-cell')
      if (cell) cell.textContent = user.role
      messages.notice(said)
      return true
    } catch (err) {
      if (err instanceof ApiError && err.status === 400 && changes.password !== undefined) dialogMessages.error(PASSWORD_REFUSED)
      else dialogMessages.error(describeError(err, userGone(user.username)))
      return false
    }
  }

  function changeRole(user: User) {
    const choice = selectField('Role', roleOptions(), user.role, ROLE_HINT)
    openFormDialog(view, {
      heading: `Change the role of ${user.username}`,
      body: [
        h('p', {}, `${user.username} is signed out everywhere when the role changes, and signs in again in the new one.`),
        choice.wrapper,
      ],
      submit: 'Change role',
      first: choice.control,
      run: async (dialogMessages) => {
        const role = choice.control.value as Role
        if (role === user.role) return true
        return update(user, { role }, `${user.username} is now ${role === 'admin' ? 'an' : 'a'} ${role}.`, dialogMessages)
      },
    })
  }

  function resetPassword(user: User) {
    const field = inputField('New password', { type: 'password', autocomplete: 'new-password' }, PASSWORD_HINT)
    openFormDialog(view, {
      heading: `Set a new password for ${user.username}`,
      body: [
        h('p', {}, `${user.username} is signed out everywhere, and signs in again with the new password: tell it to them.`),
        field.wrapper,
      ],
      submit: 'Set password',
      first: field.control,
      run: async (dialogMessages) => {
        const problem = passwordProblem(field.control.value)
        field.say(problem)
        if (problem !== '') {
          field.control.focus()
          return false
        }
        return update(user, { password: field.control.value }, `${user.username} has a new password.`, dialogMessages)
      },
    })
  }

  async function remove(user: User) {
    const sure = await confirmAction(view, {
      heading: `Delete the user ${user.username}?`,
      body: [
        h(
          'p',
          {},
          `${user.username} can no longer sign in, is signed out everywhere, and their keys are revoked. Their changes stay in the history under their name.`,
        ),
      ],
      confirm: 'Delete user',
    })
    if (!sure) return
    messages.clear()
    try {
      await client.users.delete(user.username)
      messages.notice(`Deleted the user ${user.username}.`)
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) {
        messages.error(describeError(err))
        return
      }
      messages.notice(userGone(user.username))
    }
    // The focus goes to the row in its place, or to the heading.
    const tr = rowOf(user.username)
    const neighbour = (tr?.nextElementSibling ?? tr?.previousElementSibling)?.querySelector('button')
    tr?.remove()
    ;(neighbour ?? heading).focus()
  }

  void read()
  return view
}

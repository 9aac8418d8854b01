import { ApiError, type BookCatalogue } from 'book-catalogue-client'
import { h, uniqueId, type Child } from './dom.ts'
import { createMessages, describeError } from './messages.ts'
import { openModal } from './modal.ts'

/** Why the sign-in form is shown again: an expired session is an error, signing out is not. */
export interface Reason {
  text: string
  isError: boolean
}

interface SignInForm {
  headingId: string
  heading: string
  reason?: Reason | undefined
  /** The one user whose session goes on: shown, and not to be changed. */
  username?: string | undefined
  onSignedIn: (token: string) => void
  /** Buttons beside "Sign in". */
  also?: Child[]
}

/** "Username", "Password", "Sign in": `POST /token`, its refusals said in the form. */
function signInForm(client: BookCatalogue, { headingId, heading, reason, username: fixed, onSignedIn, also = [] }: SignInForm) {
  const messages = createMessages()
  const usernameId = uniqueId('username')
  const passwordId = uniqueId('password')
  const username = h('input', {
    id: usernameId,
    name: 'username',
    autocomplete: 'username',
    required: true,
    autocapitalize: 'none',
    spellcheck: 'false',
    readonly: fixed !== undefined,
  })
  if (fixed !== undefined) username.value = fixed
  const password = h('input', { id: passwordId, name: 'password', type: 'password', autocomplete: 'current-password', required: true })
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Sign in')
  const form = h(
    'form',
    { novalidate: true, 'aria-labelledby': headingId },
    h('h2', { id: headingId }, heading),
    messages.element,
    h('div', { class: 'field' }, h('label', { for: usernameId }, 'Username'), username),
    h('div', { class: 'field' }, h('label', { for: passwordId }, 'Password'), password),
    h('div', { class: 'buttons' }, submit, ...also),
  )
  if (reason?.isError) messages.error(reason.text)
  else if (reason) messages.notice(reason.text)

  form.addEventListener('submit', (event) => {
    void (async () => {
      event.preventDefault()
      messages.clear()
      if (username.value === '' || password.value === '') {
        messages.error('Enter both the username and the password.')
        ;(username.value === '' ? username : password).focus()
        return
      }
      submit.disabled = true
      messages.notice('Signing in…')
      try {
        const token = await client.login(username.value, password.value)
        messages.clear()
        onSignedIn(token)
      } catch (err) {
        messages.notice('')
        if (err instanceof ApiError && err.status === 401) messages.error('Wrong username or password.')
        else messages.error(describeError(err))
        password.select()
      } finally {
        submit.disabled = false
      }
    })()
  })
  return { form, focus: () => (fixed === undefined ? username : password).focus() }
}

export function signInView(client: BookCatalogue, onSignedIn: (token: string) => void, reason?: Reason): HTMLElement {
  const { form, focus } = signInForm(client, { headingId: 'sign-in-heading', heading: 'Sign in', reason, onSignedIn })
  form.classList.add('sign-in')
  queueMicrotask(focus)
  return form
}

/** How a sign-in asked for in the middle of the person's work ended. */
export type SignedInAgain = { token: string } | 'signed out' | 'closed'

/**
 * Asks the same person for their password again, in a dialog over what they were doing, which
 * stays as it was: a form half filled, a page, a selection. "Sign out" ends the session instead.
 */
export function askToSignInAgain(host: HTMLElement, client: BookCatalogue, username: string, reason: string): Promise<SignedInAgain> {
  return new Promise((resolve) => {
    let outcome: SignedInAgain = 'closed'
    const signOut = h('button', { type: 'button' }, 'Sign out')
    const { form, focus } = signInForm(client, {
      headingId: uniqueId('sign-in-again'),
      heading: 'Sign in again to continue',
      reason: { text: reason, isError: false },
      username,
      onSignedIn(token) {
        outcome = { token }
        dialog.close()
      },
      also: [signOut],
    })
    const dialog = openModal(host, form.getAttribute('aria-labelledby')!, form)
    signOut.addEventListener('click', () => {
      outcome = 'signed out'
      dialog.close()
    })
    dialog.addEventListener('close', () => resolve(outcome))
    focus()
  })
}

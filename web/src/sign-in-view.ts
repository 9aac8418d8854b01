import { ApiError, type Api } from './api.ts'
import { h } from './dom.ts'
import { createMessages, describeError } from './messages.ts'

/** Why the sign-in form is shown again: an expired session is an error, signing out is not. */
export interface Reason {
  text: string
  isError: boolean
}

export function signInView(api: Api, onSignedIn: (token: string) => void, reason?: Reason): HTMLElement {
  const messages = createMessages()
  const username = h('input', {
    id: 'username',
    name: 'username',
    autocomplete: 'username',
    required: true,
    autocapitalize: 'none',
    spellcheck: 'false',
  })
  const password = h('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true })
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Sign in')
  const form = h(
    'form',
    { class: 'sign-in', novalidate: true, 'aria-labelledby': 'sign-in-heading' },
    h('h2', { id: 'sign-in-heading' }, 'Sign in'),
    messages.element,
    h('div', { class: 'field' }, h('label', { for: 'username' }, 'Username'), username),
    h('div', { class: 'field' }, h('label', { for: 'password' }, 'Password'), password),
    submit,
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
        const token = await api.signIn(username.value, password.value)
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
  queueMicrotask(() => username.focus())
  return form
}

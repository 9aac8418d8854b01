import { ApiError, ConnectionError } from 'book-catalogue-client'
import { h } from './dom.ts'

/** "90 seconds", "2 minutes", "15 minutes". */
export function duration(seconds: number): string {
  if (seconds < 120) return `${seconds} second${seconds === 1 ? '' : 's'}`
  return `${Math.ceil(seconds / 60)} minutes`
}

/** What went wrong, in words a person can act on; `notFound` says what a 404 means where it happened. */
export function describeError(err: unknown, notFound = 'This book no longer exists: it was deleted meanwhile.'): string {
  if (err instanceof ConnectionError) return 'The service cannot be reached. Check the network connection, then retry.'
  if (!(err instanceof ApiError)) return 'Something went wrong in this page. Reload it and try again.'
  const wait = err.retryAfter === undefined ? '' : ` Try again in ${duration(err.retryAfter)}.`
  switch (err.status) {
    case 503:
      return `The catalogue is unavailable right now: its store is not answering.${wait || ' Try again shortly.'}`
    case 429:
      return `Too many failed sign-ins from this address.${wait || ' Wait a while before trying again.'}`
    case 413:
      return 'The file is too large: import at most 100,000 books and 32 MiB at a time.'
    case 404:
      return notFound
    case 403:
      return 'Your role does not allow this. An admin can give you another role.'
    case 401:
      return 'You are no longer signed in. Sign in again, then try once more.'
    case 400:
      return `The service refused the request: ${err.message}.`
    default:
      return `The service answered ${err.status}: ${err.message}.`
  }
}

export interface Messages {
  element: HTMLElement
  /** An error, with a button that tries again when `retry` is given. */
  error(text: string, retry?: () => void): void
  /** An error followed by a list of what was wrong, such as an import's refused rows. */
  errors(text: string, items: string[]): void
  /** A notice, with a button that acts on it when `action` is given, such as "Undo". */
  notice(text: string, action?: Action): void
  clear(): void
}

export interface Action {
  label: string
  run: () => void
}

/**
 * The live regions: errors with role `alert`, other notices with role `status`. Both exist
 * from the start, empty, so that screen readers announce what is written into them.
 */
export function createMessages(): Messages {
  const alert = h('div', { role: 'alert', class: 'alert' })
  const status = h('p', { role: 'status', class: 'status' })
  const clearError = () => {
    alert.replaceChildren()
    alert.classList.remove('shown')
  }
  return {
    element: h('div', { class: 'messages' }, alert, status),
    error(text, retry) {
      const children: Node[] = [h('p', {}, text)]
      if (retry) {
        const button = h('button', { type: 'button' }, 'Retry')
        button.addEventListener('click', () => {
          clearError()
          retry()
        })
        children.push(button)
      }
      alert.replaceChildren(...children)
      alert.classList.add('shown')
    },
    errors(text, items) {
      alert.replaceChildren(h('p', {}, text), h('ul', {}, ...items.map((item) => h('li', {}, item))))
      alert.classList.add('shown')
    },
    notice(text, action) {
      if (action === undefined) {
        status.textContent = text
        return
      }
      const button = h('button', { type: 'button', class: 'notice-action' }, action.label)
      button.addEventListener('click', action.run)
      status.replaceChildren(`${text} `, button)
    },
    clear() {
      clearError()
      status.textContent = ''
    },
  }
}

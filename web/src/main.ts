import './styles.css'
import { createApi } from './api.ts'
import { catalogueView } from './catalogue-view.ts'
import { h } from './dom.ts'
import { createSession } from './session.ts'
import { openShortcutsDialog } from './shortcuts.ts'
import { signInView, type Reason } from './sign-in-view.ts'

const main = document.getElementById('main')!
const account = document.getElementById('account')!
/** Ends the listeners of the view shown, when another replaces it. */
let shown: AbortController | undefined

const session = createSession(() =>
  showSignIn({ text: 'Your session expired: sessions last 15 minutes. Sign in again to continue.', isError: true }),
)
const api = createApi({
  token: session.token,
  onTokenRefused() {
    if (session.token() === undefined) return
    session.end()
    showSignIn({
      text: 'The service no longer accepts your session: it expired or the service was restarted. Sign in again to continue.',
      isError: true,
    })
  },
})

function replaceView(view: (signal: AbortSignal) => HTMLElement): void {
  shown?.abort()
  shown = new AbortController()
  main.replaceChildren(view(shown.signal))
}

function showSignIn(reason?: Reason): void {
  account.replaceChildren()
  replaceView(() => signInView(api, signedIn, reason))
}

function signedIn(token: string): void {
  session.start(token)
  showCatalogue()
}

function showCatalogue(): void {
  const shortcuts = h('button', { type: 'button', class: 'shortcuts-button' }, 'Keyboard shortcuts')
  shortcuts.addEventListener('click', () => openShortcutsDialog(main))
  const signOut = h('button', { type: 'button' }, 'Sign out')
  signOut.addEventListener('click', () => {
    session.end()
    // The next person to sign in on this tab starts from the whole catalogue, not from this one's search.
    history.replaceState(null, '', location.pathname)
    showSignIn({ text: 'You have signed out.', isError: false })
  })
  account.replaceChildren(shortcuts, signOut)
  replaceView((signal) => catalogueView(api, signal))
}

if (session.token() === undefined) showSignIn()
else showCatalogue()

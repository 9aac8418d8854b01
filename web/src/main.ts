import './styles.css'
import { createApi } from './api.ts'
import { catalogueView } from './catalogue-view.ts'
import { h } from './dom.ts'
import { createSession } from './session.ts'
import { signInView, type Reason } from './sign-in-view.ts'

const main = document.getElementById('main')!
const account = document.getElementById('account')!

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

function showSignIn(reason?: Reason): void {
  account.replaceChildren()
  main.replaceChildren(signInView(api, signedIn, reason))
}

function signedIn(token: string): void {
  session.start(token)
  showCatalogue()
}

function showCatalogue(): void {
  const signOut = h('button', { type: 'button' }, 'Sign out')
  signOut.addEventListener('click', () => {
    session.end()
    showSignIn({ text: 'You have signed out.', isError: false })
  })
  account.replaceChildren(signOut)
  main.replaceChildren(catalogueView(api))
}

if (session.token() === undefined) showSignIn()
else showCatalogue()

import './styles.css'
import { ApiError, BookCatalogue, type Role } from 'book-catalogue-client'
import { catalogueView } from './catalogue-view.ts'
import { h, hidden } from './dom.ts'
import { keysView } from './keys-view.ts'
import { atLeast } from './roles.ts'
import { createSession } from './session.ts'
import { openShortcutsDialog } from './shortcuts.ts'
import { askToSignInAgain, signInView, type Reason } from './sign-in-view.ts'
import { trashView } from './trash-view.ts'
import { usersView } from './users-view.ts'

const main = document.getElementById('main')!
const account = document.getElementById('account')!
const nav = document.getElementById('views')!
/** Ends the listeners of the view shown, when another replaces it. */
let shown: AbortController | undefined
/** The view shown, by its name in the address (`#trash`); undefined while signed out. */
let shownName: string | undefined
/** The sign-in asked for while the person works, shared by every request the service refused meanwhile. */
let signingInAgain: Promise<boolean> | undefined

interface View {
  name: string
  label: string
  /** The least role that may see it: the service refuses the others anyway. */
  role: Role
  build: (client: BookCatalogue, role: Role, signal: AbortSignal) => HTMLElement
}

/** The views, in the order the header lists them; the first is the one the bare address shows. */
const VIEWS: View[] = [
  { name: 'catalogue', label: 'Catalogue', role: 'reader', build: catalogueView },
  { name: 'trash', label: 'Trash', role: 'editor', build: trashView },
  { name: 'keys', label: 'Keys', role: 'reader', build: keysView },
  { name: 'users', label: 'Users', role: 'admin', build: usersView },
]

const REFUSED =
  'Sign-ins last 12 hours, and a new password or role ends them sooner. Enter your password: what you were doing stays as it is.'
const EXPIRED = 'Your session could not be renewed in time and has ended. Enter your password: what you were doing stays as it is.'

const session = createSession({
  async renew() {
    try {
      return await client.refresh()
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return undefined
      throw err
    }
  },
  lapsed: (why) => void signInAgain(why === 'refused' ? REFUSED : EXPIRED),
})
// The page keeps its token itself, to renew it on time and ask for the password when it lapses.
const client = new BookCatalogue({
  currentToken: session.token,
  // A person is told at once that the store cannot answer (Retry-After: 5), and has "Retry";
  // a sign-in the service is too busy to check (Retry-After: 1) is still waited for, unseen.
  longestWaitSeconds: 1,
  onRefused: () =>
    signInAgain(
      'The service no longer accepts your session: it expired, your password or role changed, or the service was restarted. Enter your password to go on where you were.',
    ),
})

/** Asks for the password over the page as it is; true once the person signed in again. */
function signInAgain(reason: string): Promise<boolean> {
  const claims = session.claims()
  if (claims === undefined) return Promise.resolve(false)
  signingInAgain ??= askToSignInAgain(main, client, claims.sub, reason).then((outcome) => {
    signingInAgain = undefined
    if (outcome === 'signed out') {
      signOut()
      return false
    }
    if (outcome === 'closed') return false
    session.start(outcome.token, true)
    // A new role changes what the page offers: it is built again for it, at the same address.
    if (session.claims()?.role !== claims.role) showSignedIn()
    return true
  })
  return signingInAgain
}

function replaceView(view: (signal: AbortSignal) => HTMLElement): void {
  shown?.abort()
  shown = new AbortController()
  main.replaceChildren(view(shown.signal))
}

function showSignIn(reason?: Reason): void {
  account.replaceChildren()
  nav.replaceChildren()
  nav.hidden = true
  shownName = undefined
  replaceView(() => signInView(client, signedIn, reason))
}

function signedIn(token: string): void {
  session.start(token, true)
  showSignedIn()
}

function signOut(): void {
  session.end()
  // The next person to sign in on this tab starts from the whole catalogue, not from this one's search.
  history.replaceState(null, '', location.pathname)
  showSignIn({ text: 'You have signed out.', isError: false })
}

const role = (): Role => session.claims()?.role ?? 'reader'
const allowed = (): View[] => VIEWS.filter((view) => atLeast(role(), view.role))

/** The view the address names, when the person may see it; otherwise the catalogue. */
function viewOfAddress(): View {
  const named = allowed().find((view) => `#${view.name}` === location.hash)
  if (named) return named
  // An address naming a view this role does not have shows the catalogue, and says so by its address.
  if (location.hash !== '') history.replaceState(null, '', `${location.pathname}${location.search}`)
  return VIEWS[0]!
}

function addressOf(view: View): string {
  return view === VIEWS[0] ? `${location.pathname}${location.search}` : `#${view.name}`
}

/** Shows the view the address names, unless it is shown already; `focus` moves to it, after a link was followed. */
function route(focus: boolean): void {
  const view = viewOfAddress()
  for (const link of nav.querySelectorAll('a')) {
    const linked = VIEWS.find(({ name }) => name === link.dataset.view)!
    link.href = addressOf(linked)
    if (linked === view) link.setAttribute('aria-current', 'page')
    else link.removeAttribute('aria-current')
  }
  if (view.name === shownName) return
  shownName = view.name
  replaceView((signal) => view.build(client, role(), signal))
  if (focus) main.querySelector<HTMLElement>('[tabindex="-1"]')?.focus()
}

function showSignedIn(): void {
  const claims = session.claims()
  const who = h('p', { class: 'who' }, hidden('Signed in as '), claims?.sub, hidden(', role '), h('span', { class: 'role' }, claims?.role))
  const shortcuts = h('button', { type: 'button', class: 'shortcuts-button' }, 'Keyboard shortcuts')
  shortcuts.addEventListener('click', () => openShortcutsDialog(main, atLeast(role(), 'editor')))
  const signOutButton = h('button', { type: 'button' }, 'Sign out')
  signOutButton.addEventListener('click', signOut)
  account.replaceChildren(who, shortcuts, signOutButton)
  nav.hidden = false
  nav.replaceChildren(
    h(
      'ul',
      {},
      ...allowed().map((view) => {
        const link = h('a', { href: addressOf(view), 'data-view': view.name }, view.label)
        link.addEventListener('click', (event) => {
          // A new tab or window opens by itself; a plain click shows the view in place.
          if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return
          event.preventDefault()
          history.pushState(null, '', addressOf(view))
          route(true)
        })
        return h('li', {}, link)
      }),
    ),
  )
  shownName = undefined
  route(false)
}

// Back and forward move between views as they do between searches; the catalogue hears its own.
window.addEventListener('popstate', () => {
  if (shownName !== undefined) route(true)
})

if (session.token() === undefined) showSignIn()
else showSignedIn()

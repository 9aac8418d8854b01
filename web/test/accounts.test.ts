/**
 * The catalogue page and accounts, in Debian's Chromium against a real service: what each role
 * is offered, the "Users" view of an admin, the "Keys" view, and a session that renews itself
 * quietly and, once the service refuses it, asks for the password over what the person was doing.
 */
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { TEST_PASSWORD, TEST_USERNAME } from '../../test/helpers.ts'
import { call, login } from '../../test/support/service.ts'
import {
  addUser,
  assertAccessible,
  assertAccessibleEverywhere,
  openPage,
  seed,
  serviceFor,
  signedIn,
  skip,
  startBrowser,
  stopBrowser,
  type Service,
} from './support/browser-page.ts'

const DUNE = { title: 'Dune', author: 'Frank Herbert', year: 1965 }
const NEW_PASSWORD = 'seven lighthouses along the coast'
const ANOTHER_PASSWORD = 'a kettle singing in the next room'

function views(page: Page) {
  return page.getByRole('navigation', { name: 'Views' })
}

function status(page: Page, text: string) {
  return page.getByRole('status').filter({ hasText: text })
}

/** Asks `check` again until it holds: for what the page does after an answer it waits for, with no sign of its own. */
async function until(check: () => Promise<boolean>): Promise<void> {
  // Bounded, so that a test that fails here ends instead of polling after the browser has gone.
  const deadline = performance.now() + 30_000
  while (!(await check())) {
    assert.ok(performance.now() < deadline, 'still not so after 30 s')
    await sleep(50)
  }
}

/**
 * The page's clock, standing still until the test moves it: a renewal due in 14 minutes then
 * comes when the test says, however long the steps before took.
 */
async function stoppedClock(page: Page): Promise<void> {
  await page.clock.install()
  await page.reload()
  await page.clock.pauseAt(Date.now() + 60_000)
}

/**
 * Moves the page's clock on a second at a time until `check` holds. A timer that the page sets in
 * answer to a failed request is set once the page has seen the failure, which may come after the
 * test has seen the request: moved on in one step, the clock could pass before the timer is set.
 */
async function fastForwardUntil(page: Page, check: () => boolean): Promise<void> {
  for (let seconds = 0; !check(); seconds++) {
    assert.ok(seconds < 120, "nothing came within two minutes of the page's time")
    await page.clock.fastForward(1000)
    await sleep(50)
  }
}

const tokenOf = (page: Page) => page.evaluate(() => sessionStorage.getItem('book-catalogue.token'))

/** Waits until the service refuses the token the page holds: a new password or role stops it within a second. */
async function refused(service: Service, page: Page): Promise<void> {
  const token = (await tokenOf(page))!
  await until(async () => (await call(service, 'GET', '/books?limit=1', { token })).status === 401)
}

describe('accounts in the page', { skip, timeout: 180_000, concurrency: 2 }, () => {
  before(startBrowser)
  after(stopBrowser)

  it('offers a reader no control that changes a book, and no view but the catalogue and keys', async (t) => {
    const service = await serviceFor(t)
    await seed(service, [DUNE, { title: 'Emma', author: 'Jane Austen', year: 1815 }])
    const page = await openPage(t, service)
    await signedIn(page, await addUser(service, 'rea', 'reader'))
    await page.getByRole('cell', { name: 'Dune', exact: true }).waitFor()
    assert.deepEqual(await views(page).getByRole('link').allTextContents(), ['Catalogue', 'Keys'])
    assert.equal(await page.locator('.who').textContent(), 'Signed in as rea, role reader')
    for (const name of ['Add book', 'Import books', 'Delete selected'])
      assert.equal(await page.getByRole('button', { name }).count(), 0, `no "${name}"`)
    await page.getByRole('button', { name: 'Export CSV' }).waitFor()

    // Selecting serves exporting; deleting is not offered.
    await page.getByRole('checkbox', { name: 'Select Dune' }).check()
    await page.getByRole('button', { name: 'Export selected' }).waitFor()
    assert.equal(await page.getByRole('button', { name: 'Delete selected' }).count(), 0)
    await assertAccessibleEverywhere(page, 'a reader’s catalogue', 'reader')

    // "n" adds nothing, and the shortcuts list only what a reader can do.
    await page.getByRole('button', { name: 'Export CSV' }).focus()
    await page.keyboard.press('n')
    assert.equal(await page.getByRole('dialog').count(), 0)
    await page.keyboard.press('?')
    const shortcuts = page.getByRole('dialog', { name: 'Keyboard shortcuts' })
    assert.deepEqual(await shortcuts.locator('dt').allTextContents(), ['/', '↑ ↓', 'Esc', '?'])
    await page.keyboard.press('Escape')

    // A title opens the book to read, with its history, and nothing to change it with.
    await page.getByRole('button', { name: 'Dune', exact: true }).click()
    const book = page.getByRole('dialog', { name: 'Book' })
    await book.getByText('Frank Herbert').waitFor()
    assert.equal(await book.getByRole('textbox').count(), 0)
    assert.deepEqual(await book.getByRole('button').allTextContents(), ['Close', 'History'])
    await assertAccessible(page, 'a book as a reader sees it')
    await page.keyboard.press('Escape')

    // The Users view is an admin's: its address shows a reader the catalogue.
    await page.goto(new URL('/app/#users', service.url).toString())
    await page.getByRole('cell', { name: 'Dune', exact: true }).waitFor()
    assert.equal(new URL(page.url()).hash, '')
  })

  it('offers an editor every change to books, and no admin view', async (t) => {
    const service = await serviceFor(t)
    await seed(service, [DUNE])
    const page = await openPage(t, service, { path: '/app/#users' })
    await signedIn(page, await addUser(service, 'ed', 'editor'))
    await page.getByRole('cell', { name: 'Dune', exact: true }).waitFor()
    assert.deepEqual(await views(page).getByRole('link').allTextContents(), ['Catalogue', 'Trash', 'Keys'])
    for (const name of ['Add book', 'Import books', 'Export CSV']) await page.getByRole('button', { name }).waitFor()
    await page.keyboard.press('?')
    assert.deepEqual(await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).locator('dt').allTextContents(), [
      '/',
      'n',
      'u',
      '↑ ↓',
      'Esc',
      '?',
    ])
  })

  it('lets an admin add users with a role, change a role, set a new password and remove a user', async (t) => {
    const service = await serviceFor(t)
    await addUser(service, 'bea', 'reader')
    const page = await openPage(t, service)
    await signedIn(page)
    await views(page).getByRole('link', { name: 'Users' }).click()
    const users = page.getByRole('table', { name: 'Users' })
    await users.getByRole('rowheader', { name: 'bea' }).waitFor()
    assert.deepEqual(await users.getByRole('rowheader').allTextContents(), [TEST_USERNAME, 'bea'])
    // The configured user lives in the configuration: nothing here changes it.
    const configured = users.getByRole('row').filter({ has: page.getByRole('rowheader', { name: TEST_USERNAME }) })
    assert.equal(await configured.getByRole('button').count(), 0)
    await configured.getByText('Set in the service’s configuration').waitFor()

    const form = page.getByRole('form', { name: 'Add a user' })
    await form.getByLabel('Username').fill('ada lovelace')
    await form.getByLabel('Password').fill('short')
    await form.getByRole('button', { name: 'Add user' }).click()
    await form.getByText('The username needs 1 to 64 letters', { exact: false }).waitFor()
    await form.getByText('The password needs 12 characters or more.').waitFor()
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-invalid')), 'true')
    await form.getByLabel('Username').fill('ada')
    // Long enough for the page; too easy to guess for the service.
    await form.getByLabel('Password').fill('password1234')
    await form.getByRole('button', { name: 'Add user' }).click()
    await form.getByText('The service refused this password as too easy to guess', { exact: false }).waitFor()
    await form.getByLabel('Password').fill('amber lanterns over a quiet harbour')
    await form.getByLabel('Role').selectOption('editor')
    await assertAccessibleEverywhere(page, 'the users', 'users')
    await form.getByRole('button', { name: 'Add user' }).click()
    await status(page, 'Added ada, editor.').waitFor()
    await users.getByRole('rowheader', { name: 'ada', exact: true }).waitFor()
    assert.equal(
      (await call(service, 'POST', '/token', { body: { username: 'ada', password: 'amber lanterns over a quiet harbour' } })).status,
      200,
    )

    // A name taken, whatever its capitals.
    await form.getByLabel('Username').fill('ADA')
    await form.getByLabel('Password').fill('amber lanterns over a quiet harbour')
    await form.getByRole('button', { name: 'Add user' }).click()
    await form.getByText('A user named “ADA” exists already', { exact: false }).waitFor()

    const ada = users.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'ada', exact: true }) })
    await ada.getByRole('button', { name: 'Change role of ada' }).click()
    const roleDialog = page.getByRole('dialog', { name: 'Change the role of ada' })
    assert.equal(await roleDialog.getByLabel('Role').inputValue(), 'editor')
    await roleDialog.getByLabel('Role').selectOption('reader')
    await assertAccessible(page, 'changing a role')
    await roleDialog.getByRole('button', { name: 'Change role' }).click()
    await status(page, 'ada is now a reader.').waitFor()
    assert.equal(await ada.getByRole('cell', { name: 'reader' }).count(), 1)
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Change role of ada', 'the focus returns to the button')
    const token = await login(service)
    assert.equal((await call(service, 'GET', '/user/ada', { token })).body.data.role, 'reader')

    await ada.getByRole('button', { name: 'Reset password of ada' }).click()
    const passwordDialog = page.getByRole('dialog', { name: 'Set a new password for ada' })
    await passwordDialog.getByLabel('New password').fill(NEW_PASSWORD)
    await passwordDialog.getByRole('button', { name: 'Set password' }).click()
    await status(page, 'ada has a new password.').waitFor()
    assert.equal((await call(service, 'POST', '/token', { body: { username: 'ada', password: NEW_PASSWORD } })).status, 200)

    await ada.getByRole('button', { name: 'Delete ada' }).click()
    const confirmation = page.getByRole('dialog', { name: 'Delete the user ada?' })
    await confirmation.getByText('their keys are revoked', { exact: false }).waitFor()
    await confirmation.getByRole('button', { name: 'Delete user' }).click()
    await status(page, 'Deleted the user ada.').waitFor()
    assert.equal(await users.getByRole('rowheader', { name: 'ada', exact: true }).count(), 0)
    assert.equal((await call(service, 'GET', '/user/ada', { token })).status, 404)
  })

  it('creates a key shown once with a copy button, lists its last use, and revokes it', async (t) => {
    const service = await serviceFor(t)
    await seed(service, [DUNE])
    const ed = await addUser(service, 'ed', 'editor')
    const page = await openPage(t, service, { permissions: ['clipboard-read', 'clipboard-write'] })
    await signedIn(page, ed)
    await views(page).getByRole('link', { name: 'Keys' }).click()
    await page.getByText('No keys yet.').waitFor()

    const form = page.getByRole('form', { name: 'Create a key' })
    // A key's role is at most its owner's.
    assert.deepEqual(await form.getByLabel('Role').locator('option').allTextContents(), ['reader', 'editor'])
    await form.getByRole('button', { name: 'Create key' }).click()
    await form.getByText('Give the key a name', { exact: false }).waitFor()
    await form.getByLabel('Name').fill('nightly import')
    await form.getByLabel('Role').selectOption('editor')
    await form.getByLabel('Expires').selectOption({ label: 'In 30 days' })
    await form.getByRole('button', { name: 'Create key' }).click()

    const shown = page.getByRole('dialog', { name: 'Key “nightly import” created' })
    await shown.getByText('Copy the key now: it is shown only this once.').waitFor()
    const key = await shown.getByLabel('Key').inputValue()
    assert.match(key, /^\S{20,}$/)
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Copy')
    await assertAccessibleEverywhere(page, 'a key shown once', 'key-shown')
    await shown.getByRole('button', { name: 'Copy' }).click()
    await shown.getByRole('status').filter({ hasText: 'The key is copied to the clipboard.' }).waitFor()
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key)
    // The key works as a token does.
    assert.equal((await call(service, 'GET', '/books', { token: key })).status, 200)
    await shown.getByRole('button', { name: 'Done' }).click()
    await shown.waitFor({ state: 'detached' })

    const keys = page.getByRole('table', { name: 'Your keys' })
    const row = keys.getByRole('row').filter({ has: page.getByRole('rowheader', { name: /^nightly import/ }) })
    await row.waitFor()
    assert.equal(await row.getByRole('cell').nth(0).textContent(), 'editor')
    await row.getByText(/^expires /).waitFor()
    const listed = (await call(service, 'GET', '/keys', { token: await login(service, ed.username, ed.password) })).body.data[0]
    assert.equal(await row.locator('time').getAttribute('datetime'), listed.last_used, 'its last use')
    assert.equal(await page.getByText(key).count(), 0, 'the key itself is not shown again')
    await assertAccessibleEverywhere(page, 'the keys', 'keys')

    // An admin sees everyone's keys, with their owners.
    const admin = await openPage(t, service, { path: '/app/#keys' })
    await signedIn(admin)
    await admin.getByRole('table', { name: 'Every user’s keys' }).getByText('by ed').waitFor()

    await row.getByRole('button', { name: 'Revoke “nightly import”' }).click()
    const confirmation = page.getByRole('dialog', { name: 'Revoke the key “nightly import”?' })
    await confirmation.getByRole('button', { name: 'Revoke key' }).click()
    await status(page, 'Revoked the key “nightly import”.').waitFor()
    await page.getByText('No keys yet.').waitFor()
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Keys', 'the focus goes to the heading')
    await until(async () => (await call(service, 'GET', '/books', { token: key })).status === 401)
  })

  it('renews the session quietly a minute before it expires, without interrupting what the person types', async (t) => {
    const service = await serviceFor(t)
    await seed(service, [DUNE])
    const page = await openPage(t, service)
    await stoppedClock(page)
    await signedIn(page)
    await page.getByRole('cell', { name: 'Dune', exact: true }).waitFor()
    const renewals: string[] = []
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/token/refresh') renewals.push(request.headers().authorization ?? '')
    })
    const first = (await tokenOf(page))!

    await page.getByRole('button', { name: 'Add book' }).click()
    const dialog = page.getByRole('dialog', { name: 'Add a book' })
    await dialog.getByLabel('Title').fill('Children of')
    await page.clock.fastForward('13:50')
    assert.deepEqual(renewals, [], 'not renewed before the last minute')
    const renewed = page.waitForResponse('**/token/refresh')
    await page.clock.fastForward('00:11')
    const answer = await renewed
    assert.equal(answer.status(), 200)
    assert.deepEqual(renewals, [first], 'renewed with the token in use')
    const fresh = (await answer.json()).data.token
    await until(async () => (await tokenOf(page)) === fresh)

    // Past the first token's end: the person goes on typing and saves, as if nothing happened.
    await page.clock.fastForward('02:00')
    await dialog.getByLabel('Title').pressSequentially(' Dune')
    await dialog.getByLabel('Author').fill('Frank Herbert')
    await dialog.getByLabel('Year', { exact: true }).fill('1976')
    await dialog.getByRole('button', { name: 'Save' }).click()
    await status(page, 'Added “Children of Dune”.').waitFor()
    assert.equal(await page.getByRole('dialog').count(), 0, 'no sign-in was asked for')
  })

  it('tries a failed renewal again, and asks for the password once the token has run out unrenewed', async (t) => {
    const service = await serviceFor(t)
    await seed(service, [DUNE])
    const page = await openPage(t, service)
    await stoppedClock(page)
    await signedIn(page)
    await page.getByRole('cell', { name: 'Dune', exact: true }).waitFor()
    let tries = 0
    await page.route('**/token/refresh', (route) => {
      tries += 1
      return route.abort('internetdisconnected')
    })
    await page.clock.fastForward('14:01')
    await until(async () => tries === 1)
    // The next try comes 15 s after the page has seen the first one fail.
    await fastForwardUntil(page, () => tries === 2)
    await page.clock.fastForward('01:00')
    const again = page.getByRole('dialog', { name: 'Sign in again to continue' })
    await again.getByText('Your session could not be renewed in time', { exact: false }).waitFor()
    await page.unroute('**/token/refresh')
    await again.getByLabel('Password').fill(TEST_PASSWORD)
    await again.getByRole('button', { name: 'Sign in' }).click()
    await again.waitFor({ state: 'detached' })
    await page.getByRole('cell', { name: 'Dune', exact: true }).waitFor()
  })

  it('asks for the password again over the page once the service refuses the session, and goes on with what was asked', async (t) => {
    const service = await serviceFor(t)
    await seed(service, [DUNE])
    const ada = await addUser(service, 'ada', 'editor')
    const page = await openPage(t, service)
    await stoppedClock(page)
    await signedIn(page, ada)
    await page.getByRole('button', { name: 'Dune', exact: true }).click()
    const form = page.getByRole('dialog', { name: 'Edit book' })
    await form.getByLabel('Title').fill('Dune Messiah')

    // An admin gives ada a new password: the tokens she holds are refused from then on.
    const token = await login(service)
    assert.equal((await call(service, 'PUT', '/user/ada', { token, body: { password: NEW_PASSWORD } })).status, 200)
    await refused(service, page)
    await form.getByRole('button', { name: 'Save' }).click()
    const again = page.getByRole('dialog', { name: 'Sign in again to continue' })
    await again.getByLabel('Password').waitFor()
    assert.equal(await again.getByLabel('Username').inputValue(), 'ada')
    assert.equal(await form.getByLabel('Title').inputValue(), 'Dune Messiah', 'the form stays as it was')
    await again.getByLabel('Password').fill(NEW_PASSWORD)
    await again.getByRole('button', { name: 'Sign in' }).click()
    // The save the service refused goes through with the new token.
    await status(page, 'Saved “Dune Messiah”.').waitFor()
    assert.equal((await call(service, 'GET', '/book/1', { token })).body.data.title, 'Dune Messiah')

    // A renewal refused (12 hours after the password, or after a new one) asks at once, before the token runs out.
    await page.getByRole('button', { name: 'Dune Messiah', exact: true }).click()
    await form.getByLabel('Year', { exact: true }).fill('1969')
    assert.equal((await call(service, 'PUT', '/user/ada', { token, body: { password: ANOTHER_PASSWORD } })).status, 200)
    await refused(service, page)
    await page.clock.fastForward('14:01')
    await again.getByText('Sign-ins last 12 hours', { exact: false }).waitFor()
    await again.getByLabel('Password').fill(ANOTHER_PASSWORD)
    await again.getByRole('button', { name: 'Sign in' }).click()
    await again.waitFor({ state: 'detached' })
    assert.equal(await form.getByLabel('Year', { exact: true }).inputValue(), '1969')
    await form.getByRole('button', { name: 'Save' }).click()
    await status(page, 'Saved “Dune Messiah”.').waitFor()
    assert.equal((await call(service, 'GET', '/book/1', { token })).body.data.year, 1969)

    // "Sign out" in the dialog ends the session instead.
    assert.equal((await call(service, 'PUT', '/user/ada', { token, body: { password: NEW_PASSWORD } })).status, 200)
    await refused(service, page)
    await page.clock.fastForward('14:01')
    await again.getByRole('button', { name: 'Sign out' }).click()
    await status(page, 'You have signed out.').waitFor()
    assert.equal(await tokenOf(page), null)
  })
})

/**
 * The catalogue page and the history of books, in Debian's Chromium against a real service:
 * "Undo" after a deletion, several deletions and an edit; a book's history with a way back to
 * any version; the trash with "Restore" and "Purge".
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { TEST_USERNAME } from '../../test/helpers.ts'
import { call, login } from '../../test/support/service.ts'
import {
  addUser,
  assertAccessible,
  assertAccessibleEverywhere,
  books,
  catalogueShown,
  openPage,
  seed,
  serviceFor,
  shownTitles,
  signedIn,
  skip,
  startBrowser,
  stopBrowser,
  waitForTitles,
  type Book,
  type Service,
} from './support/browser-page.ts'

const DUNE = { title: 'Dune', author: 'Frank Herbert', year: 1965 }
const EMMA = { title: 'Emma', author: 'Jane Austen', year: 1815 }
const ULYSSES = { title: 'Ulysses', author: 'James Joyce', year: 1922 }

async function stored(service: Service, id: number): Promise<{ status: number; book: Book | null }> {
  const answer = await call(service, 'GET', `/book/${id}`, { token: await login(service) })
  return { status: answer.status, book: answer.body.data }
}

async function kinds(service: Service, id: number): Promise<string[]> {
  const answer = await call(service, 'GET', `/book/${id}/history`, { token: await login(service) })
  return answer.body.data.map((change: { kind: string }) => change.kind)
}

async function trashed(service: Service): Promise<{ id: number; deleted_at: string }[]> {
  return (await call(service, 'GET', '/books/trash', { token: await login(service) })).body.data
}

/** The texts of the items of `list`, with their spaces as a person sees them. */
async function texts(list: ReturnType<Page['locator']>): Promise<string[]> {
  return (await list.allTextContents()).map((text) => text.replace(/\s+/g, ' ').trim())
}

function status(page: Page, text: string) {
  return page.getByRole('status').filter({ hasText: text })
}

/** The focus: the accessible name of what has it, as a person with a screen reader hears it. */
function focused(page: Page): Promise<string | undefined> {
  return page.evaluate(() => {
    const active = document.activeElement as HTMLElement | null
    return active?.getAttribute('aria-label') ?? active?.textContent ?? undefined
  })
}

/** Deletes "Dune" from its dialog, as a person does, until the page shows the other book alone; the message that says so. */
async function deleteDune(page: Page) {
  await page.getByRole('button', { name: 'Dune', exact: true }).click()
  await page.getByRole('dialog', { name: 'Edit book' }).getByRole('button', { name: 'Delete', exact: true }).click()
  await page.getByRole('dialog', { name: 'Delete this book?' }).getByRole('button', { name: 'Delete', exact: true }).click()
  const deleted = status(page, 'Deleted “Dune”.')
  await deleted.waitFor()
  await waitForTitles(page, ['Emma'])
  return deleted
}

describe('the history of books in the page', { skip, timeout: 180_000, concurrency: 2 }, () => {
  before(startBrowser)
  after(stopBrowser)

  it('undoes a deletion with one click: the book comes back with its id', async (t) => {
    const { service, page } = await catalogueShown(t, [DUNE, EMMA], 'Dune')
    const deleted = await deleteDune(page)
    await assertAccessibleEverywhere(page, 'a deletion with Undo', 'undo-delete')
    assert.equal((await stored(service, 1)).status, 404)

    await deleted.getByRole('button', { name: 'Undo' }).click()
    await status(page, 'Restored “Dune”.').waitFor()
    await waitForTitles(page, ['Dune', 'Emma'])
    assert.equal(await focused(page), 'Dune', 'the focus goes to the book brought back')
    assert.deepEqual(await stored(service, 1), { status: 200, book: { id: 1, ...DUNE } })
    assert.deepEqual(await kinds(service, 1), ['restored', 'deleted', 'created'])
  })

  it('gives the focus to the book brought back also when the news of its return asks for the books again first', async (t) => {
    const { page } = await catalogueShown(t, [DUNE, EMMA], 'Dune')
    const deleted = await deleteDune(page)
    // The books asked for after the undo come only once the feed's news of it has asked for them again.
    let askedAgain = () => {}
    const again = new Promise<void>((resolve) => (askedAgain = resolve))
    let asked = 0
    await page.route('**/books?*', async (route) => {
      asked += 1
      if (asked === 1) await again
      else askedAgain()
      await route.continue()
    })

    await deleted.getByRole('button', { name: 'Undo' }).click()
    await status(page, 'Restored “Dune”.').waitFor()
    await waitForTitles(page, ['Dune', 'Emma'])
    assert.equal(asked, 2, 'the books were asked for twice')
    assert.equal(await focused(page), 'Dune', 'the focus goes to the book brought back')
  })

  it('keeps a book it brought back when the feed tells of its deletion only afterwards', async (t) => {
    const service = await serviceFor(t)
    await seed(service, [DUNE, EMMA])
    const page = await openPage(t, service)
    // The feed is held back until the deletion has been undone: its changes then come at once, in order.
    let release = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    await page.route('**/books/changes*', async (route) => {
      if (route.request().headers().accept === 'text/event-stream') await held
      await route.continue()
    })
    await signedIn(page)
    await (await deleteDune(page)).getByRole('button', { name: 'Undo' }).click()
    await status(page, 'Restored “Dune”.').waitFor()
    await waitForTitles(page, ['Dune', 'Emma'])

    release()
    // A book added after them shows once the page has heard every change before it.
    assert.equal((await call(service, 'POST', '/book', { token: await login(service), body: ULYSSES })).status, 201)
    await waitForTitles(page, ['Dune', 'Emma', 'Ulysses'])
    assert.equal(await focused(page), 'Dune', 'the book brought back keeps the focus')
  })

  it('deletes several books after one confirmation, and one Undo restores them all', async (t) => {
    const { service, page } = await catalogueShown(t, [DUNE, EMMA, ULYSSES], 'Dune')
    await page.getByRole('checkbox', { name: 'Select Dune' }).check()
    await page.getByRole('checkbox', { name: 'Select Ulysses' }).check()
    await page.getByRole('button', { name: 'Delete selected' }).click()
    const confirmation = page.getByRole('dialog', { name: 'Delete 2 books?' })
    await confirmation.getByText('They will be moved to the trash, from which they can be restored.').waitFor()
    await confirmation.getByRole('button', { name: 'Delete 2 books' }).click()
    const deleted = status(page, 'Deleted 2 books.')
    await deleted.waitFor()
    await waitForTitles(page, ['Emma'])
    assert.equal(await page.getByRole('dialog').count(), 0, 'one confirmation, no more')

    // "u" presses the Undo in view, as the shortcuts dialog says.
    await page.keyboard.press('u')
    await status(page, 'Restored 2 books.').waitFor()
    await waitForTitles(page, ['Dune', 'Emma', 'Ulysses'])
    for (const id of [1, 3]) assert.equal((await stored(service, id)).status, 200)
    assert.equal((await stored(service, 2)).status, 200)
    await assertAccessible(page, 'two books restored')
  })

  it('undoes an edit: the book takes the values it had before, and a later change is never overwritten', async (t) => {
    const { service, page } = await catalogueShown(t, [DUNE], 'Dune')
    await page.getByRole('button', { name: 'Dune', exact: true }).click()
    let dialog = page.getByRole('dialog', { name: 'Edit book' })
    await dialog.getByLabel('Title').fill('Dune Messiah')
    await dialog.getByLabel('Year', { exact: true }).fill('1969')
    await dialog.getByRole('button', { name: 'Save' }).click()
    let saved = status(page, 'Saved “Dune Messiah”.')
    await saved.waitFor()
    await saved.getByRole('button', { name: 'Undo' }).click()
    await status(page, 'Undid the edit of “Dune Messiah”.').waitFor()
    await page.getByRole('cell', { name: 'Dune', exact: true }).waitFor()
    assert.equal(await focused(page), 'Dune', 'the focus goes to the book')
    assert.deepEqual((await stored(service, 1)).book, { id: 1, ...DUNE })
    assert.deepEqual(await kinds(service, 1), ['updated', 'updated', 'created'])

    // Someone else changes the book after this edit: Undo leaves their change alone, and says why.
    await page.getByRole('button', { name: 'Dune', exact: true }).click()
    dialog = page.getByRole('dialog', { name: 'Edit book' })
    await dialog.getByLabel('Year', { exact: true }).fill('1966')
    await dialog.getByRole('button', { name: 'Save' }).click()
    saved = status(page, 'Saved “Dune”.')
    await saved.waitFor()
    const token = await login(service)
    assert.equal((await call(service, 'PUT', '/book/1', { token, body: { author: 'F. Herbert' } })).status, 200)
    await saved.getByRole('button', { name: 'Undo' }).click()
    await page
      .getByRole('alert')
      .filter({ hasText: '“Dune” was changed again since, so the edit was not undone. Its History shows every version.' })
      .waitFor()
    assert.deepEqual((await stored(service, 1)).book, { id: 1, title: 'Dune', author: 'F. Herbert', year: 1966 })
  })

  it('shows who changed a book, when and what, field by field, and brings a version back', async (t) => {
    const service = await serviceFor(t)
    const [dune] = await seed(service, [DUNE])
    const ada = await addUser(service, 'ada', 'editor')
    const adaToken = await login(service, ada.username, ada.password)
    assert.equal((await call(service, 'PUT', '/book/1', { token: adaToken, body: { year: 1966 } })).status, 200)
    const token = await login(service)
    assert.equal((await call(service, 'PUT', '/book/1', { token, body: { title: 'Dune Messiah', author: 'F. Herbert' } })).status, 200)
    const page = await openPage(t, service)
    await signedIn(page)

    await page.getByRole('button', { name: 'Dune Messiah', exact: true }).click()
    const form = page.getByRole('dialog', { name: 'Edit book' })
    // Something typed in the form stays there while the history is open over it.
    await form.getByLabel('Year', { exact: true }).fill('1970')
    await form.getByRole('button', { name: 'History' }).click()
    const history = page.getByRole('dialog', { name: 'History of “Dune Messiah”' })
    const changes = history.getByRole('list', { name: 'History of “Dune Messiah”' }).locator(':scope > li')
    await changes.nth(2).waitFor()
    assert.deepEqual(
      (await changes.allInnerTexts()).map((text) => text.replace(/, [^\n]*\n/, ', TIME\n').split('\n')[0]),
      [`Edited by ${TEST_USERNAME}, TIME`, 'Edited by ada, TIME', `Added by ${TEST_USERNAME}, TIME`],
    )
    assert.deepEqual(await texts(changes.nth(0).locator('ul li')), [
      'Title: from Dune → to Dune Messiah',
      'Author: from Frank Herbert → to F. Herbert',
    ])
    assert.deepEqual(await texts(changes.nth(1).locator('ul li')), ['Year: from 1965 → to 1966'])
    assert.deepEqual(await texts(changes.nth(2).locator('ul li')), ['Title: Dune', 'Author: Frank Herbert', 'Year: 1965'])
    // Each time is the reader's, and the exact instant for machines.
    const at = await changes.nth(1).locator('time').getAttribute('datetime')
    assert.ok(at && !Number.isNaN(Date.parse(at)))
    // The newest version is the book as it is: only the earlier ones can come back.
    assert.equal(await changes.nth(0).getByRole('button').count(), 0)
    await assertAccessibleEverywhere(page, 'the history of a book', 'history')

    await changes
      .nth(2)
      .getByRole('button', { name: /^Revert to this version/ })
      .click()
    await history.getByRole('status').filter({ hasText: '“Dune” has the values of' }).waitFor()
    await changes.nth(3).waitFor()
    assert.deepEqual(await texts(changes.nth(0).locator('ul li')), [
      'Title: from Dune Messiah → to Dune',
      'Author: from F. Herbert → to Frank Herbert',
      'Year: from 1966 → to 1965',
    ])
    assert.equal(await focused(page), 'History of “Dune Messiah”', 'the focus stays in the dialog')
    assert.deepEqual((await stored(service, dune!.id)).book, { id: dune!.id, ...DUNE })
    await page.keyboard.press('Escape')
    await history.waitFor({ state: 'detached' })
    // Back in the form: the version brought back, with what the person typed on top of it.
    assert.equal(await form.getByLabel('Title').inputValue(), 'Dune')
    assert.equal(await form.getByLabel('Year', { exact: true }).inputValue(), '1970')
    await page.getByRole('cell', { name: 'Frank Herbert', exact: true }).waitFor({ state: 'attached' })
    await form.getByRole('button', { name: 'Cancel' }).click()
    assert.deepEqual((await stored(service, dune!.id)).book, { id: dune!.id, ...DUNE })
  })

  it('refuses to bring a version back over a change it has not shown', async (t) => {
    const { service, page } = await catalogueShown(t, [DUNE], 'Dune')
    const token = await login(service)
    assert.equal((await call(service, 'PUT', '/book/1', { token, body: { year: 1966 } })).status, 200)
    await page.getByRole('button', { name: 'Dune', exact: true }).click()
    await page.getByRole('dialog', { name: 'Edit book' }).getByRole('button', { name: 'History' }).click()
    const history = page.getByRole('dialog', { name: 'History of “Dune”' })
    const revert = history.getByRole('button', { name: /^Revert to this version/ })
    await revert.waitFor()
    assert.equal((await call(service, 'PUT', '/book/1', { token, body: { author: 'F. Herbert' } })).status, 200)
    await revert.click()
    await history.getByRole('alert').filter({ hasText: 'The book was changed meanwhile, so no version was brought back.' }).waitFor()
    // The history now shows that change.
    await history.getByText('Author: from Frank Herbert → to F. Herbert').waitFor()
    assert.deepEqual((await stored(service, 1)).book, { id: 1, title: 'Dune', author: 'F. Herbert', year: 1966 })
  })

  it('lists the trash, latest deletion first, restores a book, and purges one for good', async (t) => {
    const service = await serviceFor(t)
    const made = await seed(service, [DUNE, EMMA, ...books(53, (n) => ({ title: `Pamphlet ${n}`, author: 'Anonymous', year: 1900 + n }))])
    const token = await login(service)
    for (const book of made.toReversed()) assert.equal((await call(service, 'DELETE', `/book/${book.id}`, { token })).status, 200)
    const page = await openPage(t, service)
    await signedIn(page)
    await page.getByText('The catalogue is empty.', { exact: false }).waitFor()

    const views = page.getByRole('navigation', { name: 'Views' })
    await views.getByRole('link', { name: 'Trash' }).click()
    assert.equal(new URL(page.url()).hash, '#trash')
    assert.equal(await views.getByRole('link', { name: 'Trash' }).getAttribute('aria-current'), 'page')
    const heading = page.getByRole('heading', { name: 'Trash', level: 2 })
    await heading.waitFor()
    assert.equal(await focused(page), 'Trash', 'the focus moves to the view')
    const trash = page.getByRole('table', { name: 'Deleted books, latest deletion first' })
    const rows = trash.locator('tbody tr')
    await rows.nth(49).waitFor()
    assert.equal(await rows.count(), 50, 'a page of 50')
    // Deleted last, so first: Dune, then Emma.
    const cells = (row: number) => rows.nth(row).locator('td')
    assert.equal(await cells(0).nth(0).innerText(), 'Dune\nFrank Herbert, 1965')
    assert.match(await cells(0).nth(1).innerText(), new RegExp(`^.+\\nby ${TEST_USERNAME}$`))
    assert.equal(await cells(0).nth(1).locator('time').getAttribute('datetime'), (await trashed(service))[0]!.deleted_at)
    assert.equal(await cells(1).nth(0).innerText(), 'Emma\nJane Austen, 1815')
    await assertAccessibleEverywhere(page, 'the trash', 'trash')

    await page.getByRole('button', { name: 'Show more deleted books' }).click()
    await rows.nth(54).waitFor()
    assert.equal(await page.getByRole('button', { name: 'Show more deleted books' }).isVisible(), false)
    assert.equal(await focused(page), 'Restore “Pamphlet 49”', 'the focus goes to the first book it brought')

    await trash.getByRole('button', { name: 'Restore “Dune”' }).click()
    await status(page, 'Restored “Dune”: it is in the catalogue again.').waitFor()
    assert.equal(await focused(page), 'Restore “Emma”', 'the focus goes to the book in its place')
    assert.deepEqual((await stored(service, 1)).book, { id: 1, ...DUNE })

    // An admin may purge: after one more question, the book and its history are gone for good.
    await trash.getByRole('button', { name: 'Purge “Emma”' }).click()
    const confirmation = page.getByRole('dialog', { name: 'Purge this book for good?' })
    await confirmation.getByText('and its history will be gone for good. This cannot be undone.', { exact: false }).waitFor()
    await assertAccessible(page, 'purge confirmation')
    await confirmation.getByRole('button', { name: 'Purge' }).click()
    await status(page, 'Purged “Emma”.').waitFor()
    assert.equal((await call(service, 'GET', '/book/2/history', { token })).status, 404)

    // The history of a book in the trash shows, without a way back to a version: it is restored first.
    await trash.getByRole('button', { name: 'History of “Pamphlet 1”' }).click()
    const history = page.getByRole('dialog', { name: 'History of “Pamphlet 1”' })
    await history.getByText('Moved to the trash.').waitFor()
    assert.equal(await history.getByRole('button', { name: /^Revert/ }).count(), 0)
    await history.getByRole('button', { name: 'Close' }).click()

    // Back to the catalogue: the restored book is there.
    await page.goBack()
    await page.getByRole('cell', { name: 'Dune', exact: true }).waitFor()
    assert.deepEqual(await shownTitles(page), ['Dune'])
    assert.equal(new URL(page.url()).hash, '')
  })

  it('shows an editor the trash without "Purge", and a reader neither the trash nor a way to revert', async (t) => {
    const service = await serviceFor(t)
    await seed(service, [DUNE, EMMA])
    const token = await login(service)
    assert.equal((await call(service, 'PUT', '/book/1', { token, body: { year: 1966 } })).status, 200)
    assert.equal((await call(service, 'DELETE', '/book/2', { token })).status, 200)

    const editor = await openPage(t, service, { path: '/app/#trash' })
    await signedIn(editor, await addUser(service, 'ed', 'editor'))
    await editor.getByRole('button', { name: 'Restore “Emma”' }).waitFor()
    assert.equal(await editor.getByRole('button', { name: /^Purge/ }).count(), 0)
    assert.equal(await editor.getByRole('link', { name: 'Users' }).count(), 0)

    // A reader who follows a link to the trash sees the catalogue: the trash is not theirs.
    const reader = await openPage(t, service, { path: '/app/#trash' })
    await signedIn(reader, await addUser(service, 'rea', 'reader'))
    await reader.getByRole('cell', { name: 'Dune', exact: true }).waitFor()
    assert.equal(new URL(reader.url()).hash, '')
    assert.equal(await reader.getByRole('link', { name: 'Trash' }).count(), 0)
    await reader.getByRole('button', { name: 'Dune', exact: true }).click()
    const book = reader.getByRole('dialog', { name: 'Book' })
    await book.getByText('1966').waitFor()
    await book.getByRole('button', { name: 'History' }).click()
    const history = reader.getByRole('dialog', { name: 'History of “Dune”' })
    await history.getByText('Year: from 1965 → to 1966').waitFor()
    assert.equal(await history.getByRole('button', { name: /^Revert/ }).count(), 0)
    await assertAccessible(reader, 'a reader reading a history')
  })
})

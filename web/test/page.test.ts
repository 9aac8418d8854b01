/**
 * The catalogue page in Debian's Chromium against a real service process: every flow a person
 * goes through with a few books, axe-core in each state, and screenshots at desktop and phone
 * width. `large-catalogue.test.ts` goes through those that only show with 10,000, and
 * `import.test.ts` the import of a file.
 */
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { after, before, describe, it, type TestContext } from 'node:test'
import type { Page } from 'playwright-core'
import { TEST_PASSWORD, TEST_USERNAME, storeEngines } from '../../test/helpers.ts'
import { call, login, serviceEnv, startService } from '../../test/support/service.ts'
import { startTcpProxy } from '../../test/support/tcp-proxy.ts'
import { createTestSchema } from '../../test/support/postgres.ts'
import { droppedWhenSuiteEnds } from '../../test/support/temporary.ts'
import {
  PHONE,
  DESKTOP,
  assertAccessible,
  assertAccessibleEverywhere,
  catalogueShown,
  assertNoSidewaysScroll,
  books,
  countLine,
  openPage,
  screenshot,
  seed,
  serviceFor,
  shownTitles,
  signIn,
  signedIn,
  skip,
  startBrowser,
  stopBrowser,
  waitForTitles,
  type Book,
  type Service,
} from './support/browser-page.ts'

const HOSTILE_TITLE = '<img src=x onerror="document.body.dataset.pwned=1">'
const HOSTILE_AUTHOR = '<script>document.body.dataset.pwned=1</script> & "Co"'
const postgres = storeEngines.find((engine) => engine.name === 'postgres')!

function rows(page: Page) {
  return page.getByRole('table').getByRole('row')
}

/** A catalogue of one book, "Dune", signed in on a page that cannot follow the changes. */
async function duneWithoutChanges(t: TestContext) {
  const service = await serviceFor(t)
  const [dune] = await seed(service, [{ title: 'Dune', author: 'Frank Herbert', year: 1965 }])
  const page = await openPage(t, service)
  await page.route('**/books/changes?*', (route) => route.abort())
  await signedIn(page)
  return { service, dune: dune!, page }
}

// Every flow has its own service and browser context, so two run at once: the runner takes files
// in name order, and this longest one, started last, would otherwise be the suite's tail.
describe('the catalogue page in a browser', { skip, timeout: 180_000, concurrency: 2 }, () => {
  before(startBrowser)
  after(stopBrowser)
  const dropAtEnd = droppedWhenSuiteEnds()

  it('opens at /, refuses a wrong password, signs in to an empty catalogue and signs out', async (t) => {
    const service = await serviceFor(t)
    const page = await openPage(t, service)
    assert.equal(new URL(page.url()).pathname, '/app/')
    await page.getByLabel('Username').waitFor()
    await assertAccessible(page, 'sign-in form')
    await screenshot(page, 'sign-in-desktop')

    await signIn(page, 'wrong password')
    await page.getByRole('alert').filter({ hasText: 'Wrong username or password.' }).waitFor()
    await assertAccessible(page, 'wrong password')

    await signedIn(page)
    await page.getByRole('status').filter({ hasText: 'The catalogue is empty. Add the first book with “Add book”.' }).waitFor()
    assert.equal(await page.getByRole('table').isVisible(), false)
    await assertAccessible(page, 'empty catalogue')
    await screenshot(page, 'empty-desktop')

    const token = await page.evaluate(() => sessionStorage.getItem('book-catalogue.token'))
    assert.ok(token && token.split('.').length === 3, 'the token is kept in sessionStorage')
    assert.equal(await page.evaluate(() => localStorage.length), 0, 'nothing is kept in localStorage')

    // Signing out also clears the address: the next person starts from the whole catalogue.
    await page.getByLabel('Search').fill('dune')
    await page.waitForURL('**/app/?q=dune')
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('status').filter({ hasText: 'You have signed out.' }).waitFor()
    assert.equal(await page.evaluate(() => sessionStorage.getItem('book-catalogue.token')), null)
    assert.equal(new URL(page.url()).search, '')
  })

  it('browses the books page by page, with a page size to choose, and stays narrow at 375 px', async (t) => {
    const service = await serviceFor(t)
    await seed(
      service,
      books(110, (n) => ({ title: `Book ${String(n).padStart(3, '0')}`, author: `Author ${n % 7}`, year: 1900 + n })),
    )
    const page = await openPage(t, service)
    await signedIn(page)
    const table = page.getByRole('table')
    for (const name of ['Title', 'Author', 'Year']) await table.getByRole('columnheader', { name, exact: true }).waitFor()
    await page.getByRole('button', { name: 'Book 050', exact: true }).waitFor()
    assert.equal(await rows(page).count(), 51, 'a header row and the first 50 books')
    assert.equal(await countLine(page).textContent(), '110 books in the catalogue, showing 1–50, in the order they were added.')
    const pages = page.getByRole('navigation', { name: 'Pages' })
    assert.equal(await pages.getByLabel('Page', { exact: true }).inputValue(), '1')
    await pages.getByText('of 3').waitFor()
    assert.equal(await pages.getByRole('button', { name: 'Previous page' }).isDisabled(), true)
    await assertAccessible(page, 'first page of books')
    await screenshot(page, 'books-desktop')

    const seen: string[] = [...(await shownTitles(page))]
    await pages.getByRole('button', { name: 'Next page' }).click()
    await page.getByRole('button', { name: 'Book 100', exact: true }).waitFor()
    assert.equal(await rows(page).count(), 51)
    assert.equal(new URL(page.url()).search, '?page=2')
    seen.push(...(await shownTitles(page)))

    // With the keyboard: the focus stays in the pager, on the page number once Next no longer applies.
    await pages.getByRole('button', { name: 'Next page' }).focus()
    await page.keyboard.press('Enter')
    await page.getByRole('button', { name: 'Book 110', exact: true }).waitFor()
    assert.equal(await rows(page).count(), 11)
    seen.push(...(await shownTitles(page)))
    const expected = Array.from({ length: 110 }, (_, n) => `Book ${String(n + 1).padStart(3, '0')}`)
    assert.deepEqual(seen, expected, 'no book twice, none skipped')
    assert.equal(await pages.getByRole('button', { name: 'Next page' }).isDisabled(), true)
    assert.equal(await pages.getByRole('button', { name: 'Last page' }).isDisabled(), true)
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('inputmode')), 'numeric')
    assert.equal(await countLine(page).textContent(), '110 books in the catalogue, showing 101–110, in the order they were added.')

    await pages.getByRole('button', { name: 'First page' }).click()
    await page.getByRole('button', { name: 'Book 001', exact: true }).waitFor()
    await pages.getByLabel('Page', { exact: true }).fill('2')
    await pages.getByLabel('Page', { exact: true }).press('Enter')
    await page.getByRole('button', { name: 'Book 051', exact: true }).waitFor()

    // A larger page keeps the first book shown on the page shown.
    await pages.getByLabel('Books per page').selectOption('100')
    await page.getByRole('button', { name: 'Book 100', exact: true }).waitFor()
    assert.equal(await rows(page).count(), 101)
    assert.equal(new URL(page.url()).search, '?size=100')
    await pages.getByRole('button', { name: 'Last page' }).click()
    await page.getByRole('button', { name: 'Book 110', exact: true }).waitFor()
    assert.equal(await rows(page).count(), 11)

    await page.setViewportSize(PHONE)
    await assertNoSidewaysScroll(page)
    await assertAccessible(page, 'the last page at 375 px')
    await screenshot(page, 'books-phone')
  })

  it('sorts by a column header, and searches as the person types with author and year filters', async (t) => {
    const service = await serviceFor(t)
    await seed(service, [
      { title: 'Dune', author: 'Frank Herbert', year: 1965 },
      { title: 'Carrie', author: 'Stephen King', year: 1974 },
      { title: 'The Poisonwood Bible', author: 'Barbara Kingsolver', year: 1998 },
      { title: 'Harry Potter and the Sorcerer’s Stone', author: 'J. K. Rowling', year: 1997 },
      { title: 'Cien años de soledad', author: 'Gabriel García Márquez', year: 1967 },
    ])
    const page = await openPage(t, service)
    await signedIn(page)
    await page.getByText('5 books in the catalogue').waitFor()
    assert.equal(await page.getByRole('button', { name: 'Next page' }).count(), 0, 'one page needs no page buttons')
    await page.getByLabel('Books per page').waitFor()

    const title = page.getByRole('columnheader', { name: 'Title', exact: true })
    await title.getByRole('button').click()
    await page.waitForFunction(() => document.querySelector('th[aria-sort="ascending"]') !== null)
    assert.deepEqual(await shownTitles(page), [
      'Carrie',
      'Cien años de soledad',
      'Dune',
      'Harry Potter and the Sorcerer’s Stone',
      'The Poisonwood Bible',
    ])
    await title.getByRole('button').click()
    await page.waitForFunction(() => document.querySelector('th[aria-sort="descending"]') !== null)
    assert.equal((await shownTitles(page))[0], 'The Poisonwood Bible')
    const year = page.getByRole('columnheader', { name: 'Year', exact: true })
    await year.getByRole('button').click()
    await page.waitForFunction(() => document.querySelector('th.col-year[aria-sort="ascending"]') !== null)
    assert.deepEqual(await page.locator('tbody td.col-year').allTextContents(), ['1965', '1967', '1974', '1997', '1998'])
    await assertAccessible(page, 'sorted by year')

    // Typed one key at a time, as a person does: each key asks, and the answer to the last one stays.
    await page.getByLabel('Search').pressSequentially('harr pott', { delay: 20 })
    await page.getByText('1 book matches', { exact: false }).waitFor()
    assert.deepEqual(await shownTitles(page), ['Harry Potter and the Sorcerer’s Stone'])
    await page.getByLabel('Search').fill('garcia')
    // The count reads the same as for the search before: wait for the book itself.
    await waitForTitles(page, ['Cien años de soledad'])
    await page.getByText('1 book matches', { exact: false }).waitFor()
    await page.getByLabel('Search').fill('')

    await page.getByLabel('Filter by author').fill('king')
    await page.getByText('2 books match').waitFor()
    await page.getByLabel('From year').fill('1990')
    await page.getByText('1 book matches', { exact: false }).waitFor()
    assert.deepEqual(await shownTitles(page), ['The Poisonwood Bible'])
    await page.getByLabel('To year').fill('1980')
    await page.getByRole('alert').filter({ hasText: 'The “To year” must not be before the “From year”.' }).waitFor()
    await page.getByLabel('To year').fill('1999')
    await page.getByLabel('Search').fill('nothing like this')
    await page.getByText('No books match this search.').waitFor()
    await assertAccessible(page, 'no match')
    await screenshot(page, 'no-match-desktop')
  })

  it('adds a book with the keyboard alone, checking the API rules in the page first', async (t) => {
    const service = await serviceFor(t)
    const page = await openPage(t, service)
    await signedIn(page)
    await page.getByText('The catalogue is empty.', { exact: false }).waitFor()

    await page.getByLabel('To year').focus()
    await page.keyboard.press('Tab')
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Add book')
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)
    await page.keyboard.press('Enter')
    const dialog = page.getByRole('dialog', { name: 'Add a book' })
    await dialog.waitFor()
    // The first field has the focus; Tab walks the form.
    await page.keyboard.type('   ')
    await page.keyboard.press('Tab')
    await page.keyboard.type('Frank Herbert')
    await page.keyboard.press('Tab')
    await page.keyboard.type('19650')
    await page.keyboard.press('Enter')
    await dialog.getByText('Title is required.').waitFor()
    await dialog.getByText('Year must be between -9999 and 9999.').waitFor()
    assert.equal(await dialog.getByLabel('Title').getAttribute('aria-invalid'), 'true')
    assert.equal(
      await page.evaluate(() => document.activeElement?.getAttribute('name')),
      'title',
      'the focus goes to the first wrong field',
    )
    await assertAccessible(page, 'add form with errors')
    await screenshot(page, 'add-errors-desktop')

    await page.keyboard.press('ControlOrMeta+A')
    await page.keyboard.type('Dune')
    await dialog.getByLabel('Year', { exact: true }).fill('1965')
    await dialog.getByLabel('Year', { exact: true }).press('Enter')
    await page.getByRole('status').filter({ hasText: 'Added “Dune”.' }).waitFor()
    await page.getByRole('cell', { name: 'Dune', exact: true }).waitFor()
    assert.equal(await dialog.count(), 0)
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Add book', 'the focus returns to the button')
    assert.notEqual(outline, 'none', 'the focused button shows where the focus is')

    const token = await login(service)
    const stored = await call(service, 'GET', '/books', { token })
    assert.deepEqual(
      stored.body.data.map(({ title, author, year }: Book) => ({ title, author, year })),
      [{ title: 'Dune', author: 'Frank Herbert', year: 1965 }],
    )
  })

  it('edits a book, and on a conflicting change that Save finds overwrites nothing, shows what changed, and saves again only the fields the person changed', async (t) => {
    // Where the changes cannot be followed (a proxy that holds streams back), Save is what finds the conflict.
    const { service, dune, page } = await duneWithoutChanges(t)
    await page.getByRole('button', { name: 'Dune', exact: true }).click()
    let dialog = page.getByRole('dialog', { name: 'Edit book' })
    assert.equal(await dialog.getByLabel('Title').inputValue(), 'Dune')
    await dialog.getByLabel('Title').fill('Dune Messiah')
    await dialog.getByLabel('Year', { exact: true }).fill('1969')
    await dialog.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('status').filter({ hasText: 'Saved “Dune Messiah”.' }).waitFor()
    await page.getByRole('cell', { name: 'Dune Messiah', exact: true }).waitFor()

    await page.getByRole('button', { name: 'Dune Messiah', exact: true }).click()
    dialog = page.getByRole('dialog', { name: 'Edit book' })
    await dialog.getByLabel('Title').waitFor()
    // Someone else changes the book while the form is open.
    const token = await login(service)
    assert.equal((await call(service, 'PUT', `/book/${dune.id}`, { token, body: { author: 'F. Herbert' } })).status, 200)
    await dialog.getByLabel('Title').fill('Children of Dune')
    await dialog.getByRole('button', { name: 'Save' }).click()
    await dialog.getByRole('alert').filter({ hasText: 'This book was changed meanwhile, so nothing was saved.' }).waitFor()
    // What each side changed, field by field: theirs saved meanwhile, the person's still in the form.
    const changed = dialog.getByRole('table', { name: 'What changed since you opened “Dune Messiah”' })
    assert.deepEqual(await changed.getByRole('row').allInnerTexts(), [
      'Field\tSaved meanwhile\tYours',
      'Title\tno change\tChildren of Dune',
      'Author\tF. Herbert\tno change',
    ])
    assert.equal(await dialog.getByLabel('Title').inputValue(), 'Children of Dune', 'the person’s changes stay in the form')
    assert.equal(await dialog.getByLabel('Author').inputValue(), 'F. Herbert', 'the other change is in the form too')
    assert.deepEqual((await call(service, 'GET', `/book/${dune.id}`, { token })).body.data, {
      id: dune.id,
      title: 'Dune Messiah',
      author: 'F. Herbert',
      year: 1969,
    })
    // The table under the dialog shows the book as it is now.
    await page.locator('td.col-author').filter({ hasText: 'F. Herbert' }).waitFor({ state: 'attached' })
    await assertAccessible(page, 'edit conflict')
    await screenshot(page, 'conflict-desktop')
    await page.setViewportSize(PHONE)
    await screenshot(page, 'conflict-phone')
    await page.setViewportSize(DESKTOP)

    // "Save again" sends only the field the person changed: the other change survives.
    const again = page.waitForRequest((request) => request.method() === 'PUT')
    await dialog.getByRole('button', { name: 'Save again', exact: true }).click()
    assert.deepEqual((await again).postDataJSON(), { title: 'Children of Dune' })
    await page.getByRole('status').filter({ hasText: 'Saved “Children of Dune”.' }).waitFor()
    assert.deepEqual((await call(service, 'GET', `/book/${dune.id}`, { token })).body.data, {
      id: dune.id,
      title: 'Children of Dune',
      author: 'F. Herbert',
      year: 1969,
    })
  })

  it('deletes a book only after the confirmation dialog', async (t) => {
    const service = await serviceFor(t)
    const [dune] = await seed(service, [
      { title: 'Dune', author: 'Frank Herbert', year: 1965 },
      { title: 'Emma', author: 'Jane Austen', year: 1815 },
    ])
    const page = await openPage(t, service)
    await signedIn(page)

    // A title opens its book; "Delete" there asks once more, over the form.
    await page.getByRole('button', { name: 'Dune', exact: true }).click()
    const form = page.getByRole('dialog', { name: 'Edit book' })
    await form.getByRole('button', { name: 'Delete', exact: true }).click()
    const confirmation = page.getByRole('dialog', { name: 'Delete this book?' })
    await confirmation.getByText('“Dune” by Frank Herbert (1965) will be moved to the trash, from which it can be restored.').waitFor()
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Cancel', 'Enter alone never deletes')
    await assertAccessible(page, 'delete confirmation')
    await screenshot(page, 'delete-dialog-desktop')
    await page.keyboard.press('Escape')
    await confirmation.waitFor({ state: 'detached' })
    await form.getByLabel('Title').waitFor()
    await page.keyboard.press('Escape')
    await form.waitFor({ state: 'detached' })
    assert.equal(await page.getByRole('cell', { name: 'Dune', exact: true }).count(), 1, 'Escape deletes nothing')

    await page.getByRole('button', { name: 'Dune', exact: true }).click()
    await form.getByRole('button', { name: 'Delete', exact: true }).click()
    await confirmation.getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Deleted “Dune”.' }).waitFor()
    assert.equal(await page.getByRole('dialog').count(), 0)
    assert.equal(await page.getByRole('cell', { name: 'Dune', exact: true }).count(), 0)
    assert.deepEqual(await shownTitles(page), ['Emma'])
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Emma', 'the focus goes to the row in its place')
    const token = await login(service)
    assert.equal((await call(service, 'GET', `/book/${dune!.id}`, { token })).status, 404)
  })

  it('deletes from the form only the version the form shows', async (t) => {
    // Where the changes cannot be followed, the form cannot learn of a change made meanwhile.
    const { service, dune, page } = await duneWithoutChanges(t)
    await page.getByRole('button', { name: 'Dune', exact: true }).click()
    const form = page.getByRole('dialog', { name: 'Edit book' })
    await form.getByLabel('Title').waitFor()
    const token = await login(service)
    assert.equal((await call(service, 'PUT', `/book/${dune.id}`, { token, body: { title: 'Dune Messiah' } })).status, 200)
    await form.getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByRole('dialog', { name: 'Delete this book?' }).getByRole('button', { name: 'Delete', exact: true }).click()
    await page
      .getByRole('alert')
      .filter({ hasText: '“Dune” was changed meanwhile, so it was not deleted. Open it to see the current version.' })
      .waitFor()
    assert.equal((await call(service, 'GET', `/book/${dune.id}`, { token })).status, 200, 'the book someone else changed stays')

    // Opened again, the form shows the current version, and deletes it.
    await page.getByRole('button', { name: 'Dune', exact: true }).click()
    assert.equal(await form.getByLabel('Title').inputValue(), 'Dune Messiah')
    await form.getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByRole('dialog', { name: 'Delete this book?' }).getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Deleted “Dune Messiah”.' }).waitFor()
    assert.equal((await call(service, 'GET', `/book/${dune.id}`, { token })).status, 404)
  })

  it('exports the books shown as a CSV file', async (t) => {
    const service = await serviceFor(t)
    await seed(service, [
      { title: 'Dune', author: 'Frank Herbert', year: 1965 },
      { title: '=HYPERLINK("x")', author: 'Jane Austen', year: 1815 },
    ])
    const page = await openPage(t, service, { acceptDownloads: true })
    await signedIn(page)
    await page.getByRole('cell', { name: 'Dune', exact: true }).waitFor()

    const download = page.waitForEvent('download')
    await page.getByRole('button', { name: 'Export CSV' }).click()
    const file = await download
    assert.equal(file.suggestedFilename(), 'books.csv')
    const lines = (await readFile(await file.path(), 'utf8')).trim().split(/\r?\n/)
    assert.equal(lines[0], 'id,title,author,year')
    assert.deepEqual(lines.slice(1).toSorted(), [`1,Dune,Frank Herbert,1965`, `2,"'=HYPERLINK(""x"")",Jane Austen,1815`].toSorted())
    await assertAccessible(page, 'exported')

    // The export follows the search shown.
    await page.getByLabel('Filter by author').fill('austen')
    await waitForTitles(page, ['=HYPERLINK("x")'])
    const narrowed = page.waitForEvent('download')
    const request = page.waitForRequest('**/books/export?*')
    await page.getByRole('button', { name: 'Export CSV' }).click()
    const url = new URL((await request).url())
    assert.equal(url.searchParams.get('author'), 'austen')
    assert.equal(url.searchParams.get('format'), 'csv')
    assert.equal(url.searchParams.get('limit'), null)
    const narrowedLines = (await readFile(await (await narrowed).path(), 'utf8')).trim().split(/\r?\n/)
    assert.deepEqual(narrowedLines.slice(1), [`2,"'=HYPERLINK(""x"")",Jane Austen,1815`])
  })

  it('shows hostile titles and authors as text, without running them', async (t) => {
    const service = await serviceFor(t)
    await seed(service, [
      { title: HOSTILE_TITLE, author: HOSTILE_AUTHOR, year: 1 },
      { title: 'A title long enough to wrap over several lines of a narrow screen, as real titles do', author: 'Anonymous', year: -450 },
    ])
    // In the dark colour scheme, so axe-core checks its contrast too.
    const page = await openPage(t, service, { colorScheme: 'dark' })
    await signedIn(page)
    await page.getByRole('cell', { name: HOSTILE_TITLE, exact: true }).waitFor()
    await page.getByRole('cell', { name: HOSTILE_AUTHOR, exact: true }).waitFor()
    assert.equal(await page.locator('main img, main script').count(), 0)
    await page.getByRole('button', { name: HOSTILE_TITLE, exact: true }).click()
    const form = page.getByRole('dialog', { name: 'Edit book' })
    assert.equal(await form.getByLabel('Title').inputValue(), HOSTILE_TITLE)
    await form.getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByRole('dialog', { name: 'Delete this book?' }).getByText(HOSTILE_TITLE).waitFor()
    await page.keyboard.press('Escape')
    await page.keyboard.press('Escape')
    await form.waitFor({ state: 'detached' })
    assert.equal(await page.evaluate(() => document.body.dataset.pwned), undefined)
    await assertAccessible(page, 'hostile titles, dark')
    await screenshot(page, 'hostile-dark-desktop')
    await page.setViewportSize(PHONE)
    await assertNoSidewaysScroll(page)
    await assertAccessible(page, 'hostile titles, dark, 375 px')
    await screenshot(page, 'hostile-dark-phone')
  })

  it('asks for the password again over the page when the service refuses the token, and then shows what was asked', async (t) => {
    const service = await serviceFor(t)
    await seed(service, [{ title: 'Dune', author: 'Frank Herbert', year: 1965 }])
    const page = await openPage(t, service)
    await signedIn(page)
    await page.getByRole('cell', { name: 'Dune', exact: true }).waitFor()
    // A token the service no longer accepts, as after a restart with a new secret.
    const token = await page.evaluate(() => sessionStorage.getItem('book-catalogue.token')!)
    await page.evaluate((forged) => sessionStorage.setItem('book-catalogue.token', forged), `${token.slice(0, -4)}AAAA`)
    await page.reload()
    const again = page.getByRole('dialog', { name: 'Sign in again to continue' })
    await again.getByText('The service no longer accepts your session', { exact: false }).waitFor()
    assert.equal(await again.getByLabel('Username').inputValue(), TEST_USERNAME)
    assert.equal(await again.getByLabel('Username').getAttribute('readonly'), '', 'the same person goes on')
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('type')), 'password')
    await assertAccessibleEverywhere(page, 'signing in again over the page', 'sign-in-again')

    await again.getByLabel('Password').fill('wrong password')
    await again.getByRole('button', { name: 'Sign in' }).click()
    await again.getByRole('alert').filter({ hasText: 'Wrong username or password.' }).waitFor()
    await again.getByLabel('Password').fill(TEST_PASSWORD)
    await again.getByRole('button', { name: 'Sign in' }).click()
    await again.waitFor({ state: 'detached' })
    // The list the service refused is asked again with the new token.
    await page.getByRole('cell', { name: 'Dune', exact: true }).waitFor()
  })

  it('shows how long to wait after too many failed sign-ins', async (t) => {
    const service = await serviceFor(t)
    for (let attempt = 0; attempt < 10; attempt++) {
      const answer = await call(service, 'POST', '/token', { body: { username: TEST_USERNAME, password: 'guess' } })
      assert.equal(answer.status, 401)
    }
    const page = await openPage(t, service)
    await signIn(page)
    await page
      .getByRole('alert')
      .filter({ hasText: /^Too many failed sign-ins from this address\. Try again in (1[0-5]) minutes\.$/ })
      .waitFor()
    await assertAccessible(page, 'too many sign-ins')
    await page.setViewportSize(PHONE)
    await assertNoSidewaysScroll(page)
    await screenshot(page, 'too-many-phone')
  })

  it('says when the network is lost, and loads again when it is back', async (t) => {
    const { page } = await catalogueShown(t, [{ title: 'Dune', author: 'Frank Herbert', year: 1965 }], 'Dune')

    await page.context().setOffline(true)
    await page.getByLabel('Search').fill('dune')
    const lost = page.getByRole('alert').filter({ hasText: 'The service cannot be reached.' })
    await lost.waitFor()
    await lost.getByRole('button', { name: 'Retry' }).waitFor()
    await assertAccessible(page, 'network lost')
    await screenshot(page, 'network-lost-desktop')
    await page.setViewportSize(PHONE)
    await assertNoSidewaysScroll(page)
    await screenshot(page, 'network-lost-phone')

    await page.context().setOffline(false)
    // Back online, the page tries again by itself.
    await lost.waitFor({ state: 'detached' })
    await page.getByRole('cell', { name: 'Dune', exact: true }).waitFor()

    // And the Retry button tries again when asked.
    await page.route('**/books?*', (route) => route.abort('internetdisconnected'))
    await page.getByLabel('Search').fill('dun')
    await lost.getByRole('button', { name: 'Retry' }).waitFor()
    await page.unroute('**/books?*')
    await lost.getByRole('button', { name: 'Retry' }).click()
    await lost.waitFor({ state: 'detached' })
    await page.getByRole('cell', { name: 'Dune', exact: true }).waitFor()
  })

  it('says when the store is unavailable (503), and retries', { skip: postgres.skip }, async (t) => {
    const schema = await createTestSchema()
    dropAtEnd(schema)
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 })
    t.after(() => proxy.close())
    const url = new URL(schema.url)
    url.port = String(proxy.port)
    // The default connect timeout: on a loaded machine the first connection through the proxy may take a while.
    const service = await startService(serviceEnv(url.toString(), { DB_QUERY_TIMEOUT_MS: '1000' }))
    t.after(() => service.stop())
    await seed(service, [{ title: 'Dune', author: 'Frank Herbert', year: 1965 }])
    const page = await openPage(t, service)
    await signedIn(page)
    await page.getByRole('cell', { name: 'Dune', exact: true }).waitFor()

    await proxy.down()
    const searches: string[] = []
    page.on('request', (request) => {
      if (request.url().includes('q=dune')) searches.push(request.url())
    })
    await page.getByLabel('Search').fill('dune')
    const unavailable = page
      .getByRole('alert')
      .filter({ hasText: 'The catalogue is unavailable right now: its store is not answering. Try again in 5 seconds.' })
    await unavailable.waitFor()
    // Said at once: the page did not wait out the Retry-After in silence to ask again.
    assert.equal(searches.length, 1)
    await assertAccessible(page, 'store unavailable')
    await screenshot(page, 'unavailable-desktop')

    await proxy.restore()
    // The service finds its store again by itself; the person then asks again.
    await waitUntilReady(service)
    await unavailable.getByRole('button', { name: 'Retry' }).click()
    await unavailable.waitFor({ state: 'detached' })
    await page.getByRole('cell', { name: 'Dune', exact: true }).waitFor()
  })
})

/** Polls /readyz until the store answers again, within the contract's 5 s after it is back. */
async function waitUntilReady(service: Service): Promise<void> {
  const deadline = performance.now() + 5000
  while ((await fetch(`${service.url}/readyz`)).status !== 200) {
    assert.ok(performance.now() < deadline, 'the service did not find its store again within 5 s')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

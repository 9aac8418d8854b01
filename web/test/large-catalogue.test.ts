/**
 * The catalogue page with 10,000 books, as a librarian uses it: a toolbar in reach, pages, an
 * address that holds what is shown, sorting that shows itself, counts in the reader's locale,
 * wrong filters and addresses, several books at once, the keyboard. The tests that change no
 * book share one catalogue. The figures the page must reach are in `large-catalogue.figures.ts`.
 */
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { after, before, describe, it } from 'node:test'
import { call, login, type ListeningService } from '../../test/support/service.ts'
import {
  DESKTOP,
  PHONE,
  assertAccessible,
  assertAccessibleEverywhere,
  countLine,
  openPage,
  seed,
  serviceFor,
  shownTitles,
  signedIn,
  skip,
  startBrowser,
  stopBrowser,
  waitForTitles,
} from './support/browser-page.ts'
import {
  CATALOGUE_SIZE,
  catalogueBook,
  catalogueService,
  english,
  find,
  pager,
  search,
  sharedCatalogue,
  waitForPage,
} from './support/catalogue.ts'

/** One catalogue for the tests that change no book. */
let shared: ListeningService
before(async () => {
  if (skip) return
  await startBrowser()
  shared = await sharedCatalogue()
})
after(async () => {
  await shared?.stop()
  await stopBrowser()
})

describe('the catalogue page with 10,000 books', { skip, timeout: 180_000, concurrency: 2 }, () => {
  it('keeps the toolbar in reach and the focus clear of it, at 1280 and 375 px, light and dark', async (t) => {
    const page = await openPage(t, shared)
    await signedIn(page)
    await countLine(page).filter({ hasText: '10,000 books in the catalogue, showing 1–50, in the order they were added.' }).waitFor()
    await pager(page).getByLabel('Books per page').selectOption('100')
    await waitForPage(page, 1)
    await assertAccessibleEverywhere(page, 'a page of 100 books', 'catalogue')

    for (const viewport of [DESKTOP, PHONE]) {
      await page.setViewportSize(viewport)
      await page.keyboard.press('End')
      await page.waitForFunction(() => window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 1)
      // At the end of 100 rows, each control of the toolbar is on screen and nothing covers it.
      for (const control of [
        search(page),
        page.getByRole('button', { name: 'Add book' }),
        page.getByRole('button', { name: 'Import books' }),
        page.getByRole('button', { name: 'Export CSV' }),
      ]) {
        const box = (await control.boundingBox())!
        assert.ok(
          box.y >= 0 && box.y + box.height <= viewport.height,
          `${await control.textContent()} is off screen at ${viewport.width} px`,
        )
        assert.equal(
          await control.evaluate((element) => {
            const { x, y, width, height } = element.getBoundingClientRect()
            return element.contains(document.elementFromPoint(x + width / 2, y + height / 2))
          }),
          true,
          `something covers a toolbar control at ${viewport.width} px`,
        )
      }
      await page.setViewportSize(DESKTOP)
    }

    // The focus moving up the rows never hides under the toolbar.
    const checkboxes = page.getByRole('checkbox', { name: /^Select (?!every)/ })
    await checkboxes.nth(60).focus()
    const toolbarBottom = async () => {
      const { y, height } = (await page.locator('.toolbar').boundingBox())!
      return y + height
    }
    for (let row = 60; row > 40; row--) {
      await page.keyboard.press('ArrowUp')
      const top = await page.evaluate(() => document.activeElement!.getBoundingClientRect().top)
      assert.ok(top >= (await toolbarBottom()), `row ${row} got the focus under the toolbar`)
    }
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), `Select ${catalogueBook(41).title}`)
  })

  it('holds search, filters, sort and page in the address, for reload, back, forward and a shared link', async (t) => {
    const page = await openPage(t, shared)
    await signedIn(page)
    await countLine(page).filter({ hasText: '10,000 books' }).waitFor()

    await search(page).pressSequentially('stone', { delay: 20 })
    await page.getByLabel('Filter by author').fill('berg')
    await page.getByLabel('From year').fill('1850')
    await page.getByRole('button', { name: 'Title', exact: true }).click()
    const wanted = await find(shared, 'q=stone&author=berg&year_from=1850&sort=title&limit=1000')
    assert.ok(wanted.total > 120, `the search finds ${wanted.total} books: too few for three pages`)
    await waitForTitles(page, wanted.titles.slice(0, 50))
    await pager(page).getByRole('button', { name: 'Next page' }).click()
    await waitForTitles(page, wanted.titles.slice(50, 100))
    await pager(page).getByLabel('Books per page').selectOption('25')
    await waitForTitles(page, wanted.titles.slice(50, 75))
    const address = new URL(page.url())
    assert.equal(address.search, '?q=stone&author=berg&year_from=1850&sort=title&page=3&size=25')

    await page.reload()
    await waitForTitles(page, wanted.titles.slice(50, 75))
    assert.equal(await search(page).inputValue(), 'stone')
    assert.equal(await page.getByLabel('Filter by author').inputValue(), 'berg')
    assert.equal(await page.getByLabel('From year').inputValue(), '1850')
    assert.equal(await page.getByRole('columnheader', { name: 'Title', exact: true }).getAttribute('aria-sort'), 'ascending')
    assert.equal(await pager(page).getByLabel('Books per page').inputValue(), '25')

    await page.goBack()
    await waitForTitles(page, wanted.titles.slice(50, 100))
    await page.goBack()
    await waitForTitles(page, wanted.titles.slice(0, 50))
    await page.goBack()
    // Before the sort: the search in the service's default order, best matches first.
    await page.waitForFunction(() => document.querySelector('th[aria-sort="ascending"]') === null)
    await countLine(page).filter({ hasText: 'best matches first' }).waitFor()
    // The whole search was typed into one entry: one step back is the catalogue before it.
    await page.goBack()
    await countLine(page).filter({ hasText: '10,000 books in the catalogue' }).waitFor()
    assert.equal(await search(page).inputValue(), '')
    assert.equal(new URL(page.url()).search, '')
    await page.goForward()
    await page.waitForFunction(() => (document.querySelector('input[type="search"]') as HTMLInputElement).value === 'stone')
    for (let step = 0; step < 3; step++) await page.goForward()
    await waitForTitles(page, wanted.titles.slice(50, 75))

    // Someone else, not signed in yet, opens the same address.
    const other = await openPage(t, shared, { path: `/app/${address.search}` })
    await signedIn(other)
    await waitForTitles(other, wanted.titles.slice(50, 75))
    assert.equal(new URL(other.url()).search, address.search)
  })

  it('says what a hand-edited address left out, and shows a valid state', async (t) => {
    const page = await openPage(t, shared, { path: '/app/?sort=bogus&year_from=2000&year_to=1990&page=999&size=7&colour=red' })
    await signedIn(page)
    const notice = page.getByRole('status').filter({ hasText: 'Parts of the address were left out' })
    await notice.waitFor()
    const said = (await notice.textContent())!
    for (const part of [
      'sort=“bogus”: the table sorts by title, author or year',
      'year_from=2000 with year_to=1990: no year lies in that range',
      'size=“7”: a page holds 25, 50 or 100 books',
      '“colour”, which is not a setting of this page',
      'page=999: there are 200 pages, so the last is shown',
    ])
      assert.ok(said.includes(part), `${said} does not say ${part}`)
    await waitForTitles(page, (await find(shared, 'limit=1000&after=9950')).titles.slice(0, 50))
    assert.equal(await countLine(page).textContent(), '10,000 books in the catalogue, showing 9,951–10,000, in the order they were added.')
    assert.equal(new URL(page.url()).search, '?page=200', 'the address becomes the one of what is shown')
    await assertAccessibleEverywhere(page, 'a hand-edited address', 'address-left-out')

    // A valid address says nothing of the kind.
    const valid = await openPage(t, shared, { path: '/app/?q=river&page=2' })
    await signedIn(valid)
    await waitForTitles(valid, (await find(shared, 'q=river&limit=100')).titles.slice(50))
    assert.equal(await valid.getByText('Parts of the address were left out', { exact: false }).count(), 0)
  })

  it('shows that every column sorts, which one does and which way, and says the order', async (t) => {
    const page = await openPage(t, shared)
    await signedIn(page)
    await countLine(page).filter({ hasText: 'in the order they were added' }).waitFor()
    const headers = { title: 'Title', author: 'Author', year: 'Year' }
    for (const name of Object.values(headers)) {
      const header = page.getByRole('columnheader', { name, exact: true })
      assert.equal(await header.getAttribute('aria-sort'), 'none', `${name} says it sorts`)
      assert.equal(await header.locator('.sort-indicator').textContent(), '↕')
    }
    const orders = {
      title: ['by title, A to Z', 'by title, Z to A'],
      author: ['by author, A to Z', 'by author, Z to A'],
      year: ['by year, oldest first', 'by year, newest first'],
    }
    for (const [field, name] of Object.entries(headers) as [keyof typeof headers, string][]) {
      for (const [index, direction] of (['ascending', 'descending'] as const).entries()) {
        await page.getByRole('button', { name, exact: true }).click()
        const { titles } = await find(shared, `sort=${index === 0 ? '' : '-'}${field}&limit=50`)
        await waitForTitles(page, titles)
        const header = page.getByRole('columnheader', { name, exact: true })
        assert.equal(await header.getAttribute('aria-sort'), direction)
        assert.equal(await header.locator('.sort-indicator').textContent(), direction === 'ascending' ? '▲' : '▼')
        assert.equal(await page.locator('th[aria-sort="none"]').count(), 2, 'the other columns still say they sort')
        await countLine(page).filter({ hasText: orders[field][index]! }).waitFor()
        assert.equal(new URL(page.url()).searchParams.get('sort'), `${index === 0 ? '' : '-'}${field}`)
      }
    }
    await assertAccessible(page, 'sorted by year, newest first')
  })

  it('files a title under the word after a leading article, and shows it as stored', async (t) => {
    const service = await serviceFor(t)
    await seed(service, [
      { title: 'The Hobbit', author: 'J. R. R. Tolkien', year: 1937 },
      { title: 'Ivanhoe', author: 'Walter Scott', year: 1819 },
      { title: 'Dune', author: 'Frank Herbert', year: 1965 },
      { title: 'An Instance of the Fingerpost', author: 'Iain Pears', year: 1997 },
    ])
    const page = await openPage(t, service, { path: '/app/?sort=title' })
    await signedIn(page)
    await page.getByRole('cell', { name: 'Dune', exact: true }).waitFor()
    assert.deepEqual(await shownTitles(page), ['Dune', 'The Hobbit', 'An Instance of the Fingerpost', 'Ivanhoe'])
  })

  it('clears the results and says what is wrong beside a wrong filter', async (t) => {
    const page = await openPage(t, shared)
    await signedIn(page)
    await countLine(page).filter({ hasText: '10,000 books' }).waitFor()
    await page.getByLabel('From year').fill('2000')
    await page.getByLabel('To year').fill('1990')
    const error = page.locator('#' + (await page.getByLabel('To year').getAttribute('aria-describedby')))
    await error.filter({ hasText: 'The “To year” must not be before the “From year”.' }).waitFor()
    assert.equal(await error.getAttribute('role'), 'alert')
    assert.equal(await page.getByLabel('To year').getAttribute('aria-invalid'), '')
    // No stale rows: nothing of what was found before stays under the wrong filter.
    assert.equal(await page.locator('tbody tr').count(), 0)
    assert.equal(await page.getByRole('table').isVisible(), false)
    assert.equal(await countLine(page).isVisible(), false)
    assert.equal(await pager(page).isVisible(), false)
    await page.getByText('No books are shown until the filters are corrected.').waitFor()
    await assertAccessibleEverywhere(page, 'a wrong year range', 'wrong-filter')

    // On a phone the filters fold behind a button that counts those set; a wrong one unfolds them.
    await page.setViewportSize(PHONE)
    const filters = page.getByRole('button', { name: 'Filters (2)' })
    assert.equal(await filters.getAttribute('aria-expanded'), 'true')
    await filters.click()
    assert.equal(await filters.getAttribute('aria-expanded'), 'false')
    assert.equal(await page.getByLabel('To year').isVisible(), false)
    await filters.click()
    assert.equal(await page.getByLabel('To year').isVisible(), true)
    await page.setViewportSize(DESKTOP)
    assert.equal(await page.getByRole('button', { name: /^Filters/ }).isVisible(), false, 'wide enough, the filters show as they are')

    await page.getByLabel('From year').fill('19x5')
    await page.getByText('The year must be a whole number, such as 1965 or -450.').waitFor()
    await page.getByLabel('From year').fill('1990')
    await page.getByLabel('To year').fill('1991')
    const { titles, total } = await find(shared, 'year_from=1990&year_to=1991&limit=50')
    await waitForTitles(page, titles)
    await countLine(page)
      .filter({ hasText: `${english.format(total)} books match` })
      .waitFor()
    assert.equal(await page.getByLabel('To year').getAttribute('aria-invalid'), null)
  })

  it("writes counts with the separators of the reader's locale", async (t) => {
    const page = await openPage(t, shared, { locale: 'de-DE' })
    await signedIn(page)
    await countLine(page).filter({ hasText: '10.000 books in the catalogue, showing 1–50' }).waitFor()
    await pager(page).getByText('of 200').waitFor()
    await page.getByRole('checkbox', { name: 'Select every book on this page' }).check()
    await page.getByRole('button', { name: 'Select all 10.000 books' }).waitFor()
    await page.getByText('50 books selected').waitFor()
    await pager(page).getByRole('button', { name: 'Last page' }).click()
    await countLine(page).filter({ hasText: 'showing 9.951–10.000' }).waitFor()
    // Years are not counts: they keep their digits as they are.
    assert.equal(await page.locator('tbody td.col-year').first().textContent(), String(catalogueBook(9951).year))
  })

  it('selects rows with checkboxes, Shift and "select all", and exports just them', async (t) => {
    const page = await openPage(t, shared, { acceptDownloads: true })
    await signedIn(page)
    await countLine(page).filter({ hasText: '10,000 books' }).waitFor()
    const box = (n: number) => page.getByRole('checkbox', { name: `Select ${catalogueBook(n).title}`, exact: true })
    const selected = page.locator('.selected-count')

    await box(2).check()
    await selected.filter({ hasText: '1 book selected' }).waitFor()
    await box(6).click({ modifiers: ['Shift'] })
    await selected.filter({ hasText: '5 books selected' }).waitFor()
    for (const n of [2, 3, 4, 5, 6]) assert.equal(await box(n).isChecked(), true, `book ${n}`)
    assert.equal(await box(1).isChecked(), false)
    assert.equal(
      await page
        .getByRole('checkbox', { name: 'Select every book on this page' })
        .evaluate((input: HTMLInputElement) => input.indeterminate),
      true,
    )
    // Shift with Space does the same from the keyboard: here it takes 5 and 6 off again.
    await box(5).focus()
    await page.keyboard.press('Shift+Space')
    await selected.filter({ hasText: '3 books selected' }).waitFor()
    for (const n of [5, 6]) assert.equal(await box(n).isChecked(), false, `book ${n}`)

    // The selection stays across pages and searches.
    await pager(page).getByRole('button', { name: 'Next page' }).click()
    await box(70).check()
    await search(page).fill(`${catalogueBook(4321).title.split(' ').at(-2)} 4321`)
    await waitForTitles(page, [catalogueBook(4321).title])
    await box(4321).check()
    await selected.filter({ hasText: '5 books selected' }).waitFor()
    await assertAccessibleEverywhere(page, 'five books selected', 'selection')

    const download = page.waitForEvent('download')
    await page.getByRole('button', { name: 'Export selected' }).click()
    const file = await download
    assert.equal(file.suggestedFilename(), 'selected-books.csv')
    const exported = await readFile(await file.path(), 'utf8')
    const serviceExport = Buffer.from(
      await (
        await fetch(new URL('/books/export?format=csv', shared.url), { headers: { authorization: await login(shared) } })
      ).arrayBuffer(),
    )
    const serviceLines = serviceExport.toString('utf8').split('\r\n')
    const lineOf = (n: number) => serviceLines.find((line) => line.startsWith(`${n},`))
    assert.equal(exported, `\uFEFFid,title,author,year\r\n${[2, 3, 4, 70, 4321].map((n) => `${lineOf(n)}\r\n`).join('')}`)

    await page.getByRole('button', { name: 'Clear selection' }).click()
    assert.equal(await page.locator('.selection-bar').isVisible(), false)
    assert.notEqual(await page.evaluate(() => document.activeElement?.tagName), 'BODY', 'the focus stays in the catalogue')

    // Every book the search finds, then every book: "select all" reads each page it needs.
    await search(page).fill('')
    await countLine(page).filter({ hasText: '10,000 books in the catalogue' }).waitFor()
    await box(1).check()
    await page.getByRole('button', { name: 'Select all 10,000 books' }).click()
    await selected.filter({ hasText: '10,000 books selected' }).waitFor()
    assert.equal(await page.getByRole('button', { name: /^Select all/ }).isVisible(), false)
    const all = page.waitForEvent('download')
    await page.getByRole('button', { name: 'Export selected' }).click()
    // Compared as bytes: the byte-order mark included, which reading the answer as text would drop.
    assert.ok((await readFile(await (await all).path())).equals(serviceExport), 'every book, as the service exports them')
  })

  it('deletes the selected books after one confirmation', async (t) => {
    const service = await catalogueService(t)
    const page = await openPage(t, service)
    await signedIn(page)
    await countLine(page).filter({ hasText: '10,000 books in the catalogue' }).waitFor()
    const box = (n: number) => page.getByRole('checkbox', { name: `Select ${catalogueBook(n).title}`, exact: true })
    await box(1).check()
    await box(3).click({ modifiers: ['Shift'] })
    await pager(page).getByRole('button', { name: 'Last page' }).click()
    await box(10_000).check()
    await page.getByRole('button', { name: 'Delete selected' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete 4 books?' })
    for (const n of [1, 2, 3, 10_000]) await dialog.getByText(catalogueBook(n).title, { exact: true }).waitFor()
    await assertAccessibleEverywhere(page, 'confirming a deletion of four', 'delete-selected')
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'detached' })
    assert.equal((await find(service, 'limit=1')).total, CATALOGUE_SIZE, 'Escape deletes nothing')

    // The store refuses one of them: the others go, it stays selected, and "Retry" goes on with it.
    const refused = `**/book/2`
    await page.route(refused, (route) =>
      route.request().method() === 'DELETE'
        ? route.fulfill({
            status: 503,
            headers: { 'retry-after': '5' },
            contentType: 'application/json',
            body: '{"status":503,"message":"Service unavailable","data":null}',
          })
        : route.continue(),
    )
    await page.getByRole('button', { name: 'Delete selected' }).click()
    await dialog.getByRole('button', { name: 'Delete 4 books' }).click()
    const stopped = page.getByRole('alert').filter({
      hasText:
        'The catalogue is unavailable right now: its store is not answering. Try again in 5 seconds. 1 book not deleted stays selected.',
    })
    await stopped.waitFor()
    await page.getByRole('status').filter({ hasText: 'Deleted 3 books.' }).waitFor()
    await page.locator('.selected-count').filter({ hasText: '1 book selected' }).waitFor()
    await page.unroute(refused)
    await stopped.getByRole('button', { name: 'Retry' }).click()
    await page
      .getByRole('status')
      .filter({ hasText: `Deleted “${catalogueBook(2).title}”.` })
      .waitFor()
    await countLine(page).filter({ hasText: '9,996 books in the catalogue, showing 9,951–9,996' }).waitFor()
    assert.equal(await page.locator('.selection-bar').isVisible(), false)
    const token = await login(service)
    for (const id of [1, 2, 3, 10_000]) assert.equal((await call(service, 'GET', `/book/${id}`, { token })).status, 404)
    assert.equal((await find(service, 'limit=1')).total, 9996)

    // Every book a search finds, whatever page they are on.
    await search(page).fill('farid 1')
    const { total } = await find(service, 'q=farid+1&limit=1')
    assert.ok(total > 100, `the search finds ${total} books: too few for three pages`)
    await countLine(page)
      .filter({ hasText: `${english.format(total)} books match` })
      .waitFor()
    await page.getByRole('checkbox', { name: 'Select every book on this page' }).check()
    await page.getByRole('button', { name: `Select all ${english.format(total)} matching books` }).click()
    await page
      .locator('.selected-count')
      .filter({ hasText: `${english.format(total)} books selected` })
      .waitFor()
    await page.getByRole('button', { name: 'Delete selected' }).click()
    await page
      .getByRole('dialog')
      .getByText(`and ${english.format(total - 5)} more.`)
      .waitFor()
    await page.getByRole('button', { name: `Delete ${english.format(total)} books` }).click()
    // How far it got, while it runs.
    await page
      .locator('.selected-count')
      .filter({ hasText: new RegExp(`^Deleted \\d+ of ${total} books…$`) })
      .waitFor()
    await page.getByText('No books match this search.').waitFor({ timeout: 60_000 })
    await page
      .getByRole('status')
      .filter({ hasText: `Deleted ${english.format(total)} books.` })
      .waitFor()
    assert.equal((await find(service, 'q=farid+1&limit=1')).total, 0)
  })

  it('answers the keyboard: / searches, n adds, ? lists the shortcuts, Escape closes, arrows move between rows', async (t) => {
    const page = await openPage(t, shared)
    await signedIn(page)
    await countLine(page).filter({ hasText: '10,000 books' }).waitFor()

    await page.keyboard.press('/')
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('type')), 'search')
    assert.equal(await search(page).inputValue(), '', 'the slash is not typed')
    // Keys typed into a field are text, not shortcuts.
    await page.keyboard.type('n?')
    assert.equal(await search(page).inputValue(), 'n?')
    assert.equal(await page.getByRole('dialog').count(), 0)
    await search(page).fill('')
    await countLine(page).filter({ hasText: '10,000 books in the catalogue' }).waitFor()

    await page.getByRole('button', { name: 'Export CSV' }).focus()
    await page.keyboard.press('n')
    const add = page.getByRole('dialog', { name: 'Add a book' })
    await add.waitFor()
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('name')), 'title')
    await page.keyboard.press('Escape')
    await add.waitFor({ state: 'detached' })
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Export CSV', 'the focus returns where it was')

    await page.keyboard.press('?')
    const shortcuts = page.getByRole('dialog', { name: 'Keyboard shortcuts' })
    await shortcuts.waitFor()
    const listed = await shortcuts.locator('dt').allTextContents()
    assert.deepEqual(listed, ['/', 'n', 'u', '↑ ↓', 'Esc', '?'])
    await assertAccessibleEverywhere(page, 'the keyboard shortcuts', 'shortcuts')
    // A shortcut does nothing while a dialog is open.
    await page.keyboard.press('n')
    assert.equal(await add.count(), 0)
    await page.keyboard.press('Escape')
    await shortcuts.waitFor({ state: 'detached' })
    await page.getByRole('button', { name: 'Keyboard shortcuts' }).click()
    await shortcuts.getByRole('button', { name: 'Close' }).click()
    await shortcuts.waitFor({ state: 'detached' })

    // Up and Down move to the same control a row away: the title, or the checkbox.
    const title = (n: number) => page.getByRole('button', { name: catalogueBook(n).title, exact: true })
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent)
    await title(1).focus()
    for (let step = 0; step < 3; step++) await page.keyboard.press('ArrowDown')
    assert.equal(await focused(), catalogueBook(4).title)
    await page.keyboard.press('ArrowUp')
    assert.equal(await focused(), catalogueBook(3).title)
    await page.keyboard.press('Shift+Tab')
    await page.keyboard.press('ArrowDown')
    assert.equal(await focused(), `Select ${catalogueBook(4).title}`)
    const scrolled = await page.evaluate(() => window.scrollY)
    await title(1).focus()
    await page.keyboard.press('ArrowUp')
    assert.equal(await focused(), catalogueBook(1).title, 'the first row is the top')
    assert.ok((await page.evaluate(() => window.scrollY)) <= scrolled)
    // Enter on a title opens its book.
    await page.keyboard.press('Enter')
    await page.getByRole('dialog', { name: 'Edit book' }).getByLabel('Title').waitFor()
  })
})

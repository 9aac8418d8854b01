/**
 * Importing a file from the catalogue page, in Debian's Chromium against a real service process:
 * the check first (a dry run: the books as they will be stored, every problem), the choices to
 * skip invalid rows and duplicates, "Import N books", and the progress of a large file, which
 * can be cancelled while it is sent.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Locator, Page } from 'playwright-core'
import { call, login } from '../../test/support/service.ts'
import {
  assertAccessible,
  catalogueShown,
  assertAccessibleEverywhere,
  books,
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
  type Book,
  type Service,
} from './support/browser-page.ts'
import { catalogueBook } from './support/catalogue.ts'

const csv = (lines: string[]) => Buffer.from(`${lines.join('\n')}\n`)

/** The cells of a table's body, row by row. */
function cells(table: Locator): Promise<string[][]> {
  return table.evaluate((element) =>
    [...element.querySelectorAll('tbody tr')].map((row) => [...row.querySelectorAll('th, td')].map((cell) => cell.textContent ?? '')),
  )
}

async function columnHeaders(table: Locator): Promise<string[]> {
  return table.getByRole('columnheader').allTextContents()
}

/** The name a person hears for the control that has the focus: its label, or its text. */
function focused(page: Page): Promise<string | undefined> {
  return page.evaluate(() => {
    const element = document.activeElement as HTMLInputElement | null
    return (element?.labels?.[0]?.textContent ?? element?.textContent ?? undefined) || undefined
  })
}

async function storedTitles(service: Service): Promise<string[]> {
  const answer = await call(service, 'GET', '/books?limit=1000', { token: await login(service) })
  assert.equal(answer.status, 200)
  return answer.body.data.map((book: Book) => book.title).toSorted()
}

/** What the service's own dry run answers for a file: the page must show all of it. */
async function dryRun(service: Service, body: Buffer): Promise<{ importable: number; errors: { row?: number; message: string }[] }> {
  const answer = await fetch(new URL('/books/import?dry_run=true', service.url), {
    method: 'POST',
    headers: { authorization: await login(service), 'content-type': 'text/csv' },
    body: body.toString(),
  })
  assert.equal(answer.status, 200)
  return ((await answer.json()) as { data: { importable: number; errors: { row?: number; message: string }[] } }).data
}

async function openImport(page: Page): Promise<Locator> {
  await page.getByRole('button', { name: 'Import books' }).click()
  const dialog = page.getByRole('dialog', { name: 'Import books' })
  await dialog.getByLabel('File to import').waitFor()
  return dialog
}

function importButton(dialog: Locator): Locator {
  return dialog.getByRole('button', { name: /^Import / })
}

describe('importing a file from the catalogue page', { skip, timeout: 180_000, concurrency: 2 }, () => {
  before(startBrowser)
  after(stopBrowser)

  it('checks a file chosen with the keyboard, shows its books as they will be stored, and imports them on request', async (t) => {
    const { service, page } = await catalogueShown(t, [{ title: 'Emma', author: 'Jane Austen', year: 1815 }], 'Emma')
    const asked: URL[] = []
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/books/import') asked.push(new URL(request.url()))
    })

    // Playwright starts catching the file chooser some time after it is asked to, and a chooser
    // opened before then is missed: it is asked well before.
    const chooser = page.waitForEvent('filechooser')
    // "Import books" opens a dialog whose file input has the focus: Space opens the file chooser.
    const dialog = await openImport(page)
    await dialog.getByText('It is checked first: nothing is stored until you choose to import it.', { exact: false }).waitFor()
    await assertAccessible(page, 'import dialog')
    assert.equal(await page.evaluate(() => (document.activeElement as HTMLInputElement).type), 'file')
    await page.keyboard.press('Space')
    const file = csv(['author,title,year', 'Frank Herbert,Dune,1965', '"Márquez, Gabriel García",Cien años de soledad,1967'])
    await (await chooser).setFiles({ name: 'books.csv', mimeType: 'text/csv', buffer: file })

    await dialog.getByRole('status').filter({ hasText: '“books.csv” holds 2 books that can be imported. Nothing is stored yet.' }).waitFor()
    const preview = dialog.getByRole('table', { name: 'The 2 books as they will be stored' })
    assert.deepEqual(await columnHeaders(preview), ['Title', 'Author', 'Year'])
    // As they will be stored: in the order title, author, year, whatever the file's.
    assert.deepEqual(await cells(preview), [
      ['Dune', 'Frank Herbert', '1965'],
      ['Cien años de soledad', 'Márquez, Gabriel García', '1967'],
    ])
    assert.equal(await dialog.getByRole('table').count(), 1, 'no problem, so no table of problems')
    assert.deepEqual(await storedTitles(service), ['Emma'], 'the check stores nothing')
    assert.equal(asked.length, 1)
    assert.equal(asked[0]!.search, '?dry_run=true')
    await assertAccessibleEverywhere(page, 'import checked', 'import-checked')

    // The keyboard reaches the choices, then "Import 2 books".
    assert.equal(await importButton(dialog).textContent(), 'Import 2 books')
    await page.keyboard.press('Tab')
    assert.equal(await focused(page), 'Skip invalid rows')
    await page.keyboard.press('Tab')
    assert.equal(await focused(page), 'Skip duplicates')
    await page.keyboard.press('Tab')
    assert.equal(await focused(page), 'Import 2 books')
    await page.keyboard.press('Enter')

    await page.getByRole('status').filter({ hasText: 'Imported 2 books from “books.csv”.' }).waitFor()
    assert.equal(await dialog.count(), 0, 'the dialog closes once the books are in')
    assert.equal(await focused(page), 'Import books', 'the focus returns to the button')
    await waitForTitles(page, ['Emma', 'Dune', 'Cien años de soledad'])
    assert.deepEqual(await storedTitles(service), ['Cien años de soledad', 'Dune', 'Emma'])
    assert.equal(asked.length, 2)
    assert.equal(asked[1]!.search, '', 'nothing skipped was asked for')
    await assertAccessible(page, 'imported')
  })

  it('lists every invalid row the check finds, and imports the other rows only once they are skipped', async (t) => {
    const { service, page } = await catalogueShown(t, [{ title: 'Emma', author: 'Jane Austen', year: 1815 }], 'Emma')
    const file = csv([
      'title,author,year',
      'Carrie,Stephen King,1974',
      ',Nobody,2000',
      'Dune,Frank Herbert,19999',
      'Ubik,,1969',
      'Solaris,Stanisław Lem,1961',
    ])
    const expected = await dryRun(service, file)
    assert.equal(expected.errors.length, 3)

    const dialog = await openImport(page)
    await dialog.getByLabel('File to import').setInputFiles({ name: 'mixed.csv', mimeType: 'text/csv', buffer: file })
    await dialog
      .getByRole('status')
      .filter({ hasText: '“mixed.csv” holds 2 books that can be imported and 3 invalid rows. Nothing is stored yet.' })
      .waitFor()
    const problems = dialog.getByRole('table', { name: '3 invalid rows' })
    assert.deepEqual(await columnHeaders(problems), ['Row', 'Problem'])
    assert.deepEqual(
      await cells(problems),
      expected.errors.map(({ row, message }) => [String(row), message]),
    )
    assert.deepEqual(
      (await cells(problems)).map(([row]) => row),
      ['2', '3', '4'],
    )
    assert.deepEqual(await cells(dialog.getByRole('table', { name: 'The 2 books as they will be stored' })), [
      ['Carrie', 'Stephen King', '1974'],
      ['Solaris', 'Stanisław Lem', '1961'],
    ])

    // All or nothing unless told otherwise: nothing to import until invalid rows are skipped.
    assert.equal(await importButton(dialog).isDisabled(), true)
    await dialog.getByText('Nothing is stored while any row is invalid', { exact: false }).waitFor()
    await assertAccessibleEverywhere(page, 'import with invalid rows', 'import-invalid')
    await dialog.getByLabel('Skip invalid rows').focus()
    await page.keyboard.press('Space')
    assert.equal(await importButton(dialog).textContent(), 'Import 2 books')
    assert.equal(await importButton(dialog).isDisabled(), false)
    assert.equal(await dialog.getByText('Nothing is stored while any row is invalid', { exact: false }).isVisible(), false)
    await dialog.getByLabel('Skip duplicates').check()
    assert.equal(await importButton(dialog).textContent(), 'Import 2 books', 'the check found no duplicate')

    const request = page.waitForRequest((asked) => asked.url().includes('/books/import') && !asked.url().includes('dry_run'))
    await importButton(dialog).click()
    const sent = new URL((await request).url())
    assert.equal(sent.searchParams.get('invalid'), 'skip')
    assert.equal(sent.searchParams.get('duplicates'), 'skip')
    await page.getByRole('status').filter({ hasText: 'Imported 2 books from “mixed.csv”; skipped 3 invalid rows.' }).waitFor()
    await waitForTitles(page, ['Emma', 'Carrie', 'Solaris'])
    assert.deepEqual(await storedTitles(service), ['Carrie', 'Emma', 'Solaris'])
  })

  it('lists all of the hundred problems an answer gives, and says there may be more', async (t) => {
    const service = await serviceFor(t)
    const page = await openPage(t, service)
    await signedIn(page)
    await page.getByText('The catalogue is empty.', { exact: false }).waitFor()
    // 145 rows with no year among 150: the answer lists the first 100.
    const file = csv(['title,author,year', ...Array.from({ length: 150 }, (_, n) => `Book ${n + 1},A,${(n + 1) % 30 === 0 ? 1900 : ''}`)])
    const expected = await dryRun(service, file)
    assert.equal(expected.errors.length, 100)

    const dialog = await openImport(page)
    await dialog.getByLabel('File to import').setInputFiles({ name: 'many.csv', mimeType: 'text/csv', buffer: file })
    const problems = dialog.getByRole('table', { name: '100 or more invalid rows, the first 100 listed' })
    await problems.waitFor()
    assert.deepEqual(
      await cells(problems),
      expected.errors.map(({ row, message }) => [String(row), message]),
    )
    await dialog
      .getByRole('status')
      .filter({ hasText: `“many.csv” holds ${expected.importable} books that can be imported and 100 or more invalid rows.` })
      .waitFor()
  })

  it('shows what is wrong with a file that cannot be imported at all, and offers no import', async (t) => {
    const { service, page } = await catalogueShown(t, [{ title: 'Emma', author: 'Jane Austen', year: 1815 }], 'Emma')
    const dialog = await openImport(page)

    // A file the service cannot read (400): no year column. Dropped on the dialog.
    const drop = async (name: string, text: string) => {
      const transfer = await page.evaluateHandle(
        ([fileName, content]) => {
          const data = new DataTransfer()
          data.items.add(new File([content!], fileName!, { type: 'text/csv' }))
          return data
        },
        [name, text],
      )
      await dialog.locator('.drop-zone').dispatchEvent('drop', { dataTransfer: transfer })
    }
    await drop('no-year.csv', 'title,author\nDune,Frank Herbert\n')
    const refused = dialog.getByRole('alert').filter({ hasText: 'Nothing can be imported from “no-year.csv”:' })
    await refused.waitFor()
    const items = await refused.getByRole('listitem').allTextContents()
    assert.equal(items.length, 1, items.join('\n'))
    assert.match(items[0]!, /year/i)
    assert.equal(await importButton(dialog).count(), 0)
    assert.equal(await dialog.getByRole('table').count(), 0)
    await assertAccessibleEverywhere(page, 'import refused', 'import-refused')

    // A file read whole whose every row is invalid: its problems, and still nothing to import.
    await drop('wrong.csv', 'title,author,year\n,Nobody,2000\nEmma,Jane Austen,19999\n')
    const problems = dialog.getByRole('table', { name: '2 invalid rows' })
    await problems.waitFor()
    assert.deepEqual(
      (await cells(problems)).map(([row]) => row),
      ['1', '2'],
    )
    await dialog.getByText('No row of this file passes the rules of a book, so nothing can be imported.').waitFor()
    assert.equal(await importButton(dialog).count(), 0)
    assert.equal(await dialog.getByLabel('Skip invalid rows').count(), 0)
    await assertAccessible(page, 'nothing importable')

    // Too large for the service: it says so where the file was chosen.
    await page.route('**/books/import?*', (route) =>
      route.fulfill({ status: 413, contentType: 'application/json', body: '{"status":413,"message":"Payload too large","data":null}' }),
    )
    await drop('huge.csv', 'title,author,year\nDune,Frank Herbert,1965\n')
    await dialog
      .getByRole('alert')
      .filter({ hasText: 'The file is too large: import at most 100,000 books and 32 MiB at a time.' })
      .waitFor()
    assert.equal(await importButton(dialog).count(), 0)
    await page.unroute('**/books/import?*')
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'detached' })
    assert.deepEqual(await storedTitles(service), ['Emma'], 'nothing of these files is stored')
  })

  it('shows the duplicates the check finds, and skips them when asked', async (t) => {
    const service = await serviceFor(t)
    const [emma] = await seed(service, [{ title: 'Emma', author: 'Jane Austen', year: 1815 }])
    const page = await openPage(t, service)
    await signedIn(page)
    await page.getByRole('cell', { name: 'Emma', exact: true }).waitFor()
    const imports: URL[] = []
    page.on('request', (request) => {
      const url = new URL(request.url())
      if (url.pathname === '/books/import' && url.searchParams.get('dry_run') !== 'true') imports.push(url)
    })
    // Row 2 repeats the stored Emma (case aside), row 4 repeats row 1.
    const file = csv([
      'title,author,year',
      'Dune,Frank Herbert,1965',
      'emma,JANE AUSTEN,1815',
      'Carrie,Stephen King,1974',
      'Dune,Frank Herbert,1965',
    ])

    const dialog = await openImport(page)
    await dialog.getByLabel('File to import').setInputFiles({ name: 'repeats.csv', mimeType: 'text/csv', buffer: file })
    await dialog
      .getByRole('status')
      .filter({ hasText: '“repeats.csv” holds 4 books that can be imported, 2 of them duplicates. Nothing is stored yet.' })
      .waitFor()
    const repeats = dialog.getByRole('table', { name: '2 duplicates' })
    assert.deepEqual(await columnHeaders(repeats), ['Row', 'Repeats'])
    assert.deepEqual(await cells(repeats), [
      ['2', `book ${emma!.id} of the catalogue`],
      ['4', 'an earlier row of the file'],
    ])
    await assertAccessibleEverywhere(page, 'import with duplicates', 'import-duplicates')

    // The count follows the choice, both ways.
    assert.equal(await importButton(dialog).textContent(), 'Import 4 books')
    await dialog.getByLabel('Skip duplicates').check()
    assert.equal(await importButton(dialog).textContent(), 'Import 2 books')
    await dialog.getByLabel('Skip duplicates').uncheck()
    assert.equal(await importButton(dialog).textContent(), 'Import 4 books')
    await dialog.getByLabel('Skip duplicates').check()
    await importButton(dialog).click()

    await page.getByRole('status').filter({ hasText: 'Imported 2 books from “repeats.csv”; skipped 2 duplicates.' }).waitFor()
    assert.equal(imports.length, 1)
    assert.equal(imports[0]!.searchParams.get('duplicates'), 'skip')
    assert.equal(imports[0]!.searchParams.get('invalid'), null)
    assert.deepEqual(await storedTitles(service), ['Carrie', 'Dune', 'Emma'])
  })

  it('shows the progress of a large file as it is sent, cancels it, and imports it', async (t) => {
    const service = await serviceFor(t)
    const page = await openPage(t, service)
    await signedIn(page)
    await page.getByText('The catalogue is empty.', { exact: false }).waitFor()
    const count = 40_000
    const file = csv(['title,author,year', ...books(count, catalogueBook).map(({ title, author, year }) => `${title},${author},${year}`)])
    // The loopback would send it in a blink: at this speed each upload takes about 2.5 s.
    const cdp = await page.context().newCDPSession(page)
    await cdp.send('Network.enable')
    const uploadIn = (seconds: number) =>
      cdp.send('Network.emulateNetworkConditions', {
        offline: false,
        latency: 0,
        downloadThroughput: -1,
        uploadThroughput: Math.round(file.length / seconds),
      })
    // Each change of a bar, when it happened: what the person sees move.
    await page.evaluate(() => {
      const seen: { at: number; value: number | null; max: number }[] = []
      Object.assign(window, { progressSeen: seen })
      new MutationObserver((changes) => {
        for (const { target } of changes)
          if (target instanceof HTMLProgressElement)
            seen.push({ at: performance.now(), value: target.hasAttribute('value') ? target.value : null, max: target.max })
      }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ['value', 'max'] })
    })
    const progressSeen = () =>
      page.evaluate(() =>
        (window as unknown as { progressSeen: { at: number; value: number | null; max: number }[] }).progressSeen.splice(0),
      )
    const partlySent = (bar: Locator) =>
      bar.evaluate(
        (element: HTMLProgressElement) =>
          new Promise<void>((resolve) => {
            const poll = () => (element.hasAttribute('value') && element.value > element.max * 0.2 ? resolve() : setTimeout(poll, 20))
            poll()
          }),
      )
    /**
     * The bar moved many times while the file was sent, from nothing to all of it. How long it
     * stands still at most is a figure of docs/page.md, measured on a quiet machine: a test that
     * timed it would fail whenever the machine is busy.
     */
    const assertSteady = (seen: { at: number; value: number | null; max: number }[]) => {
      const sending = seen.filter(({ value }, n) => value !== null && value !== seen[n - 1]?.value)
      assert.ok(sending.length >= 5, `the bar moved ${sending.length} times`)
      assert.ok(
        sending.every((change, n) => n === 0 || change.value! >= sending[n - 1]!.value!),
        'the bar never goes back',
      )
      assert.ok(sending.at(-1)!.value! > file.length * 0.8, 'the bar reached the end of the file')
      assert.equal(seen.at(-1)!.value, null, 'once sent, the bar waits for the service')
    }

    // Cancelled while the file is checked: nothing is checked. The page is looked at while the
    // file is sent, which on a busy machine takes longer than 2.5 s of sending would last.
    await uploadIn(15)
    const dialog = await openImport(page)
    const input = dialog.getByLabel('File to import')
    await input.setInputFiles({ name: 'large.csv', mimeType: 'text/csv', buffer: file })
    const checking = dialog.getByRole('progressbar', { name: 'Sending “large.csv” to be checked' })
    await partlySent(checking)
    await assertAccessible(page, 'a file being sent')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await dialog.getByRole('status').filter({ hasText: 'Cancelled: “large.csv” was not checked.' }).waitFor()
    assert.equal(await checking.isVisible(), false)
    assert.equal(await focused(page), 'File to import')
    await uploadIn(2.5)

    // Closing the dialog while the file is sent stops the upload too.
    await input.setInputFiles({ name: 'large.csv', mimeType: 'text/csv', buffer: file })
    await partlySent(checking)
    const stopped = page.waitForEvent('requestfailed')
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'detached' })
    assert.match((await stopped).url(), /\/books\/import\?dry_run=true$/)

    await openImport(page)
    await progressSeen()
    await input.setInputFiles({ name: 'large.csv', mimeType: 'text/csv', buffer: file })
    await dialog.getByRole('status').filter({ hasText: '“large.csv” holds 40,000 books that can be imported.' }).waitFor()
    assertSteady(await progressSeen())

    // Cancelled while the file is sent to be imported: nothing is stored.
    await importButton(dialog).click()
    const importing = dialog.getByRole('progressbar', { name: 'Sending “large.csv” to be imported' })
    await partlySent(importing)
    assert.equal(await focused(page), 'Cancel', 'the one thing to do while the file is sent')
    const aborted = page.waitForEvent('requestfailed')
    await page.keyboard.press('Enter')
    await dialog.getByRole('status').filter({ hasText: 'Cancelled: nothing was imported from “large.csv”.' }).waitFor()
    assert.match((await aborted).url(), /\/books\/import$/)
    assert.equal(await focused(page), 'Import 40,000 books')
    assert.deepEqual(await storedTitles(service), [])

    await progressSeen()
    await page.keyboard.press('Enter')
    await page.getByRole('status').filter({ hasText: 'Imported 40,000 books from “large.csv”.' }).waitFor()
    assertSteady(await progressSeen())
    await countLine(page).filter({ hasText: '40,000 books in the catalogue' }).waitFor()
    assert.deepEqual((await shownTitles(page)).slice(0, 2), [catalogueBook(1).title, catalogueBook(2).title])
  })
})

/**
 * The page follows the changes others make, against a real service process in Debian's
 * Chromium: books another person adds, edits or deletes show as they happen, without a reload and
 * without touching what the person is typing, and a person editing a book that changes meanwhile
 * is told at once.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { TEST_USERNAME } from '../../test/helpers.ts'
import { call, login } from '../../test/support/service.ts'
import {
  assertAccessible,
  catalogueShown,
  countLine,
  screenshot,
  skip,
  startBrowser,
  stopBrowser,
  type Book,
  type Service,
} from './support/browser-page.ts'
import { pager, waitForPage } from './support/catalogue.ts'

const dune = { title: 'Dune', author: 'Frank Herbert', year: 1965 }
const emma = { title: 'Emma', author: 'Jane Austen', year: 1815 }
const solaris = { title: 'Solaris', author: 'Stanisław Lem', year: 1961 }

/** A row of the table by its book, found even while a dialog makes the rest of the page inert. */
const row = (page: Page, id: number) => page.locator(`tbody tr[data-id="${id}"]`)

/** Another person, signed in on their own, changing books through the interface. */
async function someoneElse(service: Service) {
  const token = await login(service)
  return async (method: string, path: string, body?: object) => {
    const answer = await call(service, method, path, { token, ...(body && { body }) })
    assert.ok(answer.status < 300, `${method} ${path}: ${answer.status}`)
    return answer.body.data as Book
  }
}

describe('the catalogue page follows the changes others make', { skip, timeout: 180_000 }, () => {
  before(startBrowser)
  after(stopBrowser)

  it('shows a book another person adds, edits or deletes as it happens, keeping what the person is typing', async (t) => {
    const { service, page } = await catalogueShown(t, [dune, emma], 'Dune')
    const other = await someoneElse(service)
    const [first, second] = (await call(service, 'GET', '/books', { token: await login(service) })).body.data as Book[]

    // The person is typing a book of their own, and has not saved it.
    await page.getByRole('button', { name: 'Add book' }).click()
    const form = page.getByRole('dialog', { name: 'Add a book' })
    await form.getByLabel('Title').pressSequentially('The Left Hand of Dark')

    const added = await other('POST', '/book', solaris)
    await row(page, added.id).filter({ hasText: 'Solaris' }).waitFor()
    await other('PUT', `/book/${first!.id}`, { title: 'Dune Messiah', year: 1969 })
    await row(page, first!.id).filter({ hasText: 'Dune Messiah' }).filter({ hasText: '1969' }).waitFor()
    await other('DELETE', `/book/${second!.id}`)
    await row(page, second!.id).waitFor({ state: 'detached' })

    const title = form.getByLabel('Title')
    assert.equal(await title.inputValue(), 'The Left Hand of Dark', 'what was typed stays')
    assert.equal(await title.evaluate((input) => input === document.activeElement), true, 'and keeps the focus')
    await title.pressSequentially('ness')
    await form.getByLabel('Author').fill('Ursula K. Le Guin')
    await form.getByLabel('Year', { exact: true }).fill('1969')
    await form.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('status').filter({ hasText: 'Added “The Left Hand of Darkness”.' }).waitFor()
    await countLine(page).filter({ hasText: '3 books in the catalogue' }).waitFor()
    assert.deepEqual(
      await page.locator('tbody button.title').allTextContents(),
      ['The Left Hand of Darkness', 'Dune Messiah', 'Solaris'],
      'the book the person added stays first, where they look',
    )
  })

  it('keeps the search the person is typing, and shows what others add only when it matches', async (t) => {
    const { service, page } = await catalogueShown(t, [dune, emma], 'Dune')
    const other = await someoneElse(service)
    const search = page.getByLabel('Search')
    await search.pressSequentially('dun')
    await page.getByRole('cell', { name: 'Emma', exact: true }).waitFor({ state: 'detached' })

    const unmatched = await other('POST', '/book', solaris)
    const matched = await other('POST', '/book', { ...dune, title: 'Children of Dune', year: 1976 })
    await row(page, matched.id).waitFor()
    assert.equal(await row(page, unmatched.id).count(), 0, 'a book that does not match the search is not shown')
    assert.equal(await search.inputValue(), 'dun')
    assert.equal(await search.evaluate((input) => input === document.activeElement), true)
    await countLine(page).filter({ hasText: '2 books match' }).waitFor()
  })

  it('keeps the focus and the selection on a page of 100 rows that a change redraws', async (t) => {
    const books = Array.from({ length: 120 }, (_, n) => ({ title: `Volume ${n + 1}`, author: 'Ann Author', year: 2000 }))
    const { service, page } = await catalogueShown(t, books, 'Volume 1')
    const other = await someoneElse(service)
    const ids = ((await call(service, 'GET', '/books?limit=100', { token: await login(service) })).body.data as Book[]).map(({ id }) => id)
    await pager(page).getByLabel('Books per page').selectOption('100')
    await waitForPage(page, 1)
    await page.getByRole('checkbox', { name: 'Select every book on this page' }).check()
    await row(page, ids[79]!).getByRole('checkbox').focus()

    // The table is drawn anew, a part at a time, with the person's focus far down it. Down,
    // pressed in the very task that drew it, finds the next row, which was still to come.
    const focusAfterDown = page.evaluate(
      (id) =>
        new Promise<string | null>((resolve) => {
          new MutationObserver((_, observer) => {
            if (!document.querySelector(`tr[data-id="${id}"]`)?.textContent?.includes('Volume ten')) return
            observer.disconnect()
            const focused = document.activeElement!.getAttribute('aria-label')
            document.activeElement!.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowDown', bubbles: true }))
            resolve(`${focused}, then ${document.activeElement!.getAttribute('aria-label')}`)
          }).observe(document.querySelector('tbody')!, { childList: true, subtree: true, characterData: true })
        }),
      ids[9]!,
    )
    await other('PUT', `/book/${ids[9]!}`, { title: 'Volume ten' })
    assert.equal(await focusAfterDown, 'Select Volume 80, then Select Volume 81')
    await waitForPage(page, 1)
    assert.equal(await page.locator('tbody tr').count(), 100)
    assert.equal(await page.locator('tbody input:checked').count(), 100, 'every row drawn later is still selected')

    // Deleting a book far down the page puts the focus on the row that takes its place, drawn at once for it.
    await page.getByRole('button', { name: 'Volume 70', exact: true }).click()
    await page.getByRole('dialog', { name: 'Edit book' }).getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByRole('dialog', { name: 'Delete this book?' }).getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Deleted “Volume 70”.' }).waitFor()
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Volume 71')
  })

  it('tells a person editing a book at once that someone else changed or deleted it, keeping their changes', async (t) => {
    const { service, page } = await catalogueShown(t, [dune, emma], 'Dune')
    const other = await someoneElse(service)
    const [first, second] = (await call(service, 'GET', '/books', { token: await login(service) })).body.data as Book[]

    await page.getByRole('button', { name: 'Dune', exact: true }).click()
    let form = page.getByRole('dialog', { name: 'Edit book' })
    await form.getByLabel('Title').fill('Dune, revised')
    await other('PUT', `/book/${first!.id}`, { author: 'F. Herbert' })
    await form
      .getByRole('alert')
      .filter({ hasText: `${TEST_USERNAME} changed this book just now.` })
      .waitFor()
    // What each side changed: theirs saved meanwhile, the person's still in the form, on top of it.
    const changed = form.getByRole('table', { name: 'What changed since you opened “Dune”' })
    assert.deepEqual(await changed.getByRole('row').allInnerTexts(), [
      'Field\tSaved meanwhile\tYours',
      'Title\tno change\tDune, revised',
      'Author\tF. Herbert\tno change',
    ])
    assert.equal(await form.getByLabel('Title').inputValue(), 'Dune, revised', 'the person’s changes stay in the form')
    assert.equal(await form.getByLabel('Author').inputValue(), 'F. Herbert')
    await assertAccessible(page, 'told of a change while editing')
    await screenshot(page, 'changed-while-editing-desktop')

    // Saving then sends the person's field alone: the other change survives.
    await form.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Saved “Dune, revised”.' }).waitFor()
    assert.deepEqual((await call(service, 'GET', `/book/${first!.id}`, { token: await login(service) })).body.data, {
      id: first!.id,
      ...dune,
      title: 'Dune, revised',
      author: 'F. Herbert',
    })

    await page.getByRole('button', { name: 'Emma', exact: true }).click()
    form = page.getByRole('dialog', { name: 'Edit book' })
    await form.getByLabel('Year', { exact: true }).fill('1816')
    await other('DELETE', `/book/${second!.id}`)
    await form.getByRole('alert').filter({ hasText: 'This book was deleted by someone else meanwhile, so it cannot be saved.' }).waitFor()
    assert.equal(await form.getByRole('button', { name: 'Save' }).isDisabled(), true)
    assert.equal(await form.getByLabel('Year', { exact: true }).inputValue(), '1816')
  })
})

/**
 * What the page's browser tests share: Debian's Chromium, a page in a context of its own that
 * fails the test on any console error or request to another host, sign-in, axe-core, and
 * screenshots at desktop and phone width.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdir, readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { TestContext } from 'node:test'
import type { Browser, BrowserContextOptions, Page } from 'playwright-core'
import { buildTestApp, listenOnLoopback, openSqliteFile, TEST_PASSWORD, TEST_USERNAME } from '../../../test/helpers.ts'
import { chromiumSkip, launchChromium } from '../../../test/support/browser.ts'
import { call, login } from '../../../test/support/service.ts'

const SCREENSHOTS = fileURLToPath(new URL('../screenshots/', import.meta.url))
const BUILT = fileURLToPath(new URL('../../dist/index.html', import.meta.url))
const AXE_SOURCE = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
export const DESKTOP = { width: 1280, height: 860 }
export const PHONE = { width: 375, height: 740 }

/** Why the browser tests cannot run here, or false when they can. */
export const skip = chromiumSkip || (existsSync(BUILT) ? false : `SKIPPED: the page is not built (run "npm run build:web")`)

export interface Book {
  id: number
  title: string
  author: string
  year: number
}

let browser: Browser | undefined
let closeBrowser: (() => Promise<void>) | undefined

export async function startBrowser(): Promise<void> {
  ;({ browser, close: closeBrowser } = await launchChromium())
}

export async function stopBrowser(): Promise<void> {
  await closeBrowser?.()
}

/** Where a service the page is tested against answers. */
export interface Service {
  url: string
}

/**
 * A service of the test's own, with a fresh SQLite file, closed when the test ends. It runs in
 * the test's process: the page reaches it only over HTTP, as any page would, and a process of
 * its own for each test would cost the suite half a second each to start.
 */
export async function serviceFor(t: TestContext): Promise<Service> {
  const app = await buildTestApp({}, { store: await openSqliteFile() })
  t.after(() => app.close())
  return { url: `http://127.0.0.1:${await listenOnLoopback(app)}` }
}

export async function seed(service: Service, books: Omit<Book, 'id'>[]): Promise<Book[]> {
  const token = await login(service)
  const created: Book[] = []
  for (const book of books) {
    const answer = await call(service, 'POST', '/book', { token, body: book })
    assert.equal(answer.status, 201)
    created.push(answer.body.data)
  }
  return created
}

/** Many books in one request: a generated CSV file for the import. */
export async function importBooks(service: Service, books: Omit<Book, 'id'>[]): Promise<void> {
  const csv = ['title,author,year', ...books.map(({ title, author, year }) => `${title},${author},${year}`)].join('\n')
  const answer = await fetch(new URL('/books/import', service.url), {
    method: 'POST',
    headers: { authorization: await login(service), 'content-type': 'text/csv' },
    body: csv,
  })
  assert.equal(answer.status, 201, await answer.text())
}

export function books(count: number, make: (n: number) => Omit<Book, 'id'>): Omit<Book, 'id'>[] {
  return Array.from({ length: count }, (_, n) => make(n + 1))
}

/**
 * A page in a context of its own (fresh sessionStorage) that may ask nothing of any other
 * host; any console error, CSP violation or script error fails the test when it ends.
 */
export async function openPage(t: TestContext, service: Service, options: BrowserContextOptions & { path?: string } = {}): Promise<Page> {
  const { path = '/', ...contextOptions } = options
  assert.ok(browser, 'startBrowser() first')
  const context = await browser.newContext({ viewport: DESKTOP, ...contextOptions })
  const page = await context.newPage()
  const problems: string[] = []
  const elsewhere: string[] = []
  page.on('console', (message) => {
    // A request the test made fail on purpose is reported by the browser, not by the page.
    if (message.type() === 'error' && !/Failed to load resource|ERR_INTERNET_DISCONNECTED/.test(message.text()))
      problems.push(message.text())
  })
  page.on('pageerror', (err) => problems.push(err.message))
  // The API's errors are part of the flows; anything else that fails (an asset, an icon) is not.
  page.on('response', (response) => {
    const { pathname } = new URL(response.url())
    if (response.status() >= 400 && !/^\/(token|books?|users?|keys?)(\/|$)/.test(pathname))
      problems.push(`${response.status()} for ${pathname}`)
  })
  page.on('dialog', (dialog) => problems.push(`a native ${dialog.type()} dialog opened: ${dialog.message()}`))
  await context.route('**/*', (route) => {
    const url = route.request().url()
    if (url.startsWith(`${service.url}/`)) return route.continue()
    elsewhere.push(url)
    return route.abort()
  })
  t.after(async () => {
    await context.close()
    assert.deepEqual(elsewhere, [], 'the page asked another host')
    assert.deepEqual(problems, [], 'the page reported errors')
  })
  await page.goto(new URL(path, service.url).toString())
  return page
}

export async function signIn(page: Page, password = TEST_PASSWORD, username = TEST_USERNAME): Promise<void> {
  await page.getByLabel('Username').fill(username)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
}

/** Signs in, as the configured admin unless a stored user's name and password are given. */
export async function signedIn(page: Page, user?: { username: string; password: string }): Promise<void> {
  await signIn(page, user?.password, user?.username)
  await page.getByRole('button', { name: 'Sign out' }).waitFor()
}

/** A user stored in the service, added by the configured admin: its name and password, to sign in with. */
export async function addUser(
  service: Service,
  username: string,
  role: 'reader' | 'editor' | 'admin',
): Promise<{ username: string; password: string }> {
  const password = 'amber lanterns over a quiet harbour'
  const answer = await call(service, 'POST', '/users', { token: await login(service), body: { username, password, role } })
  assert.equal(answer.status, 201)
  return { username, password }
}

/** A service holding `books`, and its page signed in and showing them, `first` among them. */
export async function catalogueShown(t: TestContext, books: Omit<Book, 'id'>[], first: string): Promise<{ service: Service; page: Page }> {
  const service = await serviceFor(t)
  await seed(service, books)
  const page = await openPage(t, service)
  await signedIn(page)
  await page.getByRole('cell', { name: first, exact: true }).waitFor()
  return { service, page }
}

/** No serious or critical accessibility violation in the page as it is now. */
export async function assertAccessible(page: Page, state: string): Promise<void> {
  // Setting axe-core up takes half a second: once per page load is enough.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE)
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(options: {
            resultTypes: string[]
          }): Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: unknown }[] }[] }>
        }
      }
    ).axe
    // Every rule still runs; only the details of passes and incomplete checks, unread here, are skipped.
    const result = await axe.run({ resultTypes: ['violations'] })
    return result.violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map(
        (violation) =>
          `${violation.id} (${violation.impact}): ${violation.help} at ${JSON.stringify(violation.nodes.map((node) => node.target))}`,
      )
  })
  assert.deepEqual(violations, [], `axe-core found violations in the state "${state}"`)
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) })
}

export async function assertNoSidewaysScroll(page: Page): Promise<void> {
  const { scrollWidth, clientWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
  }))
  assert.ok(scrollWidth <= clientWidth, `the page scrolls sideways: ${scrollWidth} px wide in ${clientWidth} px`)
}

/**
 * axe-core, no sideways scrolling and a screenshot at 1280 and at 375 px, in the light and the
 * dark colour scheme; the page is left at 1280 px, light.
 */
export async function assertAccessibleEverywhere(page: Page, state: string, name: string): Promise<void> {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme })
    for (const [width, viewport] of [
      ['desktop', DESKTOP],
      ['phone', PHONE],
    ] as const) {
      await page.setViewportSize(viewport)
      await assertNoSidewaysScroll(page)
      await assertAccessible(page, `${state}, ${viewport.width} px, ${colorScheme}`)
      await screenshot(page, `${name}-${width}-${colorScheme}`)
    }
  }
  await page.emulateMedia({ colorScheme: 'light' })
  await page.setViewportSize(DESKTOP)
}

/** The titles in the table, top to bottom. */
export async function shownTitles(page: Page): Promise<string[]> {
  return page.locator('tbody td.col-title').allTextContents()
}

/** Waits until the table shows exactly `expected`, top to bottom. */
export async function waitForTitles(page: Page, expected: string[]): Promise<void> {
  await page.waitForFunction(
    (titles) =>
      JSON.stringify([...document.querySelectorAll('tbody td.col-title')].map((cell) => cell.textContent)) === JSON.stringify(titles),
    expected,
  )
}

/** The line above the table: how many books, which of them, in what order. */
export function countLine(page: Page) {
  return page.locator('p.count')
}

/**
 * The generated catalogue of 10,000 books that the large-catalogue tests and figures share, and
 * how they ask the service and the page about it.
 */
import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import type { Page } from 'playwright-core'
import { call, login, serviceEnv, startService, type ListeningService } from '../../../test/support/service.ts'
import { books, importBooks, serviceFor, type Book, type Service } from './browser-page.ts'

export const CATALOGUE_SIZE = 10_000
const WORDS = ['river', 'stone', 'night', 'garden', 'silver', 'winter', 'shadow', 'empire', 'glass', 'ocean']
const FIRST_NAMES = ['Anna', 'Boris', 'Clara', 'David', 'Elena', 'Farid', 'Greta', 'Hugo', 'Ines', 'Jonas']
const LAST_NAMES = ['Adams', 'Berg', 'Castro', 'Dubois', 'Eriksen', 'Fischer', 'García', 'Horvat', 'Ivanova', 'Jensen']

/** Book n of the generated catalogue: every title ends in its number, so a search for it finds one book. */
export function catalogueBook(n: number): Omit<Book, 'id'> {
  const word = (k: number) => WORDS[k % WORDS.length]!
  return {
    title: `${['The ', 'A ', '', ''][n % 4]}${word(n)} ${word(Math.floor(n / 10))} ${n}`,
    author: `${FIRST_NAMES[n % 10]} ${LAST_NAMES[Math.floor(n / 10) % 10]}`,
    year: 1800 + (n % 225),
  }
}

const catalogue = () => books(CATALOGUE_SIZE, catalogueBook)

/** A catalogue of the test's own, for a test that changes it. */
export async function catalogueService(t: TestContext): Promise<Service> {
  const service = await serviceFor(t)
  await importBooks(service, catalogue())
  return service
}

/** A catalogue that outlives a test, for the tests of a file that change no book; the caller stops it. */
export async function sharedCatalogue(): Promise<ListeningService> {
  const service = await startService(serviceEnv('sqlite:books.db'))
  await importBooks(service, catalogue())
  return service
}

const tokens = new Map<Service, Promise<string>>()

/** What the service answers for a query, to compare the page with. */
export async function find(service: Service, query: string): Promise<{ titles: string[]; total: number }> {
  if (!tokens.has(service)) tokens.set(service, login(service))
  const answer = await call(service, 'GET', `/books?${query}&count=true`, { token: await tokens.get(service)! })
  assert.equal(answer.status, 200)
  return { titles: answer.body.data.map((book: Book) => book.title), total: Number(answer.headers.get('x-total-count')) }
}

export const english = new Intl.NumberFormat('en-US')

export function search(page: Page) {
  return page.getByRole('searchbox', { name: 'Search' })
}

export function pager(page: Page) {
  return page.getByRole('navigation', { name: 'Pages' })
}

/** Waits for the page shown to be `page` of the table: its number in the pager, its books in place. */
export async function waitForPage(page: Page, number: number): Promise<void> {
  await page.waitForFunction(
    (expected) =>
      document.querySelector<HTMLInputElement>('input.page-number')?.value === expected &&
      document.querySelector('table[aria-busy], tbody[aria-busy]') === null,
    String(number),
  )
}

/**
 * The figures the catalogue page must reach with 10,000 books: the first rows after sign-in, a
 * search typed key by key, and paging and scrolling without a long task. They run on their
 * own, after the other tests (`*.figures.ts`, not `*.test.ts`): the time a task takes is the
 * time the machine gives it, and four test files at once on two cores give it little.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it, type TestContext } from 'node:test'
import type { ListeningService } from '../../test/support/service.ts'
import { countLine, openPage, signIn, signedIn, skip, startBrowser, stopBrowser } from './support/browser-page.ts'
import { catalogueBook, english, find, search, sharedCatalogue, waitForPage } from './support/catalogue.ts'

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

function nth(values: number[], fraction: number): number {
  return values.toSorted((a, b) => a - b)[Math.ceil(values.length * fraction) - 1]!
}

/** What the figures' tests note in the page, on `window`. */
interface Notes {
  firstRows: { clicked?: number; painted?: number }
  /** What the table showed, each time it changed, in the frame that showed it. */
  seen: { at: number; state: string }[]
  keys: number[]
  longTasks: number[]
}

/** How many times a figure is measured before it counts as missed. */
const ROUNDS = 3

/**
 * Measures a figure up to three times and keeps the first round that reaches it. What the page
 * costs is its own; other work on the machine can only add to it, so a round it reaches is the
 * page's figure, and a page that misses it misses it in every round.
 */
async function bestOfRounds(t: TestContext, what: string, round: () => Promise<{ reached: boolean; said: string }>): Promise<void> {
  const rounds: string[] = []
  for (let n = 0; n < ROUNDS; n++) {
    const { reached, said } = await round()
    rounds.push(said)
    if (reached) {
      t.diagnostic(`${what}: ${rounds.join('; then ')}`)
      return
    }
  }
  assert.fail(`${what}, missed in each of ${ROUNDS} rounds: ${rounds.join('; ')}`)
}

describe('the figures of the catalogue page with 10,000 books', { skip, timeout: 120_000 }, () => {
  it('shows the first rows within 300 ms of sign-in', async (t) => {
    await bestOfRounds(t, 'first rows after "Sign in"', async () => {
      const page = await openPage(t, shared)
      await page.getByLabel('Username').waitFor()
      // When the click on "Sign in" happened, and when the first row was first painted after it.
      await page.evaluate(() => {
        const times: Notes['firstRows'] = ((window as unknown as Notes).firstRows = {})
        document.addEventListener('click', (event) => (times.clicked ??= event.timeStamp), { capture: true })
        new MutationObserver((_, observer) => {
          if (!document.querySelector('tbody tr')) return
          observer.disconnect()
          requestAnimationFrame(() => (times.painted = performance.now()))
        }).observe(document.body, { childList: true, subtree: true })
      })
      await signIn(page)
      await page.waitForFunction(() => (window as unknown as Notes).firstRows.painted !== undefined)
      const { clicked = 0, painted = 0 } = await page.evaluate(() => (window as unknown as Notes).firstRows)
      const took = painted - clicked
      await page.context().close()
      return { reached: took < 300, said: `${took.toFixed(0)} ms` }
    })
  })

  it('answers a search on screen within 150 ms of the last key (p95)', async (t) => {
    const page = await openPage(t, shared)
    await signedIn(page)
    await countLine(page).filter({ hasText: '10,000 books' }).waitFor()
    // Every frame notes what the table shows if it changed, and every key when it was pressed.
    await page.evaluate(() => {
      const notes = window as unknown as Notes
      const seen: Notes['seen'] = (notes.seen = [])
      const keys: number[] = (notes.keys = [])
      document.addEventListener('keydown', () => keys.push(performance.now()), { capture: true })
      let last = ''
      const note = () => {
        const state = `${document.querySelector('p.count')?.textContent}|${document.querySelector('tbody td.col-title')?.textContent}`
        if (state !== last) seen.push({ at: performance.now(), state })
        last = state
        requestAnimationFrame(note)
      }
      requestAnimationFrame(note)
    })
    // Each finds one book, and its last key changes the answer: a title's number finds, without its last
    // digit, the ten books numbered alike, which also share the second word of their titles and their
    // authors' last name, words that every fourth search adds.
    const terms = [
      1234, 2345, 3456, 4567, 5678, 6789, 7890, 8901, 9012, 1357, 2468, 3579, 4680, 5791, 6802, 1470, 2581, 3692, 4703, 5814,
    ].map((n, index) => {
      if (index % 4 === 1)
        return `${
          catalogueBook(n)
            .title.replace(/^(The|A) /, '')
            .split(' ')[1]
        } ${n}`
      if (index % 4 === 3) return `${catalogueBook(n).author.split(' ')[1]} ${n}`
      return String(n)
    })
    const answers = await Promise.all(terms.map((term) => find(shared, `q=${encodeURIComponent(term)}&limit=1`)))
    await bestOfRounds(t, 'a search on screen after the last key, median and p95', async () => {
      const latencies: number[] = []
      for (const [index, term] of terms.entries()) {
        const { titles, total } = answers[index]!
        const expected = `${english.format(total)} ${total === 1 ? 'book matches' : 'books match'}`
        await search(page).press('ControlOrMeta+a')
        await search(page).pressSequentially(term, { delay: 30 })
        const latency = await page
          .waitForFunction(
            ([count, title]) => {
              const { seen, keys } = window as unknown as Notes
              const lastKey = keys.at(-1)!
              const shown = seen.find(({ at, state }) => at > lastKey && state.startsWith(count!) && state.endsWith(`|${title}`))
              return shown && shown.at - lastKey
            },
            [expected, titles[0]],
          )
          .then((handle) => handle.jsonValue() as Promise<number>)
        latencies.push(latency)
      }
      const p95 = nth(latencies, 0.95)
      return { reached: p95 < 150, said: `${nth(latencies, 0.5).toFixed(0)} and ${p95.toFixed(0)} ms` }
    })
  })

  it('pages and scrolls with no task over 50 ms', async (t) => {
    const page = await openPage(t, shared)
    await signedIn(page)
    await countLine(page).filter({ hasText: '10,000 books in the catalogue' }).waitFor()
    await page.evaluate(() => {
      const tasks: number[] = ((window as unknown as Notes).longTasks = [])
      new PerformanceObserver((list) => tasks.push(...list.getEntries().map((entry) => entry.duration))).observe({ type: 'longtask' })
    })
    // Found by CSS, not by role: finding a button by its accessible name runs in the page, and
    // names every button of the table on the way, which would be measured as the page's own work.
    const button = (text: string) => page.locator(`nav.pager button:has-text("${text}")`)
    const size = page.locator('nav.pager select')
    await bestOfRounds(t, 'tasks over 50 ms while paging and scrolling', async () => {
      await page.evaluate(() => ((window as unknown as Notes).longTasks.length = 0))
      for (let number = 2; number <= 6; number++) {
        await button('Next').click()
        await waitForPage(page, number)
      }
      await button('Last').click()
      await waitForPage(page, 200)
      await size.selectOption('100')
      await waitForPage(page, 100)
      for (let step = 0; step < 12; step++) await page.mouse.wheel(0, 800)
      await page.keyboard.press('Home')
      await button('First').click()
      await waitForPage(page, 1)
      await page.locator('input.page-number').fill('33')
      await page.locator('input.page-number').press('Enter')
      await waitForPage(page, 33)
      await button('Previous').click()
      await waitForPage(page, 32)
      for (let step = 0; step < 12; step++) await page.mouse.wheel(0, -800)
      await size.selectOption('50')
      await waitForPage(page, 63)
      await button('First').click()
      await waitForPage(page, 1)
      // A frame, so that what the last step started is measured too.
      await page.evaluate(() => new Promise(requestAnimationFrame))
      const longTasks = await page.evaluate(() => (window as unknown as Notes).longTasks)
      return { reached: longTasks.length === 0, said: longTasks.length === 0 ? 'none' : longTasks.map((ms) => `${ms} ms`).join(', ') }
    })
  })
})

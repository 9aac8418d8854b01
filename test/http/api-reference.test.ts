import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { chromium } from 'playwright-core'
import { buildTestApp } from '../helpers.ts'
import { requireExecutable, skipWithout } from '../support/executables.ts'

const CHROMIUM = '/usr/bin/chromium'
const skip = skipWithout(CHROMIUM, 'chromium')

const OPERATIONS = [
  'Issue an access token',
  'Create a book',
  'List books, ascending by id',
  'Get a book',
  'Update a book: members absent from the body keep their values',
  'Delete a book',
]

describe('GET /docs', () => {
  it('answers an HTML page that loads its script from this service', async () => {
    const app = await buildTestApp()
    const page = await app.inject({ method: 'GET', url: '/docs/' })
    const script = await app.inject({ method: 'GET', url: '/docs/js/scalar.js' })
    await app.close()
    assert.equal(page.statusCode, 200)
    assert.match(String(page.headers['content-type']), /^text\/html/)
    assert.match(page.body, /<script src="js\/scalar\.js"><\/script>/)
    assert.equal(script.statusCode, 200)
    assert.match(String(script.headers['content-type']), /javascript/)
  })

  it('lists the six operations in a real browser without asking any other host', { skip, timeout: 90_000 }, async () => {
    requireExecutable(CHROMIUM, 'chromium')
    const app = await buildTestApp()
    await app.listen({ host: '127.0.0.1', port: 0 })
    const { port } = app.server.address() as { port: number }
    const origin = `http://127.0.0.1:${port}`
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--headless',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    })
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
      const elsewhere: string[] = []
      await page.route('**/*', (route) => {
        const url = route.request().url()
        if (url.startsWith(`${origin}/`) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue()
        elsewhere.push(url)
        return route.abort()
      })
      await page.goto(`${origin}/docs`)
      for (const summary of OPERATIONS) {
        await page.getByText(summary, { exact: true }).first().waitFor({ state: 'attached', timeout: 30_000 })
      }
      await page.waitForLoadState('networkidle')
      // A person who wants to look at the page asks for a picture of it.
      const screenshot = process.env.DOCS_SCREENSHOT
      if (screenshot !== undefined) await page.screenshot({ path: screenshot, fullPage: false })
      assert.deepEqual(elsewhere, [])
    } finally {
      await browser.close()
      await app.close()
    }
  })
})

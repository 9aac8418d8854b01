import assert from 'node:assert/strict'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { describe, it } from 'node:test'
import { buildTestApp } from '../../helpers.ts'
import { chromiumSkip as skip, launchChromium } from '../../support/browser.ts'

const OPERATIONS = [
  'Issue an access token',
  'Create a book',
  'List and find books',
  'Get a book',
  'Update a book: members absent from the body keep their values',
  'Delete a book: it goes to the trash',
  "A book's history",
  'The trash',
  'Restore a book from the trash',
  'The changes of every book, oldest first',
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

  it("gives the page a strict policy of its own: this service's scripts only, and no framing", async (t) => {
    const app = await buildTestApp()
    t.after(() => app.close())
    const page = await app.inject({ method: 'GET', url: '/docs/' })
    const policy = new Map(
      String(page.headers['content-security-policy'])
        .split(';')
        .map((directive) => directive.trim().split(/\s+/))
        .map(([name, ...values]) => [name!, values]),
    )
    assert.deepEqual(policy.get('default-src'), ["'none'"])
    assert.deepEqual(policy.get('frame-ancestors'), ["'none'"])
    assert.deepEqual(policy.get('base-uri'), ["'none'"])
    assert.deepEqual(policy.get('connect-src'), ["'self'"])
    const scripts = policy.get('script-src')!
    assert.equal(scripts[0], "'self'")
    assert.ok(
      scripts.slice(1).length > 0 && scripts.slice(1).every((source) => /^'sha256-[A-Za-z0-9+/=]+'$/.test(source)),
      scripts.join(' '),
    )
    assert.ok(!scripts.includes("'unsafe-inline'") && !scripts.includes("'unsafe-eval'"))
  })

  it('serves the script compressed, from one shared copy, and answers a revalidation with 304', async (t) => {
    const app = await buildTestApp()
    t.after(() => app.close())
    const plain = await app.inject({ method: 'GET', url: '/docs/js/scalar.js', headers: { 'accept-encoding': 'identity' } })
    assert.equal(plain.headers['content-encoding'], undefined)
    for (const [accept, encoding, decode] of [
      ['gzip, deflate, br, zstd', 'br', brotliDecompressSync],
      ['gzip, br;q=0', 'gzip', gunzipSync],
    ] as const) {
      const res = await app.inject({ method: 'GET', url: '/docs/js/scalar.js', headers: { 'accept-encoding': accept } })
      assert.equal(res.statusCode, 200)
      assert.equal(res.headers['content-encoding'], encoding)
      assert.equal(res.headers.vary, 'accept-encoding')
      assert.ok(res.rawPayload.length < plain.rawPayload.length / 3, `${encoding}: ${res.rawPayload.length} bytes`)
      assert.ok(decode(res.rawPayload).equals(plain.rawPayload), encoding)
    }
    const again = await app.inject({ method: 'GET', url: '/docs/js/scalar.js', headers: { 'if-none-match': String(plain.headers.etag) } })
    assert.equal(again.statusCode, 304)
  })

  it('lists the operations in a real browser without asking any other host', { skip, timeout: 90_000 }, async () => {
    const app = await buildTestApp()
    await app.listen({ host: '127.0.0.1', port: 0 })
    const { port } = app.server.address() as { port: number }
    const origin = `http://127.0.0.1:${port}`
    const { browser, close } = await launchChromium()
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
      const elsewhere: string[] = []
      await page.route('**/*', (route) => {
        const url = route.request().url()
        if (url.startsWith(`${origin}/`) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue()
        elsewhere.push(url)
        return route.abort()
      })
      const refused: string[] = []
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) refused.push(message.text())
      })
      page.on('pageerror', (err) => refused.push(err.message))
      await page.goto(`${origin}/docs`)
      for (const summary of OPERATIONS) {
        await page.getByText(summary, { exact: true }).first().waitFor({ state: 'attached', timeout: 30_000 })
      }
      await page.waitForLoadState('networkidle')
      // A person who wants to look at the page asks for a picture of it.
      const screenshot = process.env.DOCS_SCREENSHOT
      if (screenshot !== undefined) await page.screenshot({ path: screenshot, fullPage: false })
      assert.deepEqual(elsewhere, [])
      assert.deepEqual(refused, [], 'the page runs within its content security policy')
    } finally {
      await close()
      await app.close()
    }
  })
})

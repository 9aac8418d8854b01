import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { gzipSync } from 'node:zlib'
import type { FastifyInstance } from 'fastify'
import { buildTestApp } from '../../helpers.ts'

const HTML = '<!doctype html><title>Book catalogue</title><script type="module" src="/app/main-ABCD2345.js"></script>'
const SCRIPT = 'document.title = "from the script"'

/** A built page of two files, the script with a gzip copy, as `npm run build:web` lays it out. */
async function builtPage(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'page-'))
  await writeFile(join(root, 'index.html'), HTML)
  await writeFile(join(root, 'main-ABCD2345.js'), SCRIPT)
  await writeFile(join(root, 'main-ABCD2345.js.gz'), gzipSync(SCRIPT))
  return root
}

describe('the catalogue page', () => {
  let app: FastifyInstance
  let root: string
  before(async () => {
    root = await builtPage()
    app = await buildTestApp({}, { pageRoot: root })
  })
  after(async () => {
    await app.close()
    await rm(root, { recursive: true, force: true })
  })

  it('GET / redirects to /app/ with 302', async () => {
    const res = await app.inject({ method: 'GET', url: '/' })
    assert.equal(res.statusCode, 302)
    assert.equal(res.headers.location, '/app/')
  })

  it('GET /app leads to /app/, where the page asks for its assets', async () => {
    const res = await app.inject({ method: 'GET', url: '/app' })
    assert.equal(res.statusCode, 301)
    assert.equal(res.headers.location, '/app/')
  })

  it('GET /app/ answers the HTML, revalidated every time, under a CSP of its own origin only', async () => {
    const res = await app.inject({ method: 'GET', url: '/app/', headers: { accept: 'text/html' } })
    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^text\/html/)
    assert.equal(res.body, HTML)
    assert.equal(res.headers['cache-control'], 'no-cache')
    const csp = String(res.headers['content-security-policy'])
    assert.match(csp, /^default-src 'self'(;|$)/)
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/)
    assert.match(csp, /frame-ancestors 'none'/)
    assert.equal(res.headers['x-content-type-options'], 'nosniff')
  })

  it('sends a fingerprinted asset precompressed when the browser takes it, cached for a year', async () => {
    const res = await app.inject({ method: 'GET', url: '/app/main-ABCD2345.js', headers: { 'accept-encoding': 'gzip, br' } })
    assert.equal(res.statusCode, 200)
    assert.equal(res.headers['content-encoding'], 'gzip')
    assert.match(String(res.headers.vary), /accept-encoding/i)
    assert.match(String(res.headers['content-type']), /javascript/)
    assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable')
    const plain = await app.inject({ method: 'GET', url: '/app/main-ABCD2345.js' })
    assert.equal(plain.body, SCRIPT)
    assert.equal(plain.headers['content-encoding'], undefined)
  })

  it('answers a browser asking for a page that does not exist with HTML, never the envelope', async () => {
    const res = await app.inject({ method: 'GET', url: '/app/books/12', headers: { accept: 'text/html,application/xhtml+xml' } })
    assert.equal(res.statusCode, 404)
    assert.match(String(res.headers['content-type']), /^text\/html/)
    assert.match(res.body, /<a href="\/app\/">/)
    assert.match(String(res.headers['content-security-policy']), /^default-src 'self'/)
  })

  it('answers other clients asking for what does not exist under /app/ with the 404 envelope', async () => {
    const res = await app.inject({ method: 'GET', url: '/app/missing-ABCD2345.js', headers: { accept: '*/*' } })
    assert.equal(res.statusCode, 404)
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8')
    assert.deepEqual(res.json(), { status: 404, message: 'Not found', data: null })
  })

  it('leaves the JSON interface with its own headers, not the page policy', async () => {
    const res = await app.inject({ method: 'GET', url: '/healthz' })
    assert.equal(res.statusCode, 200)
    assert.doesNotMatch(String(res.headers['content-security-policy']), /'self'/)
  })

  it('answers GET * with the 404 envelope, not the redirect', async () => {
    const res = await app.inject({ method: 'GET', url: '*' })
    assert.equal(res.statusCode, 404)
  })
})

describe('the catalogue page before it is built', () => {
  it('says how to build it instead of failing to start', async () => {
    const root = await mkdtemp(join(tmpdir(), 'page-'))
    const app = await buildTestApp({}, { pageRoot: root })
    try {
      const res = await app.inject({ method: 'GET', url: '/app/', headers: { accept: 'text/html' } })
      assert.equal(res.statusCode, 503)
      assert.match(res.body, /npm run build:web/)
    } finally {
      await app.close()
      await rm(root, { recursive: true, force: true })
    }
  })
})

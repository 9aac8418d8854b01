import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { buildTestApp, dune, issueToken, listenOnLoopback, TEST_PASSWORD, TEST_USERNAME, withToken } from '../helpers.ts'

const EXAMPLE = fileURLToPath(new URL('../../docs/examples/sync.ts', import.meta.url))

test('docs/examples/sync.ts takes a snapshot, then applies every change after it as it happens', async (t) => {
  const app = await buildTestApp()
  t.after(() => app.close())
  const port = await listenOnLoopback(app)
  const token = await issueToken(app)
  const call = (method: 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) => app.inject(withToken(token, { method, url, payload }))
  const { id } = (await call('POST', '/book', dune)).json().data

  // Run as the guide says, with the settings in the environment.
  const child = spawn(process.execPath, [EXAMPLE], {
    env: {
      PATH: process.env.PATH ?? '',
      BOOKS_URL: `http://127.0.0.1:${port}`,
      BOOKS_USERNAME: TEST_USERNAME,
      BOOKS_PASSWORD: TEST_PASSWORD,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.after(() => child.kill())
  let errors = ''
  child.stderr.on('data', (chunk) => (errors += chunk))
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const next = async () => {
    const { value, done } = await lines.next()
    assert.ok(!done, `the example stopped: ${errors}`)
    return value as string
  }

  assert.equal(await next(), 'snapshot as of change 1: the copy holds 1')
  const other = (await call('POST', '/book', { ...dune, title: 'Children of Dune' })).json().data.id
  await call('PUT', `/book/${id}`, { year: 1966 })
  await call('DELETE', `/book/${id}`)
  assert.equal(await next(), `change 2: created book ${other}; the copy holds 2`)
  assert.equal(await next(), `change 3: updated book ${id}; the copy holds 2`)
  assert.equal(await next(), `change 4: deleted book ${id}; the copy holds 1`)
})

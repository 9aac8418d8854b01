import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer } from 'node:http'
import { writeFile, readFile, mkdir } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { createSigner } from 'fast-jwt'
import { startTcpProxy } from '../../../test/support/tcp-proxy.ts'
import { TEST_SECRET } from '../../../test/helpers.ts'
import { cliFor, type Run } from './support/cli.ts'
import { serviceFor, storeEngines, TEST_USERNAME } from './support/service.ts'
import { closedPort } from '../../../test/support/closed-port.ts'

function assertFailed(run: Run, code: number, message: string): void {
  assert.equal(run.code, code, run.stderr)
  assert.equal(run.stderr, `book-catalogue: ${message}\n`)
}

/** A token of the configured user issued `age` seconds ago, signed as the service signs them. */
function tokenIssued(age: number): string {
  const now = Date.now() - age * 1000
  const sign = createSigner({ key: TEST_SECRET, algorithm: 'HS256', expiresIn: 900_000, clockTimestamp: now })
  return sign({ sub: TEST_USERNAME, role: 'admin', auth_time: Math.floor(now / 1000) })
}

async function keepSession(home: string, url: string, token: string): Promise<void> {
  await mkdir(join(home, 'book-catalogue'), { recursive: true })
  await writeFile(
    join(home, 'book-catalogue', 'session.json'),
    JSON.stringify({ url, sessions: { [url]: { username: TEST_USERNAME, token } } }),
  )
}

describe('the book-catalogue command when the service is away or failing', () => {
  it('an unreachable service is one line and exit code 3', async (t) => {
    const url = `http://127.0.0.1:${await closedPort()}`
    const cli = await cliFor(t, url)
    assertFailed(await cli.run(['find'], { env: { BOOKS_KEY: 'bk_any' } }), 3, `cannot reach ${url}: connect ECONNREFUSED ${url.slice(7)}`)
  })

  it('a service that keeps failing is asked again a few times, then one line and exit code 3', async (t) => {
    let requests = 0
    const server = createServer((_, response) => {
      requests++
      response.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '0' })
      response.end(JSON.stringify({ status: 503, message: 'Service unavailable', data: null }))
    }).listen(0, '127.0.0.1')
    t.after(() => server.close())
    await once(server, 'listening')
    const cli = await cliFor(t, `http://127.0.0.1:${(server.address() as AddressInfo).port}`)
    assertFailed(await cli.run(['find'], { env: { BOOKS_KEY: 'bk_any' } }), 3, 'the service failed: 503 Service unavailable')
    assert.equal(requests, 4)
  })
})

for (const engine of storeEngines) {
  describe(`the book-catalogue command's session and interruptions (${engine.name})`, { skip: engine.skip }, () => {
    it('renews a kept token once it is five minutes old, and keeps the new one', async (t) => {
      const service = await serviceFor(t, engine)
      const cli = await cliFor(t, service.url)
      const old = tokenIssued(400)
      await keepSession(cli.home, service.url, old)
      const found = await cli.run(['find', '--json'])
      assert.deepEqual([found.code, found.stdout], [0, '[]\n'])
      const saved = JSON.parse(await readFile(join(cli.home, 'book-catalogue', 'session.json'), 'utf8'))
      const renewed: string = saved.sessions[service.url].token
      assert.notEqual(renewed, old)
      const { iat } = JSON.parse(Buffer.from(renewed.split('.')[1]!, 'base64url').toString()) as { iat: number }
      assert.ok(Math.abs(iat - Date.now() / 1000) < 60, `issued at ${iat}`)
    })

    it('an expired token, which cannot be renewed, is one line that says to log in again', async (t) => {
      const service = await serviceFor(t, engine)
      const cli = await cliFor(t, service.url)
      await keepSession(cli.home, service.url, tokenIssued(1000))
      assertFailed(await cli.run(['find']), 1, 'the session has expired or was revoked: run book-catalogue login --username NAME again')
    })

    it('Ctrl-C while a file is sent stops the import: exit code 130, and nothing stored', async (t) => {
      const service = await serviceFor(t, engine)
      const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(service.url).port) })
      t.after(() => proxy.close())
      const cli = await cliFor(t, `http://127.0.0.1:${proxy.port}`)
      const key = (await (await service.admin()).keys.create({ name: 'import', role: 'editor' })).key
      const file = join(cli.home, 'books.csv')
      // Far more than the connection holds while nothing reads it: about 30 MB.
      await writeFile(
        file,
        `title,author,year\n${`${'A title long enough to fill the connection quickly '.repeat(5)},Someone,2000\n`.repeat(100_000)}`,
      )
      proxy.stall()
      const started = cli.start(['import', '--no-check', file], { env: { BOOKS_KEY: key } })
      await started.line('stderr', (line) => line.startsWith('Importing books.csv'))
      started.kill('SIGINT')
      const run = await started.done
      assert.equal(run.code, 130, run.stderr)
      assert.equal(run.stderr.split('\n').at(-2), 'book-catalogue: import interrupted before the file was sent whole: nothing was stored')
      assert.equal(await (await service.admin()).books.count(), 0)
    })
  })
}

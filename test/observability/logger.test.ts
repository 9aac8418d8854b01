import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { describe, it } from 'node:test'
import { loggerOptions } from '../../src/observability/logger.ts'
import { buildTestApp } from '../helpers.ts'

describe('logger options', () => {
  it('pretty-prints for a person at a terminal outside production', () => {
    const options = loggerOptions({ level: 'debug', production: false }, true)
    assert.equal(options.level, 'debug')
    assert.equal((options.transport as { target: string }).target, 'pino-pretty')
  })

  it('writes JSON lines in production, and when the output is not a terminal', () => {
    assert.equal(loggerOptions({ level: 'info', production: true }, true).transport, undefined)
    assert.equal(loggerOptions({ level: 'info', production: false }, false).transport, undefined)
  })

  it('censors the Authorization header, passwords, tokens and secrets in anything logged', async () => {
    let written = ''
    const stream = new Writable({
      write(chunk, _encoding, done) {
        written += String(chunk)
        done()
      },
    })
    const app = await buildTestApp({ logLevel: 'info' }, { logStream: stream })
    app.log.info({ password: 'p-1', token: 't-1', secret: 's-1', req: { headers: { authorization: 'a-1' } }, login: { password: 'p-2' } })
    await app.close()
    assert.match(written, /\[redacted\]/)
    for (const secret of ['p-1', 't-1', 's-1', 'a-1', 'p-2']) assert.ok(!written.includes(secret), secret)
  })
})

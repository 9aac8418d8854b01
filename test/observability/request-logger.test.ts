import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { describe, it } from 'node:test'
import type { FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import { requestLogger } from '../../src/observability/request-logger.ts'

function collector() {
  const lines: Record<string, unknown>[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line !== '') lines.push(JSON.parse(line))
      done()
    },
  })
  return { lines, stream }
}

function requestLog(level: string) {
  const out = collector()
  const parent = pino({ level }, out.stream) as unknown as FastifyBaseLogger
  const log = requestLogger.call(undefined as never, parent, { requestId: 'r-1' }, {}, undefined as never)
  return { log, lines: out.lines, parent }
}

describe('request logger', () => {
  it('writes the lines of enabled levels with the request id, and nothing below the level', () => {
    const { log, lines } = requestLog('warn')
    log.info({ a: 1 }, 'not written')
    log.debug('not written')
    log.warn({ b: 2 }, 'written')
    log.error(new Error('boom'), 'failed')
    assert.deepEqual(
      lines.map(({ requestId, msg, level }) => ({ requestId, msg, level })),
      [
        { requestId: 'r-1', msg: 'written', level: 40 },
        { requestId: 'r-1', msg: 'failed', level: 50 },
      ],
    )
    assert.equal(lines[0]!.b, 2)
    assert.equal((lines[1]!.err as { message: string }).message, 'boom')
  })

  it('follows the level it is given, and its children keep the request id', () => {
    const { log, lines } = requestLog('warn')
    assert.equal(log.level, 'warn')
    log.level = 'info'
    log.info('now written')
    log.child({ part: 'x' }).info('from a child')
    assert.deepEqual(
      lines.map(({ requestId, msg }) => ({ requestId, msg })),
      [
        { requestId: 'r-1', msg: 'now written' },
        { requestId: 'r-1', msg: 'from a child' },
      ],
    )
    assert.equal(lines[1]!.part, 'x')
  })
})

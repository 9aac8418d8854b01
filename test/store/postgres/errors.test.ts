import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import pg from 'pg'
import { classifyPostgresError } from '../../../src/store/postgres/errors.ts'
import { StoreUnavailableError } from '../../../src/store/store.ts'

function serverError(code: string): pg.DatabaseError {
  const err = new pg.DatabaseError('from the server', 0, 'error')
  err.code = code
  return err
}

function systemError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code, syscall: 'connect' })
}

describe('PostgreSQL errors', () => {
  for (const [what, err] of [
    ['connection refused', systemError('ECONNREFUSED')],
    ['connection reset', systemError('ECONNRESET')],
    ['a network timeout', systemError('ETIMEDOUT')],
    ['every address refusing', Object.assign(new AggregateError([]), { code: 'ECONNREFUSED' })],
    ['a connection that ended', new Error('Connection terminated unexpectedly')],
    ['a query that got no answer', new Error('Query read timeout')],
    ['too many clients', serverError('53300')],
    ['a refused login', serverError('28P01')],
    ['a database that does not exist', serverError('3D000')],
    ['an administrator shutdown', serverError('57P01')],
    ['the server starting up', serverError('57P03')],
    ['statement_timeout', serverError('57014')],
    ['a deadlock', serverError('40P01')],
  ] as const) {
    it(`make ${what} a StoreUnavailableError`, () => {
      const classified = classifyPostgresError(err)
      assert.ok(classified instanceof StoreUnavailableError)
      assert.equal(classified.cause, err)
    })
  }

  for (const [what, err] of [
    ['a CHECK violation', serverError('23514')],
    ['a syntax error', serverError('42601')],
    ['a programming mistake', new TypeError('values.map is not a function')],
  ] as const) {
    it(`leave ${what} as it is`, () => {
      assert.equal(classifyPostgresError(err), err)
    })
  }
})

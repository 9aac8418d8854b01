import assert from 'node:assert/strict'
import { buffer } from 'node:stream/consumers'
import { describe, test } from 'node:test'
import { formatOfContentType, sniffFormat } from '../../src/formats/import-format.ts'

async function* chunks(...parts: string[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield Buffer.from(part)
}

describe('the format of an import body', () => {
  test('each of the three media types names its format, with or without a UTF-8 charset', () => {
    assert.equal(formatOfContentType('application/json'), 'json')
    assert.equal(formatOfContentType('Application/JSON; charset=UTF-8'), 'json')
    assert.equal(formatOfContentType('application/x-ndjson'), 'ndjson')
    assert.equal(formatOfContentType('text/csv; charset="utf-8"'), 'csv')
    assert.equal(formatOfContentType('text/csv;header=present'), 'csv')
  })

  test('no header, or the form type curl sends by default, leaves the body to decide', () => {
    assert.equal(formatOfContentType(undefined), 'sniff')
    assert.equal(formatOfContentType(''), 'sniff')
    assert.equal(formatOfContentType('application/x-www-form-urlencoded'), 'sniff')
  })

  test('any other type, or another charset, names no format', () => {
    for (const header of ['text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'text/csv; charset=latin1', ';;;']) {
      assert.equal(formatOfContentType(header), undefined, header)
    }
  })

  test('the first significant character decides, and the body comes back whole', async () => {
    for (const [parts, format] of [
      [['\uFEFF', '  \n', '[{}]'], 'json'],
      [['{"title":1}\n'], 'ndjson'],
      [['title,author,year\n'], 'csv'],
      [[], 'csv'],
    ] as const) {
      const sniffed = await sniffFormat(chunks(...parts))
      assert.equal(sniffed.format, format)
      assert.equal((await buffer(sniffed.body)).toString(), parts.join(''))
    }
  })
})

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { declaredBody, sniffFormat } from '../../src/formats/import-format.ts'

async function* chunks(...parts: string[]): AsyncGenerator<string> {
  yield* parts
}

async function all(text: AsyncIterable<string>): Promise<string> {
  let whole = ''
  for await (const part of text) whole += part
  return whole
}

describe('the format of an import body', () => {
  test('each of the four media types names its format, UTF-8 unless a charset says otherwise', () => {
    assert.deepEqual(declaredBody('application/json'), { format: 'json', encoding: 'utf-8' })
    assert.deepEqual(declaredBody('Application/JSON; charset=UTF-8'), { format: 'json', encoding: 'utf-8' })
    assert.deepEqual(declaredBody('application/x-ndjson'), { format: 'ndjson', encoding: 'utf-8' })
    assert.deepEqual(declaredBody('text/csv; charset="utf-8"'), { format: 'csv', encoding: 'utf-8' })
    assert.deepEqual(declaredBody('text/csv;header=present'), { format: 'csv', encoding: 'utf-8' })
    assert.deepEqual(declaredBody('text/tab-separated-values'), { format: 'tsv', encoding: 'utf-8' })
  })

  test('no header, or the form type curl sends by default, leaves the body to decide', () => {
    assert.deepEqual(declaredBody(undefined), { format: 'sniff', encoding: 'utf-8' })
    assert.deepEqual(declaredBody(''), { format: 'sniff', encoding: 'utf-8' })
    assert.deepEqual(declaredBody('application/x-www-form-urlencoded'), { format: 'sniff', encoding: 'utf-8' })
    assert.deepEqual(declaredBody('application/x-www-form-urlencoded; charset=windows-1252'), { format: 'sniff', encoding: 'windows-1252' })
  })

  test('UTF-16 and Windows-1252 by any of their labels in the Encoding Standard', () => {
    for (const [charset, encoding] of [
      ['UTF-16', 'utf-16le'],
      ['utf-16le', 'utf-16le'],
      ['utf-16be', 'utf-16be'],
      ['windows-1252', 'windows-1252'],
      ['cp1252', 'windows-1252'],
      ['ISO-8859-1', 'windows-1252'],
      ['latin1', 'windows-1252'],
      ['us-ascii', 'windows-1252'],
      ['utf8', 'utf-8'],
    ]) {
      assert.deepEqual(declaredBody(`text/csv; charset=${charset}`), { format: 'csv', encoding }, charset)
    }
  })

  test('any other type names no format; a known type with any other charset names that charset', () => {
    for (const header of ['text/plain', 'application/xml', 'multipart/form-data; boundary=x', ';;;', 'text/csv2']) {
      assert.deepEqual(declaredBody(header), { unsupported: 'type' }, header)
    }
    for (const charset of ['iso-8859-5', 'shift_jis', 'utf-32', 'x-no-such-charset', '']) {
      assert.deepEqual(declaredBody(`text/csv; charset=${charset}`), { unsupported: 'charset', charset }, charset)
    }
    assert.deepEqual(declaredBody('text/plain; charset=iso-8859-5'), { unsupported: 'type' })
  })

  test('the first significant character decides, and the text comes back whole', async () => {
    for (const [parts, format] of [
      [['  \n', '[{}]'], 'json'],
      [['{"title":1}\n'], 'ndjson'],
      [['title,author,year\n'], 'csv'],
      [['Title\tAuthor\n'], 'csv'],
      [[], 'csv'],
    ] as const) {
      const sniffed = await sniffFormat(chunks(...parts))
      assert.equal(sniffed.format, format)
      assert.equal(await all(sniffed.text), parts.join(''))
    }
  })
})

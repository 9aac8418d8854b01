import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ApiError, formatOfName, type Progress } from '../src/index.ts'
import { csvOf, serviceFor, storeEngines } from './support/service.ts'

async function text(stream: ReadableStream<Uint8Array>): Promise<string> {
  // As the bytes are: a byte-order mark is part of the export.
  return new TextDecoder('utf-8', { ignoreBOM: true }).decode(await new Response(stream).arrayBuffer())
}

describe('formatOfName', () => {
  it("tells a file's format by the end of its name, in any case", () => {
    assert.deepEqual(['a.csv', 'B.TSV', 'c.ndjson', 'd.jsonl', 'e.json', 'f.txt', 'g'].map(formatOfName), [
      'csv',
      'tsv',
      'ndjson',
      'ndjson',
      'json',
      undefined,
      undefined,
    ])
  })
})

for (const engine of storeEngines) {
  describe(`the client's import and export (${engine.name})`, { skip: engine.skip }, () => {
    it('imports a file as it streams out, telling its progress up to the whole file', async (t) => {
      const catalogue = await (await serviceFor(t, engine)).admin()
      const file = new Blob([csvOf(5000)])
      const heard: Progress[] = []
      const result = await catalogue.books.import(file, { format: 'csv', onProgress: (progress) => heard.push(progress) })
      assert.equal(result.imported, 5000)
      assert.equal(result.ids.length, 5000)
      assert.ok(heard.length > 2, `${heard.length} reports`)
      assert.deepEqual(heard[0], { sent: 0, total: file.size })
      assert.deepEqual(heard.at(-1), { sent: file.size, total: file.size })
      for (let n = 1; n < heard.length; n++) assert.ok(heard[n]!.sent >= heard[n - 1]!.sent)
      assert.equal(await catalogue.books.count(), 5000)
    })

    it('imports a stream of unknown length, whose progress has no total', async (t) => {
      const catalogue = await (await serviceFor(t, engine)).admin()
      const lines = ['{"title":"Dune","author":"Frank Herbert","year":1965}\n', '{"title":"Emma","author":"Jane Austen","year":1815}\n']
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (const line of lines) controller.enqueue(new TextEncoder().encode(line))
          controller.close()
        },
      })
      const heard: Progress[] = []
      const result = await catalogue.books.import(body, { format: 'ndjson', onProgress: (progress) => heard.push(progress) })
      assert.equal(result.imported, 2)
      assert.deepEqual(heard.at(-1), { sent: lines.join('').length, total: undefined })
    })

    it('checks a file first and stores nothing; the import then refuses it whole, or skips its wrong rows', async (t) => {
      const catalogue = await (await serviceFor(t, engine)).admin()
      const file = new File(['title\tauthor\tyear\nDune\tFrank Herbert\t1965\nEmma\tJane Austen\tsoon\n'], 'books.tsv')
      const check = await catalogue.books.checkImport(file)
      assert.deepEqual(check, {
        importable: 1,
        errors: [{ row: 2, message: 'year must be an integer from -9999 to 9999' }],
        duplicates: [],
        preview: [{ title: 'Dune', author: 'Frank Herbert', year: 1965 }],
      })
      assert.equal(await catalogue.books.count(), 0)
      const refused = await catalogue.books.import(file).catch((err: unknown) => err)
      assert.ok(refused instanceof ApiError)
      assert.equal(refused.status, 400)
      assert.equal(refused.message, 'Invalid input')
      assert.deepEqual(refused.rowErrors, check.errors)
      assert.equal(await catalogue.books.count(), 0)
      const skipped = await catalogue.books.import(file, { skipInvalid: true })
      assert.equal(skipped.imported, 1)
      assert.deepEqual(skipped.errors, check.errors)
    })

    it('asks the service to leave out duplicates with duplicates=skip', async (t) => {
      const service = await serviceFor(t, engine)
      const asked: string[] = []
      const catalogue = await service.admin({
        fetch: (input, init) => {
          asked.push(new URL(String(input)).search)
          return fetch(input, init)
        },
      })
      const result = await catalogue.books.import(new Blob(['title,author,year\nDune,Frank Herbert,1965\n']), {
        skipDuplicates: true,
        skipInvalid: true,
      })
      assert.equal(result.imported, 1)
      assert.equal(asked.at(-1), '?invalid=skip&duplicates=skip')
    })

    it('reads the columns it is told to', async (t) => {
      const catalogue = await (await serviceFor(t, engine)).admin()
      const file = new Blob(['Name,Writer,Published\nDune,Frank Herbert,1965-08-01\n'])
      await catalogue.books.import(file, { columns: { title: 'Name', author: 'Writer', year: 'Published' } })
      assert.deepEqual(
        (await catalogue.books.find().all()).map(({ title, year }) => [title, year]),
        [['Dune', 1965]],
      )
    })

    it('exports what a query finds as a stream, in CSV or NDJSON, and the import reads the export back', async (t) => {
      const catalogue = await (await serviceFor(t, engine)).admin()
      await catalogue.books.import(new Blob(['title,author,year\nDune,Frank Herbert,1965\n=1+1,Someone,2001\nEmma,Jane Austen,1815\n']))
      const csv = await text(await catalogue.books.export({ sort: 'year' }))
      assert.equal(csv, "\ufeffid,title,author,year\r\n3,Emma,Jane Austen,1815\r\n1,Dune,Frank Herbert,1965\r\n2,'=1+1,Someone,2001\r\n")
      const ndjson = await text(await catalogue.books.export({ format: 'ndjson', author: 'herbert' }))
      assert.deepEqual(
        ndjson
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line)),
        [{ id: 1, title: 'Dune', author: 'Frank Herbert', year: 1965 }],
      )
      await catalogue.books.import(new Blob([csv]), { format: 'csv' })
      assert.deepEqual(
        (await catalogue.books.find({ after: 3 }).all()).map(({ title }) => title),
        ['Emma', 'Dune', '=1+1'],
      )
    })
  })
}

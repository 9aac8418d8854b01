import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import fc from 'fast-check'
import { stringify } from 'csv-stringify/sync'
import { buildTestApp, issueToken, storeEngines, withToken } from '../helpers.ts'

/** FUZZ_RUNS=n runs more or fewer cases; FUZZ_SEED=n replays a failure. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 150)
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31)

/** Mostly valid members, sometimes not: blank, too long, NUL, lone surrogates, wrong types. */
const text = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }) },
  { weight: 1, arbitrary: fc.constantFrom('', '   ', 'a\u0000b', '\uD800', 'x'.repeat(501), '=1+1', '"quoted, comma"') },
  { weight: 1, arbitrary: fc.anything() },
)
const year = fc.oneof({ weight: 6, arbitrary: fc.integer({ min: -9999, max: 9999 }) }, { weight: 1, arbitrary: fc.anything() })
const row = fc.record({ title: text, author: text, year }, { requiredKeys: [] })

const RANDOM_BYTES = fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes))

/** A body in one format, well-formed or broken, and the Content-Type it goes with. */
const body = fc.oneof(
  fc.array(row, { maxLength: 20 }).map((rows) => ({ type: 'application/json', payload: Buffer.from(JSON.stringify(rows)) })),
  fc.array(row, { maxLength: 20 }).map((rows) => ({
    type: 'application/x-ndjson',
    payload: Buffer.from(rows.map((r) => JSON.stringify(r) ?? '').join('\n')),
  })),
  fc
    .tuple(
      fc.shuffledSubarray(['title', 'author', 'year', 'notes']),
      fc.array(fc.array(fc.string({ unit: 'grapheme', maxLength: 12 }), { maxLength: 5 }), { maxLength: 20 }),
    )
    .map(([header, rows]) => ({
      type: 'text/csv',
      payload: Buffer.from(stringify([header, ...rows.map((r) => r.slice(0, header.length + 1))], { quoted_match: /,/ })),
    })),
  // Known formats' headers, any delimiter, rows broken in every way a spreadsheet can.
  fc
    .tuple(
      fc.shuffledSubarray(['Title', 'Primary Author', 'Original Publication Year', 'Year Published', 'pubdate', 'authors', 'Notes']),
      fc.constantFrom(',', ';', '\t'),
      fc.array(
        fc.array(
          fc.oneof(
            fc.string({ unit: 'grapheme', maxLength: 12 }),
            fc.constantFrom('"', '"open', '2008.0', '2021/03/02', '0101-01-01', 'a\u0000b'),
          ),
          {
            maxLength: 8,
          },
        ),
        { maxLength: 20 },
      ),
    )
    .map(([header, delimiter, rows]) => ({
      type: delimiter === '\t' ? 'text/tab-separated-values' : 'text/csv',
      payload: Buffer.from([header, ...rows].map((cells) => cells.join(delimiter)).join('\n')),
    })),
  fc
    .tuple(
      fc.constantFrom(
        'application/json',
        'application/x-ndjson',
        'text/csv',
        'text/tab-separated-values',
        'text/csv; charset=utf-16',
        'text/csv; charset=windows-1252',
        'text/csv; charset=koi8-r',
        'application/x-www-form-urlencoded',
        'text/plain',
      ),
      RANDOM_BYTES,
    )
    .map(([type, payload]) => ({ type, payload })),
  // Well-formed bodies cut short or with bytes spliced in.
  fc.tuple(fc.array(row, { minLength: 1, maxLength: 10 }), fc.nat(), RANDOM_BYTES).map(([rows, at, bytes]) => {
    const whole = Buffer.from(JSON.stringify(rows))
    const cut = at % whole.length
    return { type: 'application/json', payload: Buffer.concat([whole.subarray(0, cut), bytes]) }
  }),
)

/** All or nothing, every valid row with the others listed, or a check that stores nothing. */
const query = fc.constantFrom('', '?invalid=skip', '?dry_run=true', '?dry_run=true&invalid=skip', '?columns=year:Notes')

/** Run first whatever the seed: random bodies are seldom wholly valid, and a run must see both outcomes. */
const BOTH_OUTCOMES: [{ type: string; payload: Buffer }, string][] = [
  [{ type: 'application/json', payload: Buffer.from(JSON.stringify([{ title: 'Dune', author: 'Frank Herbert', year: 1965 }])) }, ''],
  [{ type: 'application/json', payload: Buffer.from(JSON.stringify([{ title: '', author: 'Frank Herbert', year: 1965 }])) }, ''],
]

for (const engine of storeEngines) {
  describe(`import fuzzing on ${engine.name}`, { skip: engine.skip }, () => {
    test(`${RUNS} random bodies: never a 500, never a partial import unless asked (seed ${SEED})`, async (t) => {
      const app = await buildTestApp({}, { store: await engine.open() })
      t.after(() => app.close())
      const token = await issueToken(app)
      const count = async () => {
        const res = await app.inject(withToken(token, { method: 'GET', url: '/books' }))
        return (res.json().data as unknown[]).length
      }
      let stored = await count()
      const statuses = new Map<number, number>()
      await fc.assert(
        fc.asyncProperty(body, query, async ({ type, payload }, options) => {
          const res = await app.inject(
            withToken(token, { method: 'POST', url: `/books/import${options}`, payload, headers: { 'content-type': type } }),
          )
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
          const dryRun = options.includes('dry_run=true')
          assert.ok(
            (dryRun ? [200, 400, 413, 415] : [201, 400, 413, 415]).includes(res.statusCode),
            `answered ${res.statusCode}: ${res.body}`,
          )
          const answer = res.json()
          assert.deepEqual(Object.keys(answer).sort(), ['data', 'message', 'status'])
          const now = await count()
          if (res.statusCode === 201) {
            assert.equal(answer.data.ids.length, answer.data.imported)
            assert.equal(now, stored + answer.data.imported, 'the import stored a different number of books than it answered')
            // Only invalid=skip stores some rows and leaves others out.
            assert.equal('errors' in answer.data, options.includes('invalid=skip'))
            assert.ok((answer.data.errors ?? []).every((error: { row?: number }) => error.row !== undefined))
          } else {
            assert.equal(now, stored, `a ${res.statusCode} import stored books`)
          }
          if (res.statusCode === 200) {
            const { importable, errors, duplicates, preview } = answer.data
            assert.ok(errors.length <= 100 && preview.length <= Math.min(20, importable))
            assert.deepEqual(duplicates, [])
          }
          if (res.statusCode === 400) {
            assert.ok(answer.data.errors.length >= 1 && answer.data.errors.length <= 100)
          }
          stored = now
        }),
        { numRuns: RUNS, seed: SEED, examples: BOTH_OUTCOMES },
      )
      // Both outcomes were reached, so the property checked something on each side.
      assert.ok((statuses.get(201) ?? 0) > 0 && (statuses.get(400) ?? 0) > 0, JSON.stringify([...statuses]))
    })
  })
}

import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { it } from 'node:test'
import { GENERATED, generatedTypes } from '../scripts/generate.ts'

// openapi.json is the service's own document (test/http/docs/openapi.test.ts holds it to that):
// the client's types are what openapi-typescript makes of it.
it('the generated types are those of openapi.json: run npm run generate when it changes', async () => {
  assert.ok(
    (await readFile(GENERATED, 'utf8')) === (await generatedTypes()),
    'src/generated/openapi.ts is out of date: run npm run generate',
  )
})

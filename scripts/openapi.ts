/**
 * `npm run openapi`: writes the OpenAPI document of every route, the one `GET /openapi.json`
 * serves, to openapi.json at the root of the repository, for clients generated from a file.
 * `npm run openapi -- --check` only says whether the file is out of date (exit code 1).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { openApiDocument } from '../src/http/docs/openapi.ts'
import { createMetrics } from '../src/observability/metrics.ts'

const FILE = new URL('../openapi.json', import.meta.url)

/** The document as the file holds it. */
export async function currentDocument(): Promise<string> {
  const app = await buildApp(
    loadConfig({ DB_URL: 'sqlite::memory:', LOG_LEVEL: 'silent', AUTH_PASSWORD: 'not used to write a document' }),
    {
      metrics: createMetrics({ processMetrics: false }),
    },
  )
  try {
    await app.ready()
    return `${JSON.stringify(openApiDocument(app), null, 2)}\n`
  } finally {
    await app.close()
  }
}

if (import.meta.main) {
  const document = await currentDocument()
  if (process.argv.includes('--check')) {
    const written = readFileSync(FILE, 'utf8')
    if (written !== document) {
      console.error('openapi.json is out of date: run npm run openapi')
      process.exit(1)
    }
  } else {
    writeFileSync(FILE, document)
    console.log(`wrote ${FILE.pathname}`)
  }
}

import { createHash } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import { compressAsset, sendAsset, type CompressedAsset } from '../page/compressed-asset.ts'
import { OPENAPI_PATH } from './openapi.ts'

export const DOCS_PATH = '/docs'
/** Where the page loads its script from, relative to the page. */
const SCRIPT_PATH = 'js/scalar.js'

const CONFIGURATION = {
  url: OPENAPI_PATH,
  pageTitle: 'Book catalogue API',
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  documentDownloadType: 'json',
  defaultOpenAllTags: true,
} as const

/** What the package answers, asked of it once per process: its page, with the page's policy, and its script. */
interface ReferenceFiles {
  html: string
  policy: string
  script: CompressedAsset
}

/**
 * The package parses a module of several megabytes and keeps its script as a string that it would encode for
 * every reader. It is imported on the first request for the docs, not at start-up, and asked
 * once for its page and script, which every answer of the process then shares.
 */
let files: Promise<ReferenceFiles> | undefined
function referenceFiles(): Promise<ReferenceFiles> {
  files ??= (async () => {
    const { default: apiReference } = await import('@scalar/fastify-api-reference')
    const source = Fastify()
    try {
      await source.register(apiReference, { routePrefix: DOCS_PATH, configuration: CONFIGURATION })
      const [page, script] = await Promise.all([
        source.inject({ method: 'GET', url: `${DOCS_PATH}/` }),
        source.inject({ method: 'GET', url: `${DOCS_PATH}/${SCRIPT_PATH}` }),
      ])
      return {
        html: page.body,
        policy: contentSecurityPolicy(page.body),
        script: await compressAsset(script.rawPayload, 'application/javascript; charset=utf-8'),
      }
    } finally {
      await source.close()
    }
  })()
  // A failure is not remembered: the next request tries again.
  files.catch(() => (files = undefined))
  return files
}

/** The page's own policy: its script and inline start-up script (by hash), the styles the script injects, this service's API. */
function contentSecurityPolicy(html: string): string {
  const hashes = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)].map(
    ([, body]) => `'sha256-${createHash('sha256').update(body!).digest('base64')}'`,
  )
  return [
    "default-src 'none'",
    `script-src 'self' ${hashes.join(' ')}`,
    // The script adds its stylesheet and component styles as <style> elements at run time.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ')
}

/**
 * The interactive reference of the OpenAPI document. Its script is served from this service,
 * compressed and streamed; fonts, telemetry and the hosted tools are off so the page asks no
 * other host, and its content security policy allows nothing else.
 */
export async function serveApiReference(app: FastifyInstance): Promise<void> {
  const hidden = { schema: { hide: true } }
  app.get(DOCS_PATH, hidden, (_request, reply) => reply.redirect(`${DOCS_PATH}/`, 301))
  app.get(`${DOCS_PATH}/`, hidden, async (_request, reply) => {
    const { html, policy } = await referenceFiles()
    return reply.type('text/html; charset=utf-8').header('content-security-policy', policy).send(html)
  })
  app.get(`${DOCS_PATH}/${SCRIPT_PATH}`, hidden, async (request, reply) => sendAsset(request, reply, (await referenceFiles()).script))
}

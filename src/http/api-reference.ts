import { createHash } from 'node:crypto'
import apiReference from '@scalar/fastify-api-reference'
import Fastify, { type FastifyInstance } from 'fastify'
import { compressAsset, sendAsset, type CompressedAsset } from './compressed-asset.ts'
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

/**
 * The package keeps its 4.3 MB script as a string and sends it as such, which encodes a copy
 * for every reader. It is fetched once from the package's own route, compressed once, and
 * shared by every answer of the process.
 */
let script: Promise<CompressedAsset> | undefined
function scalarScript(): Promise<CompressedAsset> {
  script ??= (async () => {
    const source = Fastify()
    try {
      await source.register(apiReference, { routePrefix: DOCS_PATH, configuration: CONFIGURATION })
      const res = await source.inject({ method: 'GET', url: `${DOCS_PATH}/${SCRIPT_PATH}` })
      return await compressAsset(res.rawPayload, 'application/javascript; charset=utf-8')
    } finally {
      await source.close()
    }
  })()
  // A failure is not remembered: the next request tries again.
  script.catch(() => (script = undefined))
  return script
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
  await app.register(async function docs(scope) {
    scope.addHook('onRequest', async (request, reply) => {
      if (request.routeOptions.url === `${DOCS_PATH}/${SCRIPT_PATH}`) return sendAsset(request, reply, await scalarScript())
    })
    scope.addHook('onSend', async (_request, reply, payload) => {
      if (typeof payload === 'string' && String(reply.getHeader('content-type')).startsWith('text/html')) {
        reply.header('content-security-policy', contentSecurityPolicy(payload))
      }
      return payload
    })
    await scope.register(apiReference, { routePrefix: DOCS_PATH, configuration: CONFIGURATION })
  })
}

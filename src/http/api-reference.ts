import apiReference from '@scalar/fastify-api-reference'
import type { FastifyInstance } from 'fastify'
import { OPENAPI_PATH } from './openapi.ts'

export const DOCS_PATH = '/docs'

/**
 * The interactive reference of the OpenAPI document. Its script is served from the
 * package; fonts, telemetry and the hosted tools are off so the page asks no other host.
 */
export async function serveApiReference(app: FastifyInstance): Promise<void> {
  await app.register(apiReference, {
    routePrefix: DOCS_PATH,
    configuration: {
      url: OPENAPI_PATH,
      pageTitle: 'Book catalogue API',
      withDefaultFonts: false,
      telemetry: false,
      agent: { disabled: true },
      mcp: { disabled: true },
      showDeveloperTools: 'never',
      documentDownloadType: 'json',
      defaultOpenAllTags: true,
    },
  })
}

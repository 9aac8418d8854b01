import { existsSync } from 'node:fs'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import helmet from '@fastify/helmet'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { envelope } from '../envelope.ts'

export const PAGE_PATH = '/app/'
/** Where `npm run build:web` writes the page. */
export const PAGE_ROOT = fileURLToPath(new URL('../../../web/dist/', import.meta.url))

/** Fingerprinted names (`main-3FQ2NKRZ.js`) never change content: browsers may keep them for a year. */
const FINGERPRINTED = /-[A-Z0-9]{8}\.[a-z0-9]+(?:\.(?:br|gz))?$/
const IMMUTABLE = 'public, max-age=31536000, immutable'
/** The HTML names the current assets, so browsers ask again every time it is needed. */
const REVALIDATE = 'no-cache'

/**
 * The page runs only what this service sends: no inline script or style, no other host,
 * no framing. Scoped to the page's routes; the JSON interface keeps its own headers.
 */
const CONTENT_SECURITY_POLICY = {
  useDefaults: false,
  directives: {
    defaultSrc: ["'self'"],
    baseUri: ["'none'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
    objectSrc: ["'none'"],
  },
}

const NOT_FOUND_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Not found</title></head>
<body><h1>Not found</h1><p>Nothing lives at this address. <a href="${PAGE_PATH}">Open the catalogue</a>.</p></body></html>
`

const NOT_BUILT_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Page not built</title></head>
<body><h1>The catalogue page has not been built</h1><p>Run <code>npm run build:web</code>, then reload.</p></body></html>
`

/** A browser navigating to a page says so in `Accept`; scripts and `curl` get the envelope. */
function wantsPage(request: FastifyRequest): boolean {
  return /\btext\/html\b/.test(request.headers.accept ?? '')
}

function notFound(request: FastifyRequest, reply: FastifyReply) {
  if (wantsPage(request)) return reply.code(404).type('text/html; charset=utf-8').header('cache-control', REVALIDATE).send(NOT_FOUND_HTML)
  return reply.code(404).send(envelope(404, 'Not found', null))
}

function cacheHeaders(reply: { header(name: string, value: string): unknown }, path: string): void {
  reply.header('cache-control', FINGERPRINTED.test(basename(path)) ? IMMUTABLE : REVALIDATE)
}

/**
 * The catalogue page at `/app/`, built into `root`: precompressed files when the browser
 * takes them, fingerprinted assets cached long, the HTML revalidated. `GET /` leads there.
 */
export async function servePage(app: FastifyInstance, root: string = PAGE_ROOT): Promise<void> {
  app.get('/', { schema: { hide: true } }, (request, reply) =>
    // The router also hands this route the asterisk form (`GET *`), which names no page.
    request.url.startsWith('/') ? reply.redirect(PAGE_PATH, 302) : reply.callNotFound(),
  )
  // Relative to `/app` a browser would look for the assets one level up.
  app.get(PAGE_PATH.slice(0, -1), { schema: { hide: true } }, (_request, reply) => reply.redirect(PAGE_PATH, 301))
  const built = existsSync(join(root, 'index.html'))
  if (!built) app.log.warn(`the catalogue page is not built in ${root}: run "npm run build:web"`)

  await app.register(
    async (page) => {
      await page.register(helmet, { contentSecurityPolicy: CONTENT_SECURITY_POLICY, hsts: false })
      page.setNotFoundHandler(notFound)
      if (!built) {
        page.get('/', { schema: { hide: true }, prefixTrailingSlash: 'slash' }, (_request, reply) =>
          reply.code(503).type('text/html; charset=utf-8').header('cache-control', REVALIDATE).send(NOT_BUILT_HTML),
        )
        return
      }
      await page.register(fastifyStatic, {
        root,
        prefix: '/',
        preCompressed: true,
        cacheControl: false,
        setHeaders: cacheHeaders,
        schemaHide: true,
      })
    },
    { prefix: PAGE_PATH.slice(0, -1) },
  )
}

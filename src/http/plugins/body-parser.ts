import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import secureJson from 'secure-json-parse'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route's scope registers parsers that read the Content-Type (CSV, NDJSON…): the header
     * is then kept. Every other route ignores it.
     */
    readsContentType?: boolean
  }
}

/** The body is not UTF-8 JSON; the route answers 400 with its own message. */
export class UnparsableBodyError extends Error {
  readonly statusCode = 400
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * The service-wide rule: the Content-Type decides nothing unless a route says it reads it, and
 * a body sent to a route that takes none is read, within the body limit, and dropped.
 */
export const ignoreContentTypes = fp(
  async (app) => {
    // The framework would refuse a malformed header (empty, `;;;`, non-ASCII) with 415 before any
    // parser ran, also on routes that take no body: drop it.
    // Most requests (every read) carry none: they do not look up their route's options.
    app.addHook('onRequest', (request, _reply, done) => {
      const { headers } = request.raw
      if (headers['content-type'] !== undefined && request.routeOptions.config.readsContentType !== true) delete headers['content-type']
      done()
    })
    app.removeAllContentTypeParsers()
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(null, undefined))
  },
  { name: 'ignore-content-types', fastify: '5.x' },
)

/**
 * In the scope of `scope` only: every body is read as JSON whatever its Content-Type, so
 * clients that forget the header (`curl -d`) work. Bodies sent to its routes that take none
 * are read and dropped.
 */
export function parseBodiesAsJson(scope: FastifyInstance): void {
  scope.removeAllContentTypeParsers()
  scope.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    if (request.routeOptions.schema?.body === undefined) {
      done(null, undefined)
      return
    }
    let parsed: unknown
    try {
      parsed = secureJson.parse(utf8.decode(body as Buffer), undefined, {
        protoAction: 'remove',
        constructorAction: 'remove',
      })
    } catch {
      done(new UnparsableBodyError())
      return
    }
    done(null, parsed)
  })
}

import type { FastifyInstance } from 'fastify'
import secureJson from 'secure-json-parse'

/** The body is not UTF-8 JSON; the route answers 400 with its own message. */
export class UnparsableBodyError extends Error {
  readonly statusCode = 400
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Every body is read as JSON whatever its Content-Type, so clients that forget the
 * header (`curl -d`) work. Bodies sent to routes that take none are read and dropped.
 */
export function parseEveryBodyAsJson(app: FastifyInstance): void {
  // The header decides nothing here, and the framework would refuse a malformed one
  // (empty, `;;;`, non-ASCII) with 415 before any parser ran: drop it.
  app.addHook('onRequest', (request, _reply, done) => {
    delete request.raw.headers['content-type']
    done()
  })
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
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

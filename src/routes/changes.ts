import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import type { Catalogue } from '../books/catalogue.ts'
import { InvalidInput } from '../books/errors.ts'
import { changeAnswer } from '../http/change-answer.ts'
import { envelope } from '../http/envelope.ts'
import { Change, ChangesQuery, EXAMPLE_CHANGE, failures, media, Success } from '../schemas.ts'
import { nextPageLink, pageLimit } from './paging.ts'

export interface ChangeRouteOptions {
  catalogue: Catalogue
}

const PATH = '/books/changes'
const MESSAGE = 'Changes retrieved successfully'

/** A seq as the query or `Last-Event-ID` gives it, once its pattern has been checked: larger than any seq can be is not one. */
export function seqOf(text: string): number {
  const seq = Number(text)
  if (!Number.isSafeInteger(seq)) throw new InvalidInput()
  return seq
}

/** Whether the client asks for Server-Sent Events: `text/event-stream` among the types it accepts, not refused by `q=0`. */
export function acceptsEvents(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((range) => {
    const [type = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase())
    return type === 'text/event-stream' && !parameters.some((parameter) => /^q=0(\.0*)?$/.test(parameter))
  })
}

const SEQ = '^(?:0|[1-9][0-9]{0,15})$'

const EXAMPLE_EVENT = `id: ${EXAMPLE_CHANGE.seq}\nevent: change\ndata: ${JSON.stringify(EXAMPLE_CHANGE)}\n\n`

/**
 * The changes of every book, in the order they committed, to follow from any point: a page at a
 * time, or as a stream of Server-Sent Events (docs/api.md#following-changes).
 */
export async function changeRoutes(app: FastifyInstance, { catalogue }: ChangeRouteOptions) {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>()

  routes.get(
    PATH,
    {
      schema: {
        summary: 'The changes of every book, oldest first',
        description:
          'Every change after `since`, in the order the changes committed, with a `Link` to follow for the ones after them, always: ' +
          'following it never skips nor repeats a change. Together with the `X-Change-Seq` of an unpaged `GET /books` or an export, ' +
          'it keeps a copy of the catalogue exactly up to date.',
        operationId: 'listChanges',
        tags: ['History'],
        security: [{ token: [] }],
        querystring: ChangesQuery,
        headers: Type.Object({
          'last-event-id': Type.Optional(
            Type.String({
              pattern: SEQ,
              description:
                'With `Accept: text/event-stream`: the `id` of the last event received, to resume after it (it wins over `since`); EventSource sends it by itself when it reconnects',
              examples: ['4242'],
            }),
          ),
        }),
        response: {
          200: {
            description:
              'The changes after `since`, oldest first; with `Accept: text/event-stream`, a stream of them, as they commit, that lasts until the token expires',
            headers: {
              Link: {
                type: 'string',
                description:
                  'Always, without `Accept: text/event-stream`: where to read on, `</books/changes?limit=N&since=SEQ>; rel="next"`, SEQ being the last change given (or `since` when none was)',
              },
            },
            content: {
              'application/json': media(
                Success(200, MESSAGE, Type.Array(Change), [EXAMPLE_CHANGE], 'The changes after `since`, oldest first'),
              ),
              'text/event-stream': {
                schema: {
                  type: 'string',
                  description:
                    'Server-Sent Events, not an envelope: each change as `id: SEQ`, `event: change` and `data:` the change, then every change as it commits; ' +
                    'a comment line (`:`) at least every 15 s. The stream ends after a comment when the token or key expires or is revoked, and after a ' +
                    '`retry:` line when the instance shuts down: connect again with `Last-Event-ID` to resume. At most `MAX_STREAMS` at once (503 beyond); ' +
                    'a client that stops reading is dropped before 1 MiB waits for it.',
                },
                example: EXAMPLE_EVENT,
              },
            },
          },
          400: failures.invalidInput,
          401: failures.tokenRefused,
          500: failures.internal,
          503: failures.storeUnavailable,
        },
      },
      config: { access: 'reader', invalidInputMessage: 'Invalid input' },
    },
    async (request, reply) => {
      const limit = pageLimit(request.query)
      const { since = '0' } = request.query
      if (acceptsEvents(request.headers.accept)) {
        const resume = request.headers['last-event-id']
        return app.changeFeed.open(request, reply, resume !== undefined ? seqOf(resume) : since === 'latest' ? 'latest' : seqOf(since))
      }
      if (since === 'latest') {
        reply.header('link', nextPageLink(PATH, limit, ['since', await catalogue.newestChange()]))
        return envelope(200, MESSAGE, [])
      }
      const after = seqOf(since)
      const changes = await catalogue.changesAfter(after, limit)
      reply.header('link', nextPageLink(PATH, limit, ['since', changes.at(-1)?.seq ?? after]))
      return envelope(200, MESSAGE, changes.map(changeAnswer))
    },
  )
}

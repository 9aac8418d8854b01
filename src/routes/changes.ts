import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import type { Catalogue } from '../books/catalogue.ts'
import { InvalidInput } from '../books/errors.ts'
import { changeAnswer } from '../http/change-answer.ts'
import { envelope } from '../http/envelope.ts'
import { Change, ChangesQuery, EXAMPLE_CHANGE, failures, Success, withHeaders } from '../schemas.ts'
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

/** The changes of every book, in the order they committed, to follow from any point (docs/api.md#following-changes). */
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
        response: {
          200: withHeaders(Success(200, MESSAGE, Type.Array(Change), [EXAMPLE_CHANGE], 'The changes after `since`, oldest first'), {
            Link: 'Always: where to read on, `</books/changes?limit=N&since=SEQ>; rel="next"`, SEQ being the last change given (or `since` when none was)',
          }),
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

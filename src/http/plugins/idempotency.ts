import { createHash, type Hash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler, preHandlerHookHandler } from 'fastify'
import fastifyPlugin from 'fastify-plugin'
import type { IdempotencyKeyRepository, Repositories, StoredAnswer } from '../../store/store.ts'
import { Refusal } from '../../errors.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route honours `Idempotency-Key`: a retry with the same key answers the first answer again. */
    idempotent?: boolean
  }
  interface FastifyRequest {
    /** Present when the request carries a key that this request now holds. */
    idempotency: IdempotencyClaim | undefined
  }
}

/** A write's answer as its handler sends it. */
export interface AnswerToRecord {
  status: number
  /** Headers the handler gives the answer, by lower-case name, beside those set on the reply. */
  headers: Record<string, string>
  payload: object
}

/** A key held by the request that sent it, until its answer is recorded or it is released. */
export interface IdempotencyClaim {
  /** Records the answer with the write it answers: call it inside that write's transaction. */
  record(repositories: Repositories, answer: AnswerToRecord): Promise<void>
}

export interface IdempotencyOptions {
  keys: IdempotencyKeyRepository
  /** Milliseconds since the epoch; tests move it. */
  now?: () => number
}

/** How long a finished answer is replayed. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000
/**
 * How long a running request holds its key. A process that dies mid-request leaves its claim
 * behind; after this a retry takes the key over instead of getting 409 for a whole day.
 */
export const IDEMPOTENCY_LEASE_MS = 60_000

/** 1 to 255 visible ASCII characters. */
const VALID_KEY = /^[\x21-\x7e]{1,255}$/
/** Headers of the first answer that a replay repeats. */
const REPLAYED_HEADERS = ['location', 'etag'] as const

function isStream(body: unknown): body is AsyncIterable<Uint8Array> {
  return typeof body === 'object' && body !== null && Symbol.asyncIterator in body
}

/** The body, hashed as it passes on to whoever reads it. */
async function* hashing(body: AsyncIterable<Uint8Array>, hash: Hash): AsyncGenerator<Uint8Array> {
  for await (const chunk of body) {
    hash.update(chunk)
    yield chunk
  }
}

/**
 * A hash of the request: its query parameters (an import's options), media type and body, parsed
 * (JSON routes) or as sent (streamed routes). The parameters are sorted, so that their order
 * does not make another request; without any, the hash is what it was before they counted, so
 * that the keys recorded then still answer their retries.
 */
function fingerprintHash(request: FastifyRequest): Hash {
  const hash = createHash('sha256')
  const at = request.url.indexOf('?')
  const query = new URLSearchParams(at === -1 ? '' : request.url.slice(at + 1))
  query.sort()
  if (query.size > 0) hash.update(`?${query.toString()}\n`)
  hash.update(`${request.importContentType ?? ''}\n`)
  return hash
}

async function replay(reply: FastifyReply, answer: StoredAnswer) {
  return reply
    .code(answer.status)
    .headers({ ...answer.headers, 'idempotent-replayed': 'true' })
    .type('application/json; charset=utf-8')
    .send(answer.body)
}

/**
 * `Idempotency-Key` for the routes whose config says `idempotent: true`. The key is claimed in
 * the store before the handler runs, so that a second request with it, to any process, sees it
 * running (409); the handler records its answer in the same transaction as its write, so that
 * a retry after a cut connection finds the answer exactly when the write committed. A request
 * that ends without recording releases its key.
 */
async function idempotency(app: FastifyInstance, { keys, now = Date.now }: IdempotencyOptions) {
  app.decorateRequest('idempotency', undefined)
  const heldKeys = new WeakMap<FastifyRequest, { scope: string; key: string; recorded: boolean }>()

  // After the handler, whatever its outcome and whether or not the client is still there: a
  // request that did not commit its answer lets the key go, so that a retry can run.
  const releaseUnrecorded: onSendHookHandler = (request, reply, payload, done) => {
    const held = heldKeys.get(request)
    if (held === undefined) {
      done(null, payload)
      return
    }
    heldKeys.delete(request)
    if (held.recorded && reply.statusCode < 300) {
      done(null, payload)
      return
    }
    keys
      .release(held.scope, held.key)
      .catch((err: unknown) => request.log.warn({ err }, 'idempotency key not released'))
      .then(() => done(null, payload), done)
  }

  // Only the routes that honour keys get the hooks, each with its own pattern bound in. A request
  // without a key goes on at once; one with a key is held until its claim is settled, as an
  // async hook would be (Fastify waits for a promise that a hook returns instead of calling done).
  app.addHook('onRoute', (route) => {
    if (route.config?.idempotent !== true) return
    const scope = `${[route.method].flat().join(',')} ${route.url}`
    const claimKey: preHandlerHookHandler = (request, reply, done) => {
      const header = request.headers['idempotency-key']
      if (header === undefined) {
        done()
        return
      }
      return holdKey(request, reply, scope, header) as unknown as undefined
    }
    route.preHandler = [...[route.preHandler ?? []].flat(), claimKey]
    route.onSend = [...[route.onSend ?? []].flat(), releaseUnrecorded]
  })

  async function holdKey(request: FastifyRequest, reply: FastifyReply, scope: string, header: string | string[]) {
    if (typeof header !== 'string' || !VALID_KEY.test(header)) throw new Refusal(400, 'Invalid input')
    const at = now()
    const claim = await keys.claim(scope, header, at, at + IDEMPOTENCY_LEASE_MS, at - IDEMPOTENCY_TTL_MS)
    if (claim.state === 'running') throw new Refusal(409, 'Request with this idempotency key is in progress')

    const hash = fingerprintHash(request)
    if (claim.state === 'done') {
      if (isStream(request.body)) {
        // Read only to compare, and within the route's limit like any body it takes.
        let total = 0
        for await (const chunk of request.body) {
          total += chunk.byteLength
          if (total > request.routeOptions.bodyLimit) throw new Refusal(413, 'Payload too large', { connection: 'close' })
          hash.update(chunk)
        }
      } else {
        hash.update(JSON.stringify(request.body ?? null))
      }
      if (hash.digest('hex') !== claim.fingerprint) throw new Refusal(422, 'Idempotency key reused with a different request')
      return replay(reply, claim.answer)
    }

    if (isStream(request.body)) request.body = hashing(request.body, hash)
    else hash.update(JSON.stringify(request.body ?? null))
    const held = { scope, key: header, recorded: false }
    heldKeys.set(request, held)
    request.idempotency = {
      async record(repositories, { status, headers: given, payload }) {
        const headers = Object.fromEntries(
          REPLAYED_HEADERS.flatMap((name) => {
            const value = given[name] ?? reply.getHeader(name)
            return value === undefined ? [] : [[name, String(value)]]
          }),
        )
        // Written by the route's schema for that status, as the answer itself is: a replay repeats its bytes.
        const body = reply.serializeInput({ ...payload }, String(status)) as string
        await repositories.idempotencyKeys.complete(scope, header, hash.digest('hex'), { status, headers, body })
        held.recorded = true
      },
    }
  }
}

export const idempotencyPlugin = fastifyPlugin(idempotency, { name: 'idempotency', fastify: '5.x', dependencies: ['error-envelope'] })

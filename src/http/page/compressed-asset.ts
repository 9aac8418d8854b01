import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'
import type { FastifyReply, FastifyRequest } from 'fastify'

/** Bytes handed to a socket at a time: a slow reader holds at most a few of these, all views of one shared buffer. */
const SLICE_BYTES = 64 * 1024

type Encoding = 'br' | 'gzip' | 'identity'

export interface CompressedAsset {
  contentType: string
  etag: string
  bodies: Record<Encoding, Buffer>
}

/**
 * Compresses `content` once, off the main thread, into the encodings browsers accept. Every
 * answer then streams slices of these shared buffers: nothing is copied or encoded per request.
 */
export async function compressAsset(content: Buffer, contentType: string): Promise<CompressedAsset> {
  const [br, gz] = await Promise.all([
    promisify(brotliCompress)(content, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 9,
        [constants.BROTLI_PARAM_SIZE_HINT]: content.length,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      },
    }),
    promisify(gzip)(content, { level: 9 }),
  ])
  const etag = `"${createHash('sha256').update(content).digest('base64url').slice(0, 27)}"`
  return { contentType, etag, bodies: { br, gzip: gz, identity: content } }
}

/** The best encoding the client accepts; `q=0` refuses one. */
function chooseEncoding(acceptEncoding: string | undefined): Encoding {
  const accepted = new Set<string>()
  for (const item of (acceptEncoding ?? '').split(',')) {
    const [name = '', ...params] = item.trim().toLowerCase().split(';')
    const refused = params.some((param) => /^\s*q\s*=\s*0(\.0*)?\s*$/.test(param))
    if (!refused) accepted.add(name.trim())
  }
  if (accepted.has('br')) return 'br'
  if (accepted.has('gzip')) return 'gzip'
  return 'identity'
}

function* slices(body: Buffer): Generator<Buffer> {
  for (let at = 0; at < body.length; at += SLICE_BYTES) yield body.subarray(at, at + SLICE_BYTES)
}

/**
 * Answers with the asset in the best encoding the client accepts, streamed with backpressure:
 * a reader that stops reading stops the stream, and the connection timeout then closes it.
 */
export function sendAsset(request: FastifyRequest, reply: FastifyReply, asset: CompressedAsset): FastifyReply {
  reply.header('vary', 'accept-encoding').header('etag', asset.etag).header('cache-control', 'public, max-age=3600, must-revalidate')
  if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send()
  const encoding = chooseEncoding(request.headers['accept-encoding'])
  const body = asset.bodies[encoding]
  if (encoding !== 'identity') reply.header('content-encoding', encoding)
  reply.type(asset.contentType).header('content-length', body.length)
  if (request.method === 'HEAD') return reply.send()
  return reply.send(Readable.from(slices(body), { objectMode: false, highWaterMark: SLICE_BYTES }))
}

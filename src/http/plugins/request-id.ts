import { randomFillSync } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

export const REQUEST_ID_HEADER = 'x-request-id'
/** Long enough for a UUID or a trace id; short and plain enough to be safe in a log line. */
const ACCEPTED_ID = /^[A-Za-z0-9._:-]{1,128}$/

const UUID_LENGTH = 36
const BATCH = 256
const HEX = Buffer.from('0123456789abcdef', 'latin1')
const random = Buffer.alloc(16 * BATCH)
const text = Buffer.alloc(UUID_LENGTH * BATCH)
let uuids = ''
let next = BATCH

/**
 * Random (version 4) UUIDs written a batch at a time into one string, each handed out as a slice
 * of it: `randomUUID()` joins each one from 20 pieces, about 600 bytes of strings a request.
 */
function freshUuid(): string {
  if (next === BATCH) {
    randomFillSync(random)
    for (let i = 0; i < BATCH; i++) {
      const bytes = random.subarray(16 * i, 16 * i + 16)
      bytes[6] = (bytes[6]! & 0x0f) | 0x40
      bytes[8] = (bytes[8]! & 0x3f) | 0x80
      let at = UUID_LENGTH * i
      for (let b = 0; b < 16; b++) {
        if (b === 4 || b === 6 || b === 8 || b === 10) text[at++] = 0x2d
        text[at++] = HEX[bytes[b]! >> 4]!
        text[at++] = HEX[bytes[b]! & 0x0f]!
      }
    }
    uuids = text.toString('latin1')
    next = 0
  }
  const start = UUID_LENGTH * next++
  return uuids.slice(start, start + UUID_LENGTH)
}

/** The client's `X-Request-Id` when it is short and plain, otherwise a fresh UUID. */
export function requestIdFor(request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER]
  return typeof given === 'string' && ACCEPTED_ID.test(given) ? given : freshUuid()
}

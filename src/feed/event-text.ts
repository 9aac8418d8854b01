import type { Change } from '../books/change.ts'
import { changeAnswer } from '../http/change-answer.ts'

/**
 * One change as a Server-Sent Event: its seq as the `id`, which a client that reconnects sends
 * back as `Last-Event-ID`, and the change as the interface shows it as the `data`, on one line
 * (JSON text holds no line break).
 */
export function changeEvent(change: Change): string {
  return `id: ${change.seq}\nevent: change\ndata: ${JSON.stringify(changeAnswer(change))}\n\n`
}

/** A comment: clients ignore it, while it shows them, and every proxy between, that the stream is alive. */
export const KEEP_ALIVE = Buffer.from(':\n\n')

/** How long a client waits before it connects again, once its stream has ended. */
export const RETRY_MS = 1000

/** The last words of a stream that ends for the instance's sake: reconnect after RETRY_MS, elsewhere if need be. */
export const RETRY = Buffer.from(`retry: ${RETRY_MS}\n\n`)

/** The first words of a stream: where it starts, and, as a comment, for people only. */
export function opening(after: number): Buffer {
  return Buffer.from(`: changes after ${after}\n\n`)
}

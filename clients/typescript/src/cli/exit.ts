/** What the command says when it fails, on one line of stderr (two or more for an import's rows), and its exit code. */
import { ApiError, ConnectionError } from '../index.ts'

/** The exit codes, for scripts: docs/client.md#exit-codes. */
export const EXIT = {
  ok: 0,
  /** The service refused the request (a 4xx answer), or the command refused its input (a file that cannot be read). */
  refused: 1,
  /** The command was used wrongly: an unknown option, a missing argument, a value out of range. */
  usage: 2,
  /** The service could not be reached, or failed (a 5xx answer). */
  unavailable: 3,
  /** A failure of the command itself: a bug to report. */
  internal: 70,
  /** Ctrl-C, as shells count it: 128 + SIGINT. */
  interrupted: 130,
} as const

/** The command was used wrongly. */
export class UsageError extends Error {}

/** The command refused its input, or the service an earlier step: the message says what to do. */
export class Refusal extends Error {}

/** Ctrl-C stopped the command: the message says what was left done and undone. */
export class Interrupted extends Error {}

export interface Failure {
  code: number
  lines: string[]
}

/** How the request was signed: to say what to do when the service refuses it. */
export interface Credentials {
  kind: 'key' | 'token' | 'none'
  url: string
}

const MOST_ROWS_SHOWN = 20

function apiFailure(err: ApiError, credentials: Credentials): Failure {
  if (err.status >= 500) {
    const wait = err.retryAfter === undefined || err.retryAfter === 0 ? '' : ` (try again in ${err.retryAfter} s)`
    return { code: EXIT.unavailable, lines: [`the service failed: ${err.status} ${err.message}${wait}`] }
  }
  if (err.status === 401 && err.message !== 'Invalid credentials') {
    if (credentials.kind === 'key') return { code: EXIT.refused, lines: [`the key in BOOKS_KEY was refused: ${err.message}`] }
    const login = 'book-catalogue login --username NAME'
    if (credentials.kind === 'none')
      return { code: EXIT.refused, lines: [`not signed in to ${credentials.url}: run ${login}, or set BOOKS_KEY`] }
    return { code: EXIT.refused, lines: [`the session has expired or was revoked: run ${login} again`] }
  }
  const rows = err.rowErrors.map((row) => `  ${row.row === undefined ? 'the file' : `row ${row.row}`}: ${row.message}`)
  const more = rows.length > MOST_ROWS_SHOWN ? [`  … and ${rows.length - MOST_ROWS_SHOWN} more`] : []
  return { code: EXIT.refused, lines: [`${err.message} (${err.status})`, ...rows.slice(0, MOST_ROWS_SHOWN), ...more] }
}

/** The lines to print and the exit code for whatever a command threw. */
export function failureOf(err: unknown, credentials: Credentials): Failure {
  if (err instanceof ApiError) return apiFailure(err, credentials)
  if (err instanceof ConnectionError) return { code: EXIT.unavailable, lines: [err.message.replace(/^Cannot/, 'cannot')] }
  if (err instanceof UsageError) return { code: EXIT.usage, lines: [err.message] }
  if (err instanceof Refusal) return { code: EXIT.refused, lines: [err.message] }
  if (err instanceof Interrupted) return { code: EXIT.interrupted, lines: [err.message] }
  if (err instanceof Error && err.name === 'AbortError') return { code: EXIT.interrupted, lines: ['interrupted'] }
  const message = err instanceof Error ? err.message : String(err)
  return { code: EXIT.internal, lines: [`unexpected failure: ${message} (set BOOKS_DEBUG=1 for the details)`] }
}

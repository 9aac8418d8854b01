/** `watch`: the change feed, one line per change, as the changes commit. */
import type { Change } from '../../index.ts'
import type { Context } from '../context.ts'
import { write } from '../output.ts'

/** `42  2026-11-25 09:30:00  updated  admin  book 1: Dune, Frank Herbert, 1965`. */
export function changeLine(change: Change): string {
  const at = change.at.replace('T', ' ').replace(/\.\d+Z$|Z$/, '')
  const book = change.book === null ? '' : `: ${change.book.title}, ${change.book.author}, ${change.book.year}`
  return `${change.seq}  ${at}  ${change.kind}  ${change.actor}  book ${change.book_id}${book}\n`
}

export async function watch(context: Context, options: { since?: number; json?: boolean }): Promise<void> {
  const changes = context.signedIn().changes.follow({ since: options.since ?? 'latest', signal: context.signal })
  context.stderr.write(
    `Following the changes of ${context.url}${options.since === undefined ? ' from now on' : ` after ${options.since}`}; Ctrl-C stops\n`,
  )
  try {
    for await (const change of changes) await write(context.stdout, options.json ? `${JSON.stringify(change)}\n` : changeLine(change))
  } catch (err) {
    // Ctrl-C is how watching ends.
    if (context.signal.aborted) return
    throw err
  }
}

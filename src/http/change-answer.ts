import type { Change } from '../books/change.ts'

/** A change as the interface shows it (docs/api.md#history): snake_case members, the time in RFC 3339. */
export function changeAnswer({ seq, bookId, kind, actor, at, book }: Change) {
  return { seq, book_id: bookId, kind, actor, at: new Date(at).toISOString(), book }
}

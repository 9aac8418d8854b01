/** What a token or key may do (docs/api.md#roles): each role may do all that the ones before it may. */
import type { Role } from 'book-catalogue-client'

export const ROLES: readonly Role[] = ['reader', 'editor', 'admin']

/** Whether `role` may do what `needed` may. The service decides; the page only leaves out what would be refused. */
export function atLeast(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed)
}

/** What a caller may do, least first: each role may do everything the ones before it may. */
export const ROLES = ['reader', 'editor', 'admin'] as const
export type Role = (typeof ROLES)[number]

/** Who is asking, as the token or key it sent says. */
export interface Principal {
  /** What the history records as the one who made a change: the username, or `key:<name>` for a key. */
  actor: string
  /** The user it is, or whose key it is. */
  username: string
  role: Role
}

/** Whether `role` may use what needs `needed`. */
export function mayUse(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed)
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value)
}

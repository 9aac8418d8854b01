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
  /** For a token: what a renewed one carries on. A key has none, and is never renewed. */
  session?: Session
}

/** What a token carries from the login that gave it to every token renewed from it. */
export interface Session {
  /** When the password was given, in seconds since the epoch. */
  authTime: number
  /** The user's stamp at that time; none for the configured user, whose credentials live in the configuration. */
  stamp?: number | undefined
}

/** Whether `role` may use what needs `needed`. */
export function mayUse(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed)
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value)
}

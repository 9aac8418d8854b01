/**
 * The token, kept in `sessionStorage`: it lasts as long as the tab, survives a reload, and is
 * never shared with other tabs or written to disk for later, as `localStorage` would.
 */
import type { Role } from 'book-catalogue-client'
import { ROLES } from './roles.ts'

const KEY = 'book-catalogue.token'
/** How long before a token expires it is renewed: time for a slow answer, or two, before it lapses. */
export const RENEW_BEFORE_MS = 60_000
/** After a renewal that failed for want of a network or a store, the next try; until the token lapses. */
const RETRY_MS = 15_000

/** What the page reads from a token: whose it is, what they may do, and when it stops working. */
export interface Claims {
  sub: string
  role: Role
  /** Milliseconds since the epoch, by the service's clock. */
  exp: number
  /** How long the token was issued for, in milliseconds, when it says when it was issued. */
  lifetime: number | undefined
}

/** The claims of a token, or undefined when it cannot be read. The service checks the token; the page only reads it. */
export function readClaims(token: string): Claims | undefined {
  const payload = token.split('.')[1]
  if (payload === undefined) return undefined
  try {
    const claims = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as Record<string, unknown>
    const { sub, role, exp, iat } = claims
    if (typeof exp !== 'number') return undefined
    return {
      sub: typeof sub === 'string' ? sub : '',
      // A token without a role is the configured pair's, from before roles: it acts as admin.
      role: ROLES.includes(role as Role) ? (role as Role) : 'admin',
      exp: exp * 1000,
      lifetime: typeof iat === 'number' ? (exp - iat) * 1000 : undefined,
    }
  } catch {
    return undefined
  }
}

function storage(): Storage | undefined {
  try {
    return window.sessionStorage
  } catch {
    // Storage can be switched off; the token then lives in memory only.
    return undefined
  }
}

export interface SessionEvents {
  /** A fresh token in place of the one in use; undefined when the service refuses to renew it. */
  renew(): Promise<string | undefined>
  /**
   * The token will not be renewed: the service refused (12 hours after the password was given,
   * or the password or role changed), or it expired before a renewal got through.
   */
  lapsed(why: 'refused' | 'expired'): void
}

export interface Session {
  token: () => string | undefined
  claims: () => Claims | undefined
  /** `fresh`: the service has just issued it, so its lifetime runs from now, whatever this computer's clock says. */
  start: (token: string, fresh?: boolean) => void
  end: () => void
}

/**
 * Holds the token and renews it quietly a minute before it expires, so that nothing the person
 * is doing is interrupted; says when it lapses instead. Timings are measured on this computer's
 * clock from the moment a token arrives, so a clock that differs from the service's does not matter.
 */
export function createSession(events: SessionEvents): Session {
  let current: string | undefined
  let claims: Claims | undefined
  let renewTimer: ReturnType<typeof setTimeout> | undefined
  let expiryTimer: ReturnType<typeof setTimeout> | undefined
  /** When, on this computer's clock, the token is to be renewed and when it expires. */
  let renewAt = 0
  let expiresAt = 0
  let renewing = false

  const stopTimers = () => {
    clearTimeout(renewTimer)
    clearTimeout(expiryTimer)
    renewTimer = expiryTimer = undefined
  }

  const end = () => {
    current = claims = undefined
    stopTimers()
    storage()?.removeItem(KEY)
  }

  function renewIn(delay: number) {
    clearTimeout(renewTimer)
    renewTimer = setTimeout(() => void renew(), Math.max(0, delay))
  }

  async function renew() {
    const token = current
    if (token === undefined || renewing) return
    renewing = true
    try {
      const fresh = await events.renew()
      if (current !== token) return
      if (fresh === undefined) {
        stopTimers()
        events.lapsed('refused')
      } else {
        start(fresh, true)
      }
    } catch {
      // The network or the store: try again while the token still works.
      if (current === token && Date.now() + RETRY_MS < expiresAt) renewIn(RETRY_MS)
    } finally {
      renewing = false
    }
  }

  function start(token: string, fresh = false) {
    const read = readClaims(token)
    if (!fresh && read !== undefined && read.exp <= Date.now()) {
      end()
      return
    }
    stopTimers()
    current = token
    claims = read
    storage()?.setItem(KEY, token)
    if (read === undefined) return
    const left = fresh && read.lifetime !== undefined ? read.lifetime : read.exp - Date.now()
    // A token issued for less than two minutes is renewed half-way.
    const margin = Math.min(RENEW_BEFORE_MS, (read.lifetime ?? left) / 2)
    expiresAt = Date.now() + left
    renewAt = expiresAt - margin
    renewIn(renewAt - Date.now())
    expiryTimer = setTimeout(() => {
      if (current !== token) return
      stopTimers()
      events.lapsed('expired')
    }, left)
  }

  // A tab in the background may have its timers held back: back in front, a renewal that is due goes now.
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible' && renewTimer !== undefined && Date.now() >= renewAt) void renew()
  })

  const saved = storage()?.getItem(KEY)
  if (saved) start(saved)

  return { token: () => current, claims: () => claims, start, end }
}

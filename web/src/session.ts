/**
 * The token, kept in `sessionStorage`: it lasts as long as the tab, survives a reload, and is
 * never shared with other tabs or written to disk for later, as `localStorage` would.
 */

const KEY = 'book-catalogue.token'

/** When the token stops working, in milliseconds since the epoch; undefined when it cannot be read. */
export function expiresAt(token: string): number | undefined {
  const payload = token.split('.')[1]
  if (payload === undefined) return undefined
  try {
    const claims = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as { exp?: unknown }
    return typeof claims.exp === 'number' ? claims.exp * 1000 : undefined
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

export interface Session {
  token: () => string | undefined
  start: (token: string) => void
  end: () => void
}

/**
 * Holds the token and ends the session by itself when the token expires, calling `onExpired`,
 * so that the person is told before a request fails.
 */
export function createSession(onExpired: () => void): Session {
  let current: string | undefined
  let timer: ReturnType<typeof setTimeout> | undefined

  const end = () => {
    current = undefined
    clearTimeout(timer)
    storage()?.removeItem(KEY)
  }

  const start = (token: string) => {
    end()
    const expiry = expiresAt(token)
    if (expiry !== undefined && expiry <= Date.now()) return
    current = token
    storage()?.setItem(KEY, token)
    if (expiry !== undefined) {
      timer = setTimeout(() => {
        end()
        onExpired()
      }, expiry - Date.now())
    }
  }

  const saved = storage()?.getItem(KEY)
  if (saved) start(saved)

  return { token: () => current, start, end }
}

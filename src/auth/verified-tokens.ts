/** Far more tokens than one instance has clients at once; each is at most 8 KiB. */
const CAPACITY = 1000

/**
 * Remembers the claims of verified tokens, keyed by the token itself, until they expire, so
 * a client's repeated token costs one map lookup. Only tokens that verified are kept; a
 * refused token is checked every time. When full, the oldest entry goes first.
 */
export function rememberVerified<Claims extends { exp: number }>(
  verify: (token: string) => Claims | undefined,
  { capacity = CAPACITY, now = Date.now }: { capacity?: number; now?: () => number } = {},
): (token: string) => Claims | undefined {
  const verified = new Map<string, Claims>()
  return (token) => {
    const known = verified.get(token)
    // The same bound as the verifier's own expiry check.
    if (known !== undefined && now() <= known.exp * 1000) return known
    const claims = verify(token)
    verified.delete(token)
    if (claims === undefined) return undefined
    if (verified.size >= capacity) verified.delete(verified.keys().next().value!)
    verified.set(token, claims)
    return claims
  }
}

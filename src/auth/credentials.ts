import { hash, timingSafeEqual } from 'node:crypto'

export type CredentialCheck = (username: string, password: string) => boolean

/** Both members, in one text that no other pair gives: JSON quotes and escapes each. */
function digest(username: string, password: string): Buffer {
  return hash('sha256', JSON.stringify([username, password]), 'buffer')
}

/**
 * Compares against the one accepted pair in constant time: both members are compared at once,
 * as equal-length digests, so neither the length nor which member is wrong shows. A SHA-256 of
 * the pair, not an HMAC: for inputs this short the HMAC's key set-up is most of its cost.
 */
export function createCredentialCheck(username: string, password: string): CredentialCheck {
  const expected = digest(username, password)
  return (givenUsername, givenPassword) => timingSafeEqual(digest(givenUsername, givenPassword), expected)
}

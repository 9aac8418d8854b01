import { createHmac, createSecretKey, randomBytes, timingSafeEqual } from 'node:crypto'

export type CredentialCheck = (username: string, password: string) => boolean

/**
 * Compares against the one accepted pair in constant time: both members are always
 * compared, as equal-length digests, so neither the length nor which member is wrong shows.
 */
export function createCredentialCheck(username: string, password: string): CredentialCheck {
  // A KeyObject, prepared once: given raw bytes, createHmac prepares a key on every call,
  // which cost five times the HMAC itself.
  const key = createSecretKey(randomBytes(32))
  const digest = (text: string) => createHmac('sha256', key).update(text).digest()
  const expectedUsername = digest(username)
  const expectedPassword = digest(password)
  return (givenUsername, givenPassword) => {
    const usernameMatches = timingSafeEqual(digest(givenUsername), expectedUsername)
    const passwordMatches = timingSafeEqual(digest(givenPassword), expectedPassword)
    return usernameMatches && passwordMatches
  }
}

/**
 * Refuses secrets and passwords that anyone would guess first. These are floors against the
 * trivially weak (`admin`, `aaaa…`, `abab…`), not a measure of strength: a secret should come
 * from a random generator (`openssl rand -base64 48`).
 */

/** Bits a secret's bytes carry at least, by the spread of its byte values. */
export const MIN_SECRET_BITS = 80
export const MIN_PASSWORD_LENGTH = 12
const MIN_PASSWORD_DISTINCT_CHARACTERS = 6
/** Words that lead every list of guessed passwords; with digits and symbols stripped, a password may not be one. */
const COMMON_WORDS = new Set([
  'password',
  'passwort',
  'admin',
  'administrator',
  'letmein',
  'qwerty',
  'qwertyuiop',
  'welcome',
  'changeme',
  'secret',
  'login',
  'root',
  'iloveyou',
  'monkey',
  'dragon',
  'master',
  'books',
  'library',
  'librarian',
])

/** The Shannon entropy of the byte values times the length: 0 for one byte repeated, at most 8 bits a byte. */
function estimatedBits(text: string): number {
  const bytes = Buffer.from(text)
  const counts = new Map<number, number>()
  for (const byte of bytes) counts.set(byte, (counts.get(byte) ?? 0) + 1)
  let perByte = 0
  for (const count of counts.values()) {
    const p = count / bytes.length
    perByte -= p * Math.log2(p)
  }
  return perByte * bytes.length
}

/** `abcabcabc`: the text is a shorter piece repeated. */
function isRepetition(text: string): boolean {
  return text.length > 1 && (text + text).indexOf(text, 1) < text.length
}

/** Why `secret` is too weak to sign tokens with, or undefined when it is not. */
export function secretWeakness(secret: string): string | undefined {
  if (isRepetition(secret) || estimatedBits(secret) < MIN_SECRET_BITS) {
    return 'has too little entropy: use a random value, for example from `openssl rand -base64 48`'
  }
  return undefined
}

/** Why `password` is too weak for the one login of the service, or undefined when it is not. */
export function passwordWeakness(password: string, username: string): string | undefined {
  if ([...password].length < MIN_PASSWORD_LENGTH) return `must be at least ${MIN_PASSWORD_LENGTH} characters long`
  const lower = password.toLowerCase()
  if (lower.includes(username.toLowerCase())) return 'must not contain the username'
  if (new Set(password).size < MIN_PASSWORD_DISTINCT_CHARACTERS || isRepetition(password)) return 'is too repetitive'
  if (COMMON_WORDS.has(lower.replace(/[^\p{L}]/gu, ''))) return 'is a commonly guessed password'
  return undefined
}

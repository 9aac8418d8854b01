import { createHmac, timingSafeEqual } from 'node:crypto'
import { createSigner, createVerifier, TokenError } from 'fast-jwt'
import type { Role, Session } from './principal.ts'
import { rememberVerified } from './verified-tokens.ts'

export const TOKEN_LIFETIME_SECONDS = 15 * 60
/** Only HMAC: anything else (`none`, RS*, ES*, PS*) is refused before a key is used. */
const ACCEPTED_ALGORITHMS = ['HS256', 'HS384', 'HS512'] as const

export interface TokenClaims {
  sub?: string
  /** The role the token acts in; not checked here (see authenticate.ts). */
  role?: unknown
  /** When the password was given: renewals keep it (docs/api.md#accounts). */
  auth_time?: unknown
  /** The user's stamp: a token with another than the user's own is refused. */
  sv?: unknown
  iat?: number
  exp: number
  nbf?: number
}

export interface TokenService {
  /** A signed token for `subject`, acting in `role`, of the login `session`; throws when it cannot be signed. */
  sign(subject: string, role: Role, session: Session): string
  /** The claims of a valid token; undefined for any token that must be refused. */
  verify(token: string): TokenClaims | undefined
}

export interface TokenKeys {
  secret: string
  /** The secret before the last rotation: its tokens still verify, it never signs. */
  previousSecret?: string | undefined
}

function verifierFor(key: string) {
  return createVerifier({
    key,
    algorithms: [...ACCEPTED_ALGORITHMS],
    requiredClaims: ['exp'],
    // rememberVerified caches instead: fast-jwt's cache keys entries by a SHA-256 of the
    // token, which under load cost ten times the rest of a cached check.
    cache: false,
  })
}

/**
 * The verifier checks `exp` and `nbf` are numbers but lets `1e400` (Infinity) through as a
 * never-expiring token and leaves `iat` unchecked: every time claim must be a finite number.
 */
function checkTimeClaims(claims: TokenClaims): TokenClaims {
  for (const claim of ['exp', 'iat', 'nbf'] as const) {
    if (claim !== 'exp' && claims[claim] === undefined) continue
    if (!Number.isFinite(claims[claim])) throw new TokenError(TokenError.codes.invalidClaimType, `The ${claim} claim must be a number.`)
  }
  return claims
}

/**
 * Each part must be exactly the base64url text of its bytes. Decoders ignore the unused low
 * bits of the last character, so without this one signature would have several spellings,
 * all verifying: a token that was never issued would pass.
 */
function checkCanonical(token: string): void {
  for (const part of token.split('.')) {
    if (Buffer.from(part, 'base64url').toString('base64url') !== part) {
      throw new TokenError(TokenError.codes.malformed, 'The token is not canonical base64url.')
    }
  }
}

/** The hash of an HMAC signature, by the length of its base64url text: 32, 48 or 64 bytes. */
const HASH_BY_SIGNATURE_LENGTH = new Map([
  [43, 'sha256'],
  [64, 'sha384'],
  [86, 'sha512'],
])
/** Three parts of base64url text, as every token the verifier accepts is. */
const COMPACT = /^[\w-]+\.[\w-]+\.[\w-]+$/

/**
 * The one of `keys` whose HMAC of the first two parts of `token` its signature is, if any. Every
 * token the verifier accepts has one: the others (forged, altered, signed with a key no longer
 * configured, or no token at all) are refused at the cost of a hash, without the decoding, the
 * parsing and the errors of a full check, which cost a refusal twice a read
 * (docs/performance.md).
 */
function signingKey(keys: readonly string[], token: string): string | undefined {
  const dot = token.lastIndexOf('.')
  const hash = HASH_BY_SIGNATURE_LENGTH.get(token.length - dot - 1)
  if (hash === undefined || !COMPACT.test(token)) return undefined
  const signature = Buffer.from(token.slice(dot + 1), 'base64url')
  const signed = token.slice(0, dot)
  return keys.find((key) => timingSafeEqual(createHmac(hash, key).update(signed).digest(), signature))
}

/**
 * Runs `work` with the errors it makes left without the stack of where they were made: a refused
 * token is told only as a 401, and each of fast-jwt's errors captured its stack twice, a tenth to a
 * fifth of the cost of refusing a token (docs/performance.md).
 */
function withoutStacks<T>(work: () => T): T {
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    return work()
  } finally {
    Error.stackTraceLimit = limit
  }
}

export function createTokenService({ secret, previousSecret }: TokenKeys): TokenService {
  const signer = createSigner({ key: secret, algorithm: 'HS256', expiresIn: TOKEN_LIFETIME_SECONDS * 1000 })
  const verifiers = new Map([[secret, verifierFor(secret)]])
  if (previousSecret !== undefined) verifiers.set(previousSecret, verifierFor(previousSecret))
  const keys = [...verifiers.keys()]

  return {
    sign: (subject, role, { authTime, stamp }) =>
      signer({ sub: subject, role, auth_time: authTime, ...(stamp !== undefined && { sv: stamp }) }),
    verify: rememberVerified((token) => {
      const key = signingKey(keys, token)
      if (key === undefined) return undefined
      // Signed with one of the keys: the full check of its spelling, header and claims.
      const verifier = verifiers.get(key)!
      return withoutStacks(() => {
        try {
          checkCanonical(token)
          return checkTimeClaims(verifier(token) as TokenClaims)
        } catch {
          return undefined
        }
      })
    }),
  }
}

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
  /** The claims of a valid token; throws for any token that must be refused. */
  verify(token: string): TokenClaims
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
  const current = verifierFor(secret)
  const previous = previousSecret === undefined ? undefined : verifierFor(previousSecret)

  return {
    sign: (subject, role, { authTime, stamp }) =>
      signer({ sub: subject, role, auth_time: authTime, ...(stamp !== undefined && { sv: stamp }) }),
    verify: rememberVerified((token) =>
      withoutStacks(() => {
        checkCanonical(token)
        try {
          return checkTimeClaims(current(token) as TokenClaims)
        } catch (err) {
          if (previous && err instanceof TokenError && err.code === TokenError.codes.invalidSignature) {
            return checkTimeClaims(previous(token) as TokenClaims)
          }
          throw err
        }
      }),
    ),
  }
}

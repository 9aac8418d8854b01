import { Refusal } from '../errors.ts'

/** A protected route was asked without a token or key. */
export class TokenRequired extends Refusal {
  constructor() {
    super(401, 'Authorization token required')
  }
}

/** The token or key is malformed, expired, revoked, or signed with another secret. */
export class InvalidToken extends Refusal {
  constructor(headers: Record<string, string> = {}) {
    super(401, 'Invalid token', headers)
  }
}

/** The username or the password is wrong. */
export class InvalidCredentials extends Refusal {
  constructor() {
    super(401, 'Invalid credentials')
  }
}

/** The caller is known, but its role may not do this. */
export class Forbidden extends Refusal {
  constructor() {
    super(403, 'Forbidden')
  }
}

/** Too many failed logins from one address: try again after `retryAfterSeconds`. */
export class TooManyAttempts extends Refusal {
  readonly retryAfterSeconds: number

  constructor(retryAfterSeconds: number) {
    super(429, 'Too many requests', { 'retry-after': String(retryAfterSeconds) })
    this.retryAfterSeconds = retryAfterSeconds
  }
}

/** More logins at once than the service hashes passwords for: try again in a second. */
export class Busy extends Refusal {
  constructor() {
    super(503, 'Service unavailable', { 'retry-after': '1' })
  }
}

import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { availableParallelism } from 'node:os'
import { parseEnv } from 'node:util'
import { DEFAULT_HASH_COST, HASH_COSTS } from './auth/passwords.ts'
import { passwordWeakness, secretWeakness } from './auth/weak-settings.ts'
import { STORE_DEADLINE_MS } from './store/store.ts'

export type Env = Record<string, string | undefined>

export interface Config {
  port: number
  /** The listening address: `127.0.0.1` by default, every interface (`0.0.0.0`) in production. */
  host: string
  dbUrl: string
  /** Most connections one instance holds to PostgreSQL, all its workers together. */
  dbPoolSize: number
  /** Longest wait to open one new PostgreSQL connection. */
  dbConnectTimeoutMs: number
  /** Longest a store operation may take, waiting for a connection included, before the request answers 503. */
  dbQueryTimeoutMs: number
  secret: string
  previousSecret: string | undefined
  username: string
  password: string
  logLevel: string
  production: boolean
  /** Whom to believe about the client address in `X-Forwarded-For`: Fastify's `trustProxy`. */
  trustProxy: boolean | string[]
  /** The bearer token `GET /metrics` requires; without it, only clients on this machine may read the metrics. */
  metricsToken?: string | undefined
  /** Origins whose pages may call the service from a browser; empty turns CORS off. */
  corsOrigins: string[]
  /** `normal` survives a crash of the process; `full` also survives a power loss. */
  sqliteSynchronous: 'normal' | 'full'
  limits: ConnectionLimits
  /** scrypt's N of new password hashes is 2 to this power. */
  passwordHashCost: number
  /** Days a deleted book stays in the trash before it is purged. */
  trashRetentionDays: number
  /** Change streams (`GET /books/changes` as Server-Sent Events) open at once on the instance, all its workers together; more get 503. */
  maxStreams: number
  /** Worker processes sharing the port; 1 runs the service in this process. */
  workers: number
  /**
   * How long an instance keeps serving after a shutdown signal, not ready and closing each
   * connection after its answer, so that proxies stop sending to it before it stops listening.
   */
  shutdownDelayMs: number
  /** How long requests in flight may take to finish once the instance has stopped listening. */
  shutdownGraceMs: number
  /** Said once at start-up: what was generated because it was not configured. */
  notices: string[]
}

/** What a client may hold of the server: slow or idle clients are cut at these bounds. */
export interface ConnectionLimits {
  /** The whole request, headers and body, must arrive within this. */
  requestTimeoutMs: number
  /** The request line and headers must arrive within this. */
  headersTimeoutMs: number
  /** An idle kept-alive connection is closed after this. */
  keepAliveTimeoutMs: number
  /** Open connections beyond this are closed as they arrive. */
  maxConnections: number
  /** Connections one client address may hold at once; more are closed as they arrive. */
  maxConnectionsPerAddress: number
  /** Once `bodyRateGraceMs` have passed, a body arriving slower than this on average gets 408; 0 turns it off. */
  minBodyBytesPerSecond: number
  bodyRateGraceMs: number
}

export const DEFAULT_LIMITS: ConnectionLimits = {
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1024,
  maxConnectionsPerAddress: 64,
  minBodyBytesPerSecond: 500,
  bodyRateGraceMs: 5_000,
}

/** A configuration that cannot run; the message names the variable. */
export class ConfigError extends Error {}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
// RFC 7518 §3.2: an HMAC key must be at least as long as the hash output.
const MIN_SECRET_BYTES = 32
export const DB_URL_FORMS = 'sqlite:PATH, sqlite::memory:, postgres://… or postgresql://…'

/** The process environment over the values of `.env` in `dir`, when that file exists. */
export function readEnv(dir: string = process.cwd(), env: Env = process.env): Env {
  let fromFile: Env = {}
  try {
    fromFile = parseEnv(readFileSync(`${dir}/.env`, 'utf8'))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  return { ...fromFile, ...env }
}

function value(env: Env, name: string): string | undefined {
  const raw = env[name]
  return raw === undefined || raw === '' ? undefined : raw
}

/** Whether `host` is an address that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const plain = host.replace(/^::ffff:/i, '')
  return plain === 'localhost' || plain === '::1' || (isIP(plain) === 4 && plain.startsWith('127.'))
}

function parsePort(raw: string | undefined): number {
  if (raw === undefined) return 8080
  if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) {
    throw new ConfigError(`PORT must be a number from 0 to 65535, got "${raw}"`)
  }
  return Number(raw)
}

const MAX_WORKERS = 256
const MAX_GRACE_MS = 10 * 60 * 1000
/**
 * In production, long enough for a proxy that checks `/readyz` every 250 ms to see the instance
 * fail a few checks in a row and stop sending to it; elsewhere Ctrl-C stops at once.
 */
export const PRODUCTION_SHUTDOWN_DELAY_MS = 2000

function parseWorkers(raw: string | undefined): number {
  if (raw === undefined) return 1
  if (raw === 'auto') return availableParallelism()
  if (!/^\d{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_WORKERS) {
    throw new ConfigError(`WORKERS must be "auto" or a number from 1 to ${MAX_WORKERS}, got "${raw}"`)
  }
  return Number(raw)
}

/** A whole number from `min` to `max`, or `fallback` when unset. */
function parseBoundedInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = value(env, name)
  if (raw === undefined) return fallback
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`)
  }
  return Number(raw)
}

function parseLimits(env: Env): ConnectionLimits {
  const hour = 3_600_000
  const limits = {
    requestTimeoutMs: parseBoundedInt(env, 'REQUEST_TIMEOUT_MS', DEFAULT_LIMITS.requestTimeoutMs, 100, hour),
    headersTimeoutMs: parseBoundedInt(env, 'HEADERS_TIMEOUT_MS', DEFAULT_LIMITS.headersTimeoutMs, 100, hour),
    keepAliveTimeoutMs: parseBoundedInt(env, 'KEEP_ALIVE_TIMEOUT_MS', DEFAULT_LIMITS.keepAliveTimeoutMs, 100, hour),
    maxConnections: parseBoundedInt(env, 'MAX_CONNECTIONS', DEFAULT_LIMITS.maxConnections, 1, 1_000_000),
    maxConnectionsPerAddress: parseBoundedInt(env, 'MAX_CONNECTIONS_PER_ADDRESS', DEFAULT_LIMITS.maxConnectionsPerAddress, 1, 1_000_000),
    minBodyBytesPerSecond: parseBoundedInt(env, 'MIN_BODY_RATE', DEFAULT_LIMITS.minBodyBytesPerSecond, 0, 1_000_000_000),
    bodyRateGraceMs: DEFAULT_LIMITS.bodyRateGraceMs,
  }
  // Node refuses a headers timeout longer than the request timeout.
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new ConfigError('HEADERS_TIMEOUT_MS must not be longer than REQUEST_TIMEOUT_MS')
  }
  return limits
}

const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal'])

/**
 * `false` (the default: the socket's peer is the client), `true` (believe any peer), or a
 * comma-separated list of proxy addresses, CIDR ranges or the names loopback, linklocal and
 * uniquelocal: only such peers are believed about the address in `X-Forwarded-For`.
 */
function parseTrustProxy(raw: string | undefined, production: boolean, notices: string[]): boolean | string[] {
  if (raw === undefined || raw === 'false') return false
  const entries = raw.split(',').map((entry) => entry.trim())
  // A /0 range trusts every peer, just as `true` does.
  if (raw === 'true' || entries.some((entry) => /\/0+$/.test(entry))) {
    const reason = 'TRUST_PROXY=true (or a /0 range) believes any client about its own address, so anyone can get around the login limit'
    if (production) throw new ConfigError(`${reason}: name the proxy addresses or ranges instead`)
    notices.push(`${reason}; name the proxy addresses or ranges before going to production`)
    return true
  }
  const valid = (entry: string) => {
    if (PROXY_RANGE_NAMES.has(entry)) return true
    const [address = '', prefix, ...rest] = entry.split('/')
    const family = isIP(address)
    if (family === 0 || rest.length > 0) return false
    return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128))
  }
  if (!entries.every(valid)) {
    throw new ConfigError(`TRUST_PROXY must be true, false or a comma-separated list of proxy addresses or CIDR ranges, got "${raw}"`)
  }
  return entries
}

/** Comma-separated origins such as `https://books.example.org`; each must be exactly an origin. */
function parseCorsOrigins(raw: string | undefined): string[] {
  if (raw === undefined) return []
  return raw.split(',').map((entry) => {
    const origin = entry.trim()
    let parsed: URL | undefined
    try {
      parsed = new URL(origin)
    } catch {
      parsed = undefined
    }
    if (parsed === undefined || !/^https?:$/.test(parsed.protocol) || parsed.origin !== origin) {
      throw new ConfigError(`CORS_ORIGINS must list origins such as https://books.example.org, got "${origin}"`)
    }
    return origin
  })
}

function parseSynchronous(raw: string | undefined): 'normal' | 'full' {
  if (raw === undefined) return 'normal'
  const mode = raw.toLowerCase()
  if (mode !== 'normal' && mode !== 'full') {
    throw new ConfigError(`SQLITE_SYNCHRONOUS must be normal or full, got "${raw}"`)
  }
  return mode
}

export function isSupportedDbUrl(url: string): boolean {
  return /^(sqlite:|postgres:\/\/|postgresql:\/\/)/.test(url)
}

/** Where the store is: `DB_URL`, or the SQLite file `./data/books.db`; refused in any other form. */
export function readDbUrl(env: Env): string {
  const dbUrl = value(env, 'DB_URL') ?? 'sqlite:./data/books.db'
  if (!isSupportedDbUrl(dbUrl)) throw new ConfigError(`DB_URL must be one of ${DB_URL_FORMS}`)
  return dbUrl
}

export function loadConfig(env: Env): Config {
  // `Production` in a deployment file must not quietly mean development.
  const production = env.NODE_ENV?.trim().toLowerCase() === 'production'
  const notices: string[] = []

  const dbUrl = readDbUrl(env)

  const logLevel = value(env, 'LOG_LEVEL') ?? 'info'
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`)
  }

  let secret = value(env, 'SECRET_TOKEN')
  const previousSecret = value(env, 'SECRET_TOKEN_PREVIOUS')
  let username = value(env, 'AUTH_USERNAME')
  let password = value(env, 'AUTH_PASSWORD')

  if (production) {
    for (const [name, given] of [
      ['SECRET_TOKEN', secret],
      ['AUTH_USERNAME', username],
      ['AUTH_PASSWORD', password],
    ]) {
      if (given === undefined) throw new ConfigError(`${name} must be set when NODE_ENV=production`)
    }
    for (const [name, given] of [
      ['SECRET_TOKEN', secret],
      ['SECRET_TOKEN_PREVIOUS', previousSecret],
    ]) {
      if (given !== undefined && Buffer.byteLength(given) < MIN_SECRET_BYTES) {
        throw new ConfigError(`${name} must be at least ${MIN_SECRET_BYTES} bytes long when NODE_ENV=production`)
      }
      const weakness = given === undefined ? undefined : secretWeakness(given)
      if (weakness !== undefined) throw new ConfigError(`${name} ${weakness}`)
    }
    const weakPassword = passwordWeakness(password!, username!)
    if (weakPassword !== undefined) throw new ConfigError(`AUTH_PASSWORD ${weakPassword} when NODE_ENV=production`)
  }

  if (secret === undefined) {
    secret = randomBytes(MIN_SECRET_BYTES).toString('base64url')
    notices.push('SECRET_TOKEN is not set: using a random secret, so tokens will not survive a restart')
  }
  if (username === undefined) {
    username = 'admin'
    if (password !== undefined) notices.push('AUTH_USERNAME is not set: the username is "admin"')
  }
  const generatedPassword = password === undefined
  if (password === undefined) {
    password = randomBytes(12).toString('base64url')
    notices.push(`AUTH_PASSWORD is not set: log in as "${username}" with the generated password "${password}"`)
  }

  // Production runs behind a proxy or in a container, whose port mapping reaches only an address
  // of every interface; elsewhere a first run must not open a generated password to the network.
  const host = value(env, 'HOST') ?? (production ? '0.0.0.0' : '127.0.0.1')
  if (generatedPassword && !isLoopbackHost(host)) {
    notices.push(`HOST=${host} lets other machines connect while the password is a generated one: set AUTH_PASSWORD, or HOST=127.0.0.1`)
  }

  let workers = parseWorkers(value(env, 'WORKERS'))
  if (workers > 1 && dbUrl === 'sqlite::memory:') {
    throw new ConfigError('WORKERS above 1 needs a shared store: sqlite::memory: would give each worker its own')
  }
  const dbPoolSize = parseBoundedInt(env, 'DB_POOL_SIZE', 10, 1, 1000)
  // The workers share the instance's connections, and each needs one at least.
  if (dbUrl.startsWith('postgres') && workers > dbPoolSize) {
    if (value(env, 'WORKERS') !== 'auto') {
      throw new ConfigError(
        `WORKERS=${workers} needs DB_POOL_SIZE=${workers} at least: the workers share its connections, one at least each`,
      )
    }
    notices.push(`WORKERS=auto: ${workers} CPUs, but DB_POOL_SIZE=${dbPoolSize} connections to share, so ${dbPoolSize} workers`)
    workers = dbPoolSize
  }

  return {
    port: parsePort(value(env, 'PORT')),
    host,
    dbUrl,
    dbPoolSize,
    dbConnectTimeoutMs: parseBoundedInt(env, 'DB_CONNECT_TIMEOUT_MS', 2000, 1, 600_000),
    // A second below the deadline leaves the rest of the request time to answer.
    dbQueryTimeoutMs: parseBoundedInt(env, 'DB_QUERY_TIMEOUT_MS', STORE_DEADLINE_MS - 1000, 1, 600_000),
    secret,
    previousSecret,
    username,
    password,
    logLevel,
    production,
    trustProxy: parseTrustProxy(value(env, 'TRUST_PROXY'), production, notices),
    metricsToken: value(env, 'METRICS_TOKEN'),
    corsOrigins: parseCorsOrigins(value(env, 'CORS_ORIGINS')),
    sqliteSynchronous: parseSynchronous(value(env, 'SQLITE_SYNCHRONOUS')),
    limits: parseLimits(env),
    // Production may make hashes stronger than the default, never weaker.
    passwordHashCost: parseBoundedInt(
      env,
      'PASSWORD_HASH_COST',
      DEFAULT_HASH_COST,
      production ? DEFAULT_HASH_COST : HASH_COSTS.min,
      HASH_COSTS.max,
    ),
    trashRetentionDays: parseBoundedInt(env, 'TRASH_RETENTION_DAYS', 30, 0, 36_500),
    maxStreams: parseBoundedInt(env, 'MAX_STREAMS', 1000, 1, 1_000_000),
    workers,
    shutdownDelayMs: parseBoundedInt(env, 'SHUTDOWN_DELAY_MS', production ? PRODUCTION_SHUTDOWN_DELAY_MS : 0, 0, MAX_GRACE_MS),
    shutdownGraceMs: parseBoundedInt(env, 'SHUTDOWN_GRACE_MS', 10_000, 0, MAX_GRACE_MS),
    notices,
  }
}

import type { Server, ServerOptions } from 'node:http'
import type { ConnectionLimits } from '../../config.ts'

/**
 * Server options that stop slow or idle clients from holding sockets: a client must send its
 * headers within `headersTimeoutMs`; an idle socket, including one that stops reading a response,
 * is closed after `requestTimeoutMs`. Node's own request timeout is off: it would bound an upload
 * as it bounds a small body, and the bodies have limits of their own (see request-bodies.ts).
 */
export function connectionOptions(limits: ConnectionLimits): {
  requestTimeout: number
  connectionTimeout: number
  keepAliveTimeout: number
  http: ServerOptions
} {
  return {
    requestTimeout: 0,
    connectionTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      // Node enforces both timeouts only when it sweeps its connections (every 30 s by
      // default), so a short timeout needs a sweep often enough to keep it.
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
    },
  }
}

/** Connections beyond the cap are closed on arrival, so a flood cannot exhaust descriptors. */
export function capConnections(server: Server, limits: ConnectionLimits): void {
  server.maxConnections = limits.maxConnections
}

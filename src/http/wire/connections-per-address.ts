import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import proxyAddr from '@fastify/proxy-addr'
import { clientKey } from '../../auth/login-limiter.ts'
import type { ConnectionLimits } from '../../config.ts'

/**
 * Closes on arrival the connections of an address that already holds `maxConnectionsPerAddress`,
 * so one client cannot take the slots of `maxConnections` that everyone shares. A whole IPv6 /64
 * counts as one address, as for the login limit. Proxies that `trustProxy` names are not capped:
 * every client behind them arrives from their address.
 */
export function capConnectionsPerAddress(server: Server, limits: ConnectionLimits, trustProxy: boolean | string[]): void {
  if (trustProxy === true) return
  const trusted = trustProxy === false ? () => false : proxyAddr.compile(trustProxy)
  const open = new Map<string, number>()
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress
    if (address === undefined || trusted(address, 0)) return
    const key = clientKey(address)
    const count = (open.get(key) ?? 0) + 1
    if (count > limits.maxConnectionsPerAddress) {
      socket.destroy()
      return
    }
    open.set(key, count)
    socket.once('close', () => {
      const left = open.get(key)! - 1
      if (left === 0) open.delete(key)
      else open.set(key, left)
    })
  })
}

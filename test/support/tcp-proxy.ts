import { once } from 'node:events'
import { createConnection, createServer, type Server, type Socket } from 'node:net'

/**
 * A TCP proxy that stands between the service and PostgreSQL and can fail like a network or a
 * server does: `down` cuts every connection and refuses new ones; `stall` accepts and keeps
 * connections but forwards nothing, in either direction; `restore` forwards again; `thaw`
 * forwards new connections only, and keeps the stalled ones open and silent.
 */
export interface TcpProxy {
  port: number
  /** How many clients' connections are open now. */
  openConnections(): number
  /** Resolves when the next client connects to the proxy. */
  nextConnection(): Promise<void>
  down(): Promise<void>
  stall(): void
  restore(): Promise<void>
  thaw(): void
  close(): Promise<void>
}

/**
 * Listens on a port below the system's range of ephemeral ports (32768 and up on Linux): while the
 * proxy is down, no other process's connection or `listen(0)` is given that port, so `restore`
 * can listen there again and the service meanwhile finds it refused.
 */
async function listenBelowEphemeralPorts(server: Server): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000)
    try {
      server.listen(port, '127.0.0.1')
      await once(server, 'listening')
      return port
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err
    }
  }
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let stalled = false
  const sockets = new Set<Socket>()
  const clients = new Set<Socket>()
  let connected: Array<() => void> = []
  const track = (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    // Errors end the pair through 'close'; the proxy itself must never fail.
    socket.on('error', () => {})
  }

  const forward = (client: Socket) => {
    for (const wake of connected) wake()
    connected = []
    track(client)
    clients.add(client)
    client.on('close', () => clients.delete(client))
    if (stalled) return
    const upstream = createConnection(target)
    track(upstream)
    client.pipe(upstream).on('close', () => client.destroy())
    upstream.pipe(client).on('close', () => upstream.destroy())
  }

  let server: Server = createServer(forward)
  const port = await listenBelowEphemeralPorts(server)

  const cutAll = () => {
    for (const socket of sockets) socket.destroy()
  }
  // A closing server waits for its connections to end, so they are cut once it stops accepting.
  const shutDown = async () => {
    if (!server.listening) return cutAll()
    const closed = once(server, 'close')
    server.close()
    cutAll()
    await closed
  }

  return {
    port,
    openConnections: () => clients.size,
    nextConnection: () => new Promise((resolve) => connected.push(resolve)),
    down: shutDown,
    stall() {
      stalled = true
      for (const socket of sockets) {
        socket.unpipe()
        socket.pause()
      }
    },
    async restore() {
      // Connections frozen during a stall are past saving: their client has given up on them.
      cutAll()
      stalled = false
      if (!server.listening) {
        server = createServer(forward)
        server.listen(port, '127.0.0.1')
        await once(server, 'listening')
      }
    },
    thaw() {
      stalled = false
    },
    close: shutDown,
  }
}

import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'

/** Watches the connections `app` accepts: `reach(n)` resolves once exactly `n` are open. */
export function watchConnections(app: FastifyInstance) {
  const open = new Set<Socket>()
  let waiting: { count: number; resolve: () => void } | undefined
  const check = () => {
    if (waiting?.count !== open.size) return
    waiting.resolve()
    waiting = undefined
  }
  app.server.on('connection', (socket: Socket) => {
    open.add(socket)
    socket.once('close', () => {
      open.delete(socket)
      check()
    })
    check()
  })
  return {
    reach: (count: number) =>
      new Promise<void>((resolve) => {
        waiting = { count, resolve }
        check()
      }),
  }
}

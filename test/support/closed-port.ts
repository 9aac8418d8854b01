import { connect } from 'node:net'

/** Whether a connection to `port` of the loopback address is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'))
  })
}

/**
 * A port of the loopback address that nothing listens on, and nothing will: one below 1024,
 * searched from the top, clear of the low ports `fetch` refuses to reach. A port the system handed
 * out and took back could be handed at once to a service another test starts with PORT=0, which
 * would then answer in its place.
 */
export async function closedPort(): Promise<number> {
  for (let port = 1023; port > 0; port--) if (await refused(port)) return port
  throw new Error('every port below 1024 of 127.0.0.1 is taken')
}

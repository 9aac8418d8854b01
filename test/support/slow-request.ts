import { connect, type Socket } from 'node:net'
import { TEST_PASSWORD, TEST_USERNAME } from '../helpers.ts'

/** Everything received on `socket` until `done` says it is enough, or until it closes. */
export function receive(socket: Socket, done: (text: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = ''
    const onData = (chunk: Buffer) => {
      text += chunk.toString()
      if (!done(text)) return
      socket.off('data', onData)
      resolve(text)
    }
    socket.on('data', onData)
    socket.once('error', reject)
    socket.once('close', () => resolve(text))
  })
}

export function connectTo(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket))
    socket.once('error', reject)
  })
}

/** The error code of a connection attempt to `port`, or `connected`. */
export async function tryToConnect(port: number): Promise<string> {
  try {
    ;(await connectTo(port)).destroy()
    return 'connected'
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? String(err)
  }
}

export interface SlowRequest {
  socket: Socket
  /** Sends the body and resolves with the whole answer, head and body, as text. */
  finish(): Promise<string>
}

/**
 * A login whose headers the server has parsed (it answered `100 Continue`) and whose body it is
 * still waiting for: a request in flight, for as long as the test wants.
 */
export async function startSlowLogin(port: number): Promise<SlowRequest> {
  const body = JSON.stringify({ username: TEST_USERNAME, password: TEST_PASSWORD })
  const socket = await connectTo(port)
  const continued = receive(socket, (text) => text.includes('100 Continue'))
  socket.write(
    'POST /token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`,
  )
  await continued
  return {
    socket,
    finish() {
      const answer = receive(socket, (text) => /\r\n\r\n[\s\S]*\}$/.test(text))
      socket.end(body)
      return answer
    },
  }
}

import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { TEST_PASSWORD, TEST_USERNAME } from './helpers.ts'
import { serviceEnv, spawnService } from './support/service.ts'

/** Everything received on `socket` until `done` says it is enough. */
function receive(socket: Socket, done: (text: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = ''
    const onData = (chunk: Buffer) => {
      text += chunk
      if (!done(text)) return
      socket.off('data', onData)
      resolve(text)
    }
    socket.on('data', onData)
    socket.once('error', reject)
    socket.once('close', () => resolve(text))
  })
}

function connectTo(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket))
    socket.once('error', reject)
  })
}

/**
 * A login whose headers the server has parsed (it answered `100 Continue`) and whose
 * body it is still waiting for: a request in flight, for as long as the test wants.
 */
async function startSlowLogin(port: number) {
  const body = JSON.stringify({ username: TEST_USERNAME, password: TEST_PASSWORD })
  const socket = await connectTo(port)
  const continued = receive(socket, (text) => text.includes('100 Continue'))
  socket.write(
    'POST /token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`,
  )
  await continued
  return {
    finish() {
      const answer = receive(socket, (text) => /\r\n\r\n[\s\S]*\}$/.test(text))
      socket.end(body)
      return answer
    },
    socket,
  }
}

/** The error code of a connection attempt to `port`, or `connected`. */
async function tryToConnect(port: number): Promise<string> {
  try {
    ;(await connectTo(port)).destroy()
    return 'connected'
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? String(err)
  }
}

describe('graceful shutdown', { timeout: 60_000 }, () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`on ${signal}, refuses new connections, finishes the request in flight, closes the store and exits 0`, async () => {
      const service = spawnService(serviceEnv('sqlite:books.db'))
      const port = await service.port()
      const login = await startSlowLogin(port)

      service.child.kill(signal)
      await service.waitForLine((line) => line.msg === 'shutting down: finishing requests in flight')
      assert.equal(await tryToConnect(port), 'ECONNREFUSED')
      assert.equal(service.child.exitCode, null, 'exited with a request in flight')

      const answer = await login.finish()
      assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/)
      assert.match(answer, /"message":"Token generated successfully"/)

      assert.deepEqual(await service.exited, { code: 0, signal: null })
      // SQLite removes the write-ahead log when the last connection closes cleanly.
      assert.equal(existsSync(join(service.dir, 'books.db-wal')), false)
      assert.ok(service.lines.some((line) => line.msg === 'stopped'))
    })
  }

  it('cuts requests still in flight when the grace period is over, and exits 1', async () => {
    const service = spawnService(serviceEnv('sqlite:books.db', { SHUTDOWN_GRACE_MS: '300' }))
    const port = await service.port()
    const login = await startSlowLogin(port)
    const closed = new Promise((resolve) => login.socket.once('close', resolve))

    service.child.kill('SIGTERM')
    assert.deepEqual(await service.exited, { code: 1, signal: null })
    await closed
    assert.ok(service.lines.some((line) => line.msg === 'grace period over: closing the connections still open'))
  })
})

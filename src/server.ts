import type { FastifyInstance } from 'fastify'
import { buildApp, type AppParts } from './app.ts'
import type { Config } from './config.ts'
import { PAGE_PATH } from './http/page.ts'

export const SHUTDOWN_SIGNALS = ['SIGINT', 'SIGTERM'] as const

/**
 * Runs the service until SIGTERM or SIGINT, then stops accepting connections, lets the
 * requests in flight finish within the grace period, closes the store and exits:
 * 0 when everything finished, 1 when connections had to be cut.
 */
export async function serve(config: Config, parts: AppParts = {}): Promise<FastifyInstance> {
  const app = await buildApp(config, parts)
  for (const notice of config.notices) app.log.warn(notice)

  let stopping = false
  const stop = (signal: NodeJS.Signals) => {
    // A terminal's Ctrl-C reaches every process of a cluster and the primary forwards it too.
    if (stopping) return
    stopping = true
    app.log.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down: finishing requests in flight')
    let cut = false
    const grace = setTimeout(() => {
      cut = true
      app.log.warn('grace period over: closing the connections still open')
      app.server.closeAllConnections()
    }, config.shutdownGraceMs)
    app.close().then(
      () => {
        clearTimeout(grace)
        app.log.info('stopped')
        process.exit(cut ? 1 : 0)
      },
      (err: unknown) => {
        app.log.error({ err }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  for (const signal of SHUTDOWN_SIGNALS) process.on(signal, stop)

  const address = await app.listen({ port: config.port, host: config.host })
  app.log.info(`catalogue page at ${new URL(PAGE_PATH, address)}`)
  return app
}

import type { FastifyInstance } from 'fastify'
import { pino } from 'pino'
import { buildApp, type AppParts } from './app.ts'
import { isLoopbackHost, type Config } from './config.ts'
import { PAGE_PATH } from './http/page/page.ts'
import { drain, Lifecycle } from './lifecycle.ts'
import { loggerOptions } from './observability/logger.ts'

/**
 * Runs the service until SIGTERM or SIGINT, then drains it (see `drain`) and exits: 0 when every
 * request finished, 1 when connections had to be cut. A signal that arrives while the store is
 * being opened and migrated lets that finish, so no migration stops half-way, and then exits 0
 * without listening; if start-up takes longer than the grace period, it exits 1.
 */
export async function serve(config: Config, parts: AppParts = {}, lifecycle: Lifecycle = new Lifecycle(config)): Promise<FastifyInstance> {
  lifecycle.handleSignals()
  let started = false
  void lifecycle.stopRequested.then(async (signal) => {
    if (started) return
    // The service's own logger comes with the application, which is not built yet.
    const log = pino(loggerOptions({ level: config.logLevel, production: config.production }))
    log.info({ signal, graceMs: config.shutdownGraceMs }, 'stop requested during start-up: stopping once the store is ready')
    await lifecycle.clock.wait(config.shutdownGraceMs)
    if (started) return
    log.error('start-up did not finish within the grace period: exiting')
    process.exit(1)
  })

  const app = await buildApp(config, { ...parts, lifecycle })
  started = true
  if (lifecycle.draining) {
    app.log.info({ signal: await lifecycle.stopRequested }, 'stopped during start-up, before listening')
    await app.close()
    process.exit(0)
  }
  for (const notice of config.notices) app.log.warn(notice)
  void drain(app, lifecycle).then((code) => process.exit(code))

  const address = await app.listen({ port: config.port, host: config.host })
  app.log.info(
    isLoopbackHost(config.host)
      ? `listening on ${config.host} only: other machines cannot connect (HOST=0.0.0.0 lets them)`
      : `listening on ${config.host}: other machines can connect`,
  )
  app.log.info(`catalogue page at ${new URL(PAGE_PATH, address).href}`)
  return app
}

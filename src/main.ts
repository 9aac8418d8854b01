import { buildApp } from './app.ts'
import { ConfigError, loadConfig, readEnv, type Config } from './config.ts'
import { StoreUnavailableError } from './store/store.ts'

let config: Config
try {
  config = loadConfig(readEnv())
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  console.error(`Configuration error: ${err.message}`)
  process.exit(1)
}

let app: Awaited<ReturnType<typeof buildApp>>
try {
  app = await buildApp(config)
} catch (err) {
  if (!(err instanceof StoreUnavailableError)) throw err
  console.error(`Store unavailable at start-up: ${(err.cause as Error).message}`)
  process.exit(1)
}
for (const notice of config.notices) app.log.warn(notice)

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    app.log.info({ signal }, 'shutting down')
    app.close().then(
      () => process.exit(0),
      (err: unknown) => {
        app.log.error({ err }, 'shutdown failed')
        process.exit(1)
      },
    )
  })
}

await app.listen({ port: config.port, host: config.host })
